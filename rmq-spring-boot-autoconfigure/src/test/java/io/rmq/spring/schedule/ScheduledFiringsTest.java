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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.annotation.RmqScheduled;
import io.rmq.spring.dashboard.RmqDashboard;
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
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
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
        List<Instant> late = missedWhileDown("fire-once");
        assertThat(late).as("the latest missed firing runs once, late").hasSize(1);
    }

    @Test
    void skipDropsTheFiringsMissedWhileEveryInstanceWasDown() throws Exception {
        List<Instant> late = missedWhileDown("skip");
        assertThat(late).as("missed firings are dropped").isEmpty();
    }

    /**
     * Every 4 s with a misfire threshold of 500 ms: one instance runs a firing and stops; two firings pass (the second
     * more than the threshold ago) before an instance starts again. Returns the firings run after the restart whose
     * time is before the restart was complete: those missed while no instance ran.
     */
    private List<Instant> missedWhileDown(String policy) throws Exception {
        String prefix = "sched-misfire-" + UUID.randomUUID();
        String[] settings = {"test.rate=4s", "test.misfire=" + policy, "test.threshold=500ms"};
        Instant lastBefore;
        try (ConfigurableApplicationContext first = start(RedisTopology.STANDALONE, prefix, "first", settings)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> !TICKS.isEmpty());
            lastBefore = TICKS.peek().firing();
        }
        assertThat(TICKS).hasSize(1);
        // the scenario: no instance while two firings fall due (not an assertion)
        long downUntil = lastBefore.toEpochMilli() + 2 * 4000 + 600;
        Thread.sleep(Math.max(0, downUntil - System.currentTimeMillis()));
        try (ConfigurableApplicationContext second = start(RedisTopology.STANDALONE, prefix, "second", settings)) {
            Instant up = Instant.now();
            await().atMost(Duration.ofSeconds(20)).until(() -> TICKS.stream().anyMatch(r -> r.firing().isAfter(up)));
            MeterRegistry meters = second.getBean(MeterRegistry.class);
            double expectedMisfires = policy.equals("skip") ? 2 : 1;
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(meters.get("rmq.schedule.misfires")
                    .tag("schedule", "tick").counter().count()).isGreaterThanOrEqualTo(expectedMisfires));
            List<Instant> all = firings(TICKS);
            assertThat(all).doesNotHaveDuplicates();
            return all.stream().filter(t -> t.isAfter(lastBefore) && !t.isAfter(up)).toList();
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
            RmqSchedules.ScheduleView tick = (RmqSchedules.ScheduleView) endpoint.one("schedules", "tick");
            assertThat(tick.paused()).isFalse();
            assertThat(tick.definition()).startsWith("fixed rate PT1S; misfire fire-once");
            assertThat(tick.outcome()).isEqualTo("success");
            assertThat(tick.lastRun()).isAfter(resumedAt);
            assertThat(tick.nextFiring()).isAfter(tick.lastFiring());
            assertThat(tick.error()).isNull();

            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                RmqSchedules.ScheduleView boom = (RmqSchedules.ScheduleView) endpoint.one("schedules", "boom");
                assertThat(boom.outcome()).isEqualTo("failure");
                assertThat(boom.error()).isEqualTo("java.lang.IllegalStateException: the report service is down");
            });
            assertThat(log.warnings()).isNotEmpty().allSatisfy(line -> assertThat(line)
                    .contains("RMQ schedule 'boom' failed at its firing of"));
            assertThat(one.getBean(MeterRegistry.class).find("rmq.schedule.firings").tag("schedule", "boom")
                    .tag("outcome", "failure").counter().count()
                    + two.getBean(MeterRegistry.class).find("rmq.schedule.firings").tag("schedule", "boom")
                    .tag("outcome", "failure").counter().count()).isGreaterThanOrEqualTo(1);
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

    private static double skipped(ConfigurableApplicationContext context, String reason) {
        var counter = context.getBean(MeterRegistry.class).find("rmq.schedule.skipped").tag("schedule", "tick")
                .tag("reason", reason).counter();
        return counter == null ? 0 : counter.count();
    }
}
