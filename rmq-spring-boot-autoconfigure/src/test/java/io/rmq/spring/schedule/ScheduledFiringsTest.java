package io.rmq.spring.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.annotation.RmqScheduled;
import io.rmq.spring.dashboard.RmqDashboard;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.operations.RmqEndpoint;
import io.rmq.spring.operations.RmqOperations;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.handler.annotation.Header;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Schedules on real Redis with several application contexts in one JVM acting as instances: each firing runs once
 * whichever instances queue it, missed firings follow the misfire policy, pause and resume act cluster-wide, and the
 * endpoint shows the outcome.
 */
@ExtendWith(RedisServersExtension.class)
class ScheduledFiringsTest {

    /** One run of a firing: which instance, which firing, when. */
    record Run(String instance, Instant firing, Instant at) {
    }

    static final Queue<Run> TICKS = new ConcurrentLinkedQueue<>();
    static final Queue<String> PINGS = new ConcurrentLinkedQueue<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        Ticks ticks(@Value("${test.instance}") String instance) {
            return new Ticks(instance);
        }

        @Bean
        Pings pings() {
            return new Pings();
        }

        @Bean
        @ConditionalOnBooleanProperty("test.failing")
        Failing failing() {
            return new Failing();
        }

        @Bean
        @ConditionalOnBooleanProperty("test.gate")
        Gate gate() {
            return new Gate();
        }

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    /**
     * Holds the context's start before the schedules start (a phase before the scheduler's) until the test opens it:
     * the test then knows, within milliseconds, when the instance registers with Redis, however long the rest of the
     * start took.
     */
    static class Gate implements SmartLifecycle {

        static volatile CountDownLatch reached = new CountDownLatch(1);
        static volatile CountDownLatch open = new CountDownLatch(1);
        private volatile boolean running;

        @Override
        public void start() {
            reached.countDown();
            try {
                if (!open.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test did not open the gate within 60 s");
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return RmqListenerEndpointRegistry.PHASE;
        }
    }

    static class Ticks {

        private final String instance;

        Ticks(String instance) {
            this.instance = instance;
        }

        @RmqScheduled(name = "tick", fixedRate = "${test.rate}", misfire = "${test.misfire:fire-once}",
                misfireThreshold = "${test.threshold:30s}")
        void tick(Instant firing) {
            TICKS.add(new Run(instance, firing, Instant.now()));
        }
    }

    static class Pings {

        @RmqListener(topic = "pings")
        void ping(String body, @Header(RmqHeaders.ID) String id) {
            PINGS.add(id);
        }
    }

    /** Fails once {@link #FAILING} is set: after the test captures the log, which each context start resets. */
    static class Failing {

        @RmqScheduled(name = "boom", fixedRate = "1s")
        void fail() {
            if (FAILING) {
                throw new IllegalStateException("the report service is down");
            }
        }
    }

    static volatile boolean FAILING;

    @BeforeEach
    void clear() {
        TICKS.clear();
        PINGS.clear();
    }

    private static ConfigurableApplicationContext start(RedisTopology topology, String prefix, String instance,
            String... more) {
        List<String> properties = new ArrayList<>(List.of(topology.propertyValues(prefix)));
        properties.addAll(List.of("test.instance=" + instance, "test.rate=1s", "rmq.topics.pings.type=FIXED_TIME",
                "rmq.topics.pings.slot-amount=2", "rmq.shutdown-timeout=5s"));
        properties.addAll(List.of(more));
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties(properties.toArray(String[]::new)).run();
    }

    private static List<Instant> firings(Collection<Run> runs) {
        return runs.stream().map(Run::firing).sorted().toList();
    }

    private static void assertContiguous(List<Instant> sorted, Duration rate, String what) {
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(Duration.between(sorted.get(i - 1), sorted.get(i))).as(what + " " + sorted).isEqualTo(rate);
        }
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void threeInstancesRunEachFiringExactlyOnce(RedisTopology topology) {
        String prefix = "sched-3-" + UUID.randomUUID();
        String[] ping = {"rmq.schedules.ping.fixed-rate=1s", "rmq.schedules.ping.topic=pings",
                "rmq.schedules.ping.payload=ping"};
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        try {
            for (String name : List.of("a", "b", "c")) {
                instances.add(start(topology, prefix, name, ping));
            }
            Instant allUp = Instant.now();
            await().atMost(Duration.ofSeconds(60)).until(() -> TICKS.stream()
                    .filter(r -> r.firing().isAfter(allUp)).count() >= 12 && PINGS.size() >= 12);
        }
        finally {
            instances.forEach(ConfigurableApplicationContext::close);
        }
        List<Run> runs = List.copyOf(TICKS);
        List<Instant> ticks = firings(runs);
        assertThat(ticks).as("no firing runs twice: %s", runs).doesNotHaveDuplicates();
        assertContiguous(ticks, Duration.ofSeconds(1), "no firing is missed between the first and the last");
        assertThat(ticks).allSatisfy(t -> assertThat(t.toEpochMilli() % 1000).isZero());

        List<String> pings = List.copyOf(PINGS);
        assertThat(pings).as("each firing of the entry sends one message").doesNotHaveDuplicates()
                .allSatisfy(id -> assertThat(id).startsWith("ping@"));
        assertContiguous(pings.stream().map(id -> Instant.parse(id.substring(5))).sorted().toList(),
                Duration.ofSeconds(1), "one message per firing of the entry");
        Map<String, Long> perInstance = runs.stream().collect(Collectors.groupingBy(Run::instance,
                Collectors.counting()));
        assertThat(perInstance.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(runs.size());
    }

    @Test
    void fireOnceRunsOneMissedFiringLateAfterEveryInstanceWasDown() throws Exception {
        MissedWhileDown run = missedWhileDown("fire-once");
        assertThat(run.ranWhileDown()).as("of the firings missed while no instance ran (after %s, up to %s), only the"
                + " latest runs, once, late", run.lastBefore(), run.latestMissed()).containsExactly(run.latestMissed());
        Run late = TICKS.stream().filter(r -> r.firing().equals(run.latestMissed())).findFirst().orElseThrow();
        assertThat(Duration.between(late.firing(), late.at())).as("it ran late: past the 500 ms threshold")
                .isGreaterThan(Duration.ofMillis(500));
    }

    @Test
    void skipDropsTheFiringsMissedWhileEveryInstanceWasDown() throws Exception {
        MissedWhileDown run = missedWhileDown("skip");
        assertThat(run.ranWhileDown()).as("missed firings (after %s, up to %s) are dropped", run.lastBefore(),
                run.latestMissed()).isEmpty();
    }

    /**
     * What {@link #missedWhileDown} saw: the last firing the first instance ran, the latest firing due when the second
     * one registered, and the firings run between the two (both included).
     */
    record MissedWhileDown(Instant lastBefore, Instant latestMissed, List<Instant> ranWhileDown) {
    }

    /**
     * Every 4 s with a misfire threshold of 500 ms: one instance runs a firing and stops; at least two firings pass
     * before another instance registers, 600 ms after the latest of them (so that one is late, past the threshold).
     * The second instance's start is held at a {@link Gate} before its schedules start, and the gate is opened at that
     * moment: however long the rest of the start takes on a busy machine, the late firing is the one the test
     * chose, and the next regular firing is 3.4 s away, so the two cannot be confused.
     */
    private MissedWhileDown missedWhileDown(String policy) throws Exception {
        String prefix = "sched-misfire-" + UUID.randomUUID();
        String[] settings = {"test.rate=4s", "test.misfire=" + policy, "test.threshold=500ms"};
        try (ConfigurableApplicationContext first = start(RedisTopology.STANDALONE, prefix, "first", settings)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> !TICKS.isEmpty());
        }
        // the latest firing taken before every instance was down (the first may have run a second one while closing)
        List<Instant> before = firings(TICKS);
        Instant lastBefore = before.get(before.size() - 1);
        Gate.reached = new CountDownLatch(1);
        Gate.open = new CountDownLatch(1);
        List<String> gated = new ArrayList<>(List.of(settings));
        gated.add("test.gate=true");
        CompletableFuture<ConfigurableApplicationContext> starting = CompletableFuture.supplyAsync(() ->
                start(RedisTopology.STANDALONE, prefix, "second", gated.toArray(String[]::new)));
        try {
            assertThat(Gate.reached.await(60, TimeUnit.SECONDS)).as("the second instance reached its gate").isTrue();
            // the scenario: no instance while two firings fall due, then 600 ms past the latest one (not an assertion);
            // the first firing time that leaves the full 600 ms to wait, should the gate be reached late
            long latestMissed = Math.max(lastBefore.toEpochMilli() + 2 * 4000,
                    Math.floorDiv(System.currentTimeMillis() - 600 + 3999, 4000) * 4000);
            Thread.sleep(Math.max(0, latestMissed + 600 - System.currentTimeMillis()));
            Gate.open.countDown();
            try (ConfigurableApplicationContext second = starting.get(60, TimeUnit.SECONDS)) {
                Instant latest = Instant.ofEpochMilli(latestMissed);
                await().atMost(Duration.ofSeconds(20)).until(() -> TICKS.stream()
                        .anyMatch(r -> r.firing().isAfter(latest)));
                MeterRegistry meters = second.getBean(MeterRegistry.class);
                double expectedMisfires = policy.equals("skip") ? 2 : 1;
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(meters
                        .get("rmq.schedule.misfires").tag("schedule", "tick").counter().count())
                        .isGreaterThanOrEqualTo(expectedMisfires));
                List<Instant> all = firings(TICKS);
                assertThat(all).doesNotHaveDuplicates();
                return new MissedWhileDown(lastBefore, latest, all.stream()
                        .filter(t -> t.isAfter(lastBefore) && !t.isAfter(latest)).toList());
            }
        }
        finally {
            Gate.open.countDown();
            starting.thenAccept(ConfigurableApplicationContext::close);
        }
    }

    @Test
    void pauseAndResumeActOnEveryInstanceAndTheEndpointShowsTheOutcome() {
        String prefix = "sched-pause-" + UUID.randomUUID();
        FAILING = false;
        try (ConfigurableApplicationContext one = start(RedisTopology.STANDALONE, prefix, "one", "test.failing=true");
                ConfigurableApplicationContext two = start(RedisTopology.STANDALONE, prefix, "two",
                        "test.failing=true");
                LogCapture log = LogCapture.of("io.rmq.spring.schedule").expecting("failed at its firing")) {
            FAILING = true;
            RmqEndpoint endpoint = new RmqEndpoint(one.getBean(RmqOperations.class), one.getBean(RmqSchedules.class));
            await().atMost(Duration.ofSeconds(20)).until(() -> TICKS.size() >= 2);

            RmqSchedules.ScheduleView paused = (RmqSchedules.ScheduleView) endpoint.act("schedules", "tick", "pause");
            Instant pausedAt = Instant.now();
            assertThat(paused.paused()).isTrue();
            assertThat(two.getBean(RmqSchedules.class).get("tick").paused()).as("paused cluster-wide").isTrue();
            await().atMost(Duration.ofSeconds(20)).until(() -> skipped(one, "paused") + skipped(two, "paused") >= 2);
            assertThat(TICKS).as("no firing after the pause runs").noneMatch(r -> r.firing().isAfter(pausedAt));

            endpoint.act("schedules", "tick", "resume");
            Instant resumedAt = Instant.now();
            await().atMost(Duration.ofSeconds(20)).until(() -> TICKS.stream()
                    .anyMatch(r -> r.firing().isAfter(resumedAt)));

            @SuppressWarnings("unchecked")
            List<RmqSchedules.ScheduleView> views = (List<RmqSchedules.ScheduleView>) endpoint.all("schedules");
            assertThat(views).extracting(RmqSchedules.ScheduleView::name).containsExactly("boom", "tick");
            // the method has run; its outcome is recorded once it has returned
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                RmqSchedules.ScheduleView tick = (RmqSchedules.ScheduleView) endpoint.one("schedules", "tick");
                assertThat(tick.paused()).isFalse();
                assertThat(tick.definition()).startsWith("fixed rate 1s; misfire fire-once after 30s;");
                assertThat(tick.outcome()).isEqualTo("success");
                assertThat(tick.lastRun()).isAfter(resumedAt);
                assertThat(tick.nextFiring()).isAfter(tick.lastFiring());
                assertThat(tick.error()).isNull();
            });

            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                RmqSchedules.ScheduleView boom = (RmqSchedules.ScheduleView) endpoint.one("schedules", "boom");
                assertThat(boom.outcome()).isEqualTo("failure");
                assertThat(boom.error()).isEqualTo("java.lang.IllegalStateException: the report service is down");
            });
            assertThat(log.warnings()).isNotEmpty().allSatisfy(line -> assertThat(line)
                    .contains("RMQ schedule 'boom' failed at its firing of"));
            // counted where each failing firing ran: on one instance or both (a counter appears with its first firing)
            assertThat(failures(one, "boom") + failures(two, "boom")).isGreaterThanOrEqualTo(1);
            assertThat(endpoint.one("schedules", "nothing")).isNull();

            RmqDashboard dashboard = new RmqDashboard(one.getBean(RmqOperations.class), "/rmq", false, null);
            dashboard.setSchedules(one.getBean(RmqSchedules.class));
            assertThat(dashboard.overview().schedules()).extracting(RmqSchedules.ScheduleView::name)
                    .containsExactly("boom", "tick");
            RmqDashboard.Reply pausedByPage = dashboard.post("schedules/boom/pause", "{}");
            assertThat(pausedByPage.status()).isEqualTo(200);
            assertThat(two.getBean(RmqSchedules.class).get("boom").paused()).isTrue();
            assertThat(dashboard.post("schedules/nothing/pause", "{}").status()).isEqualTo(404);
        }
    }

    private static double failures(ConfigurableApplicationContext context, String schedule) {
        var counter = context.getBean(MeterRegistry.class).find("rmq.schedule.firings").tag("schedule", schedule)
                .tag("outcome", "failure").counter();
        return counter == null ? 0 : counter.count();
    }

    private static double skipped(ConfigurableApplicationContext context, String reason) {
        var counter = context.getBean(MeterRegistry.class).find("rmq.schedule.skipped").tag("schedule", "tick")
                .tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }
}
