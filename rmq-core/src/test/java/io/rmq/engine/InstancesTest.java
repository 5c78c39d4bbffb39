package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.Rmq;
import io.rmq.admin.InFlightMessage;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.instances.InstanceSettings;
import io.rmq.instances.RmqInstance;
import io.rmq.instances.RmqInstances;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The instance registry and the cluster-wide pause, with two engines in one JVM (each its own registry entry, as two
 * processes would have; the separate-process test is {@code ClusterPauseProcessesTest}): both listed with their
 * listeners and busy handlers, a pause stored in Redis honoured by both within the bound (one heartbeat) while the
 * lease of a handler running across it is kept, the own pause independent of it, and a closed engine leaving.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class InstancesTest extends EngineTestSupport {

    private static final Duration BEAT = Duration.ofMillis(300);
    /** A lease shorter than the blocked handler below: it must be extended across the pause. */
    private static final ConsumerSettings SHORT_LEASE = new ConsumerSettings(20, Duration.ofMillis(600),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));

    private final List<ListenerContainer> containers = new ArrayList<>();

    InstancesTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void stopContainers() {
        containers.forEach(ListenerContainer::stop);
    }

    private ListenerContainer listen(Rmq engine, String topic, String id, MessageHandler<String> handler) {
        ListenerContainer container = engine.container(topic, SHORT_LEASE, String.class, handler,
                new ContainerOptions(id, 2, Duration.ofMillis(200), Duration.ofSeconds(5), null)
                        .withCommandTimeout(Duration.ofSeconds(2)));
        containers.add(container);
        container.start();
        return container;
    }

    private void sendDue(String topic, String prefix, int count) {
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(OutgoingMessage.fixedTime(topic, prefix + "-" + i, Instant.now().minusSeconds(1)));
        }
        rmq.producer().sendBatch(batch);
    }

    @Test
    void twoEnginesAreListedAPauseInRedisStopsBothAndAResumeLetsThemTakeEverything() throws Exception {
        String topic = "fleet";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 4);
        Rmq other = newEngine();
        rmq.instances().start(new InstanceSettings("app-a", BEAT));
        other.instances().start(new InstanceSettings("app-b", BEAT));
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        AtomicInteger handled = new AtomicInteger();
        CountDownLatch blockedStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MessageHandler<String> handler = (String body, Delivery d) -> {
            attempts.merge(body, 1, Integer::sum);
            if (body.equals("blocked")) {
                blockedStarted.countDown();
                release.await(60, TimeUnit.SECONDS);
            }
            handled.incrementAndGet();
        };
        try (LogCapture log = LogCapture.rmq()) {
            ListenerContainer a = listen(rmq, topic, "fleet-listener", handler);
            ListenerContainer b = listen(other, topic, "fleet-listener", handler);

            rmq.producer().send(OutgoingMessage.fixedTime(topic, "blocked", Instant.now().minusSeconds(1)));
            assertThat(blockedStarted.await(30, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> rmq.instances().list().stream()
                    .anyMatch(i -> i.busy() == 1));
            List<RmqInstance> listed = rmq.instances().list();
            assertThat(listed).extracting(RmqInstance::application).containsExactlyInAnyOrder("app-a", "app-b");
            RmqInstance busy = listed.stream().filter(i -> i.busy() == 1).findFirst().orElseThrow();
            assertThat(busy.version()).isNotBlank();
            assertThat(busy.pid()).isEqualTo(ProcessHandle.current().pid());
            assertThat(busy.listeners()).singleElement().satisfies(l -> {
                assertThat(l.id()).isEqualTo("fleet-listener");
                assertThat(l.state()).isEqualTo("running");
                assertThat(l.busy()).isEqualTo(1);
                assertThat(l.pausedHere()).isFalse();
                assertThat(l.pausedCluster()).isFalse();
            });
            assertThat(busy.handling()).singleElement().satisfies(h -> {
                assertThat(h.topic()).isEqualTo(topic);
                assertThat(h.listener()).isEqualTo("fleet-listener");
            });
            // the in-flight view finds the blocked message and its handler's instance by the member's digest
            List<InFlightMessage> inFlight = rmq.admin().inFlightMessages(topic, 0, 10);
            assertThat(inFlight).singleElement().satisfies(m -> {
                assertThat(new String(m.body())).isEqualTo("blocked");
                assertThat(m.attempt()).isEqualTo(1);
                assertThat(m.leaseDeadlineMillis()).isNotNull();
                assertThat(RmqInstances.digest(m.member())).isEqualTo(busy.handling().get(0).digest());
            });

            // paused cluster-wide through one engine: the other learns it with its next beat
            assertThat(rmq.instances().pauseTopic(topic, "test")).isTrue();
            assertThat(rmq.instances().pauseTopic(topic, "test")).as("already paused").isFalse();
            assertThat(rmq.instances().pauses()).singleElement().satisfies(p -> {
                assertThat(p.kind()).isEqualTo("topic");
                assertThat(p.name()).isEqualTo(topic);
                assertThat(p.by()).isEqualTo("test");
            });
            assertThat(a.isPausedCluster()).as("the engine that paused applies it at once").isTrue();
            await().atMost(BEAT.multipliedBy(2).plusSeconds(3)).until(b::isPausedCluster);
            assertThat(a.isPausedHere()).isFalse();
            sendDue(topic, "while-paused", 20);
            // the blocked handler outlives its lease several times over, across the pause
            Thread.sleep(2000);
            assertThat(handled.get()).as("handled while paused cluster-wide").isZero();
            assertThat(rmq.admin().stats(topic).waiting()).isEqualTo(20);
            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> handled.get() == 1
                    && rmq.admin().stats(topic).inFlight() == 0);
            assertThat(attempts.get("blocked")).as("its lease was kept: not redelivered").isEqualTo(1);
            await().atMost(Duration.ofSeconds(5)).until(() -> rmq.instances().list().stream().allMatch(i ->
                    i.listeners().stream().allMatch(l -> l.pausedCluster() && l.state().equals("paused"))));

            // the own pause is independent: resuming cluster-wide leaves a paused-here listener paused
            a.pause();
            assertThat(rmq.instances().resumeTopic(topic)).isTrue();
            assertThat(a.isPausedCluster()).isFalse();
            assertThat(a.isPaused()).as("still paused here").isTrue();
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.get() == 21);
            assertThat(attempts.values()).allMatch(n -> n == 1);
            assertThat(a.isPaused()).isTrue();
            a.resume();
            assertThat(a.isPaused()).isFalse();
            assertThat(rmq.instances().pauses()).isEmpty();
            assertThat(a.stallsRepaired() + b.stallsRepaired()).isZero();
        }
        finally {
            release.countDown();
        }

        // a listener paused by id; then a closed engine leaves the list at once
        String otherId = other.instances().id();
        rmq.instances().pauseListener("fleet-listener", "test");
        await().atMost(BEAT.multipliedBy(2).plusSeconds(3)).until(() -> containers.stream()
                .allMatch(ListenerContainer::isPausedCluster));
        rmq.instances().resumeListener("fleet-listener");
        other.close();
        assertThat(rmq.instances().list()).extracting(RmqInstance::id).doesNotContain(otherId)
                .containsExactly(rmq.instances().id());
    }

    @Test
    void aDeadInstanceAgesOutAfterThreeMissedBeatsAndBadNamesAreRefused() {
        Rmq other = newEngine();
        other.instances().start(new InstanceSettings("gone", BEAT));
        String id = other.instances().id();
        await().atMost(Duration.ofSeconds(10)).until(() -> rmq.instances().get(id) != null);
        // stop beating without leaving, as a process that dies does
        killBeatsOf(other);
        await().atMost(BEAT.multipliedBy(RmqInstances.MISSED_BEATS).plusSeconds(5))
                .until(() -> rmq.instances().get(id) == null);
        assertThatThrownBy(() -> rmq.instances().get("no/such")).isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("instance");
        assertThat(rmq.instances().get("no-such")).isNull();
    }

    /** Stops an engine's heartbeat thread without the leave a close sends. */
    private static void killBeatsOf(Rmq engine) {
        try {
            var field = io.rmq.instances.internal.DefaultRmqInstances.class.getDeclaredField("beats");
            field.setAccessible(true);
            ((java.util.concurrent.ExecutorService) field.get(engine.instances())).shutdownNow();
            field.set(engine.instances(), null);
        }
        catch (ReflectiveOperationException ex) {
            throw new AssertionError(ex);
        }
    }

    @Test
    void orderlyInFlightHasNoLeaseDeadline() throws Exception {
        String topic = "fleet-orderly";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 2);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ListenerContainer container = rmq.container(topic, SHORT_LEASE, String.class, (String body, Delivery d) -> {
            started.countDown();
            release.await(30, TimeUnit.SECONDS);
        }, new ContainerOptions("fleet-o", 1, Duration.ofMillis(200), Duration.ofSeconds(5), null)
                .withMode(ConsumeMode.ORDERLY));
        containers.add(container);
        container.start();
        try {
            rmq.producer().send(OutgoingMessage.fixedTime(topic, "o", Instant.now().minusSeconds(1)));
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(rmq.admin().inFlightMessages(topic, 0, 10)).singleElement().satisfies(m -> {
                assertThat(m.mode()).isEqualTo(ConsumeMode.ORDERLY);
                assertThat(m.leaseDeadlineMillis()).isNull();
            });
        }
        finally {
            release.countDown();
        }
    }

    /**
     * A pause stored by another engine stops this one's listener at its next beat; the report that says "paused" must
     * follow at once (a second beat), not one heartbeat later, and likewise "running" after the resume.
     */
    @Test
    void aListenerPausedOrResumedEverywhereIsReportedSoAtOnceNotOneHeartbeatLater() {
        String topic = "fleet-report";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 2);
        Duration slowBeat = Duration.ofSeconds(6);
        rmq.instances().start(new InstanceSettings("app-a", slowBeat));
        Rmq other = newEngine(); // changes the pauses without beating itself
        ListenerContainer a = listen(rmq, topic, "report-listener", (String body, Delivery d) -> { });
        rmq.instances().reportSoon();
        await().atMost(Duration.ofSeconds(10)).until(() -> stateOf(a).equals("running"));

        assertThat(other.instances().pauseTopic(topic, "test")).isTrue();
        await().atMost(slowBeat.multipliedBy(3)).until(a::isPausedCluster);
        // the report follows the change well within half a heartbeat (before: up to one heartbeat later)
        await().atMost(slowBeat.dividedBy(2)).until(() -> stateOf(a).equals("paused"));
        assertThat(listed(rmq).listeners()).singleElement().satisfies(l -> assertThat(l.pausedCluster()).isTrue());

        assertThat(other.instances().resumeTopic(topic)).isTrue();
        await().atMost(slowBeat.multipliedBy(3)).until(() -> !a.isPausedCluster());
        await().atMost(slowBeat.dividedBy(2)).until(() -> stateOf(a).equals("running"));

        // the report's age is measured on Redis's clock, from its heartbeat to the read
        RmqInstance read = listed(rmq);
        assertThat(read.readAt()).isAfterOrEqualTo(read.lastSeenAt());
        assertThat(read.reportAge()).isLessThanOrEqualTo(slowBeat.multipliedBy(RmqInstances.MISSED_BEATS));
    }

    /** A pause here (the instance's own) asks for a report at once too. */
    @Test
    void aPauseHereIsReportedAtOnceWhenTheCallerAsksForAReport() {
        String topic = "fleet-report-here";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 2);
        Duration slowBeat = Duration.ofSeconds(30);
        rmq.instances().start(new InstanceSettings("app-a", slowBeat));
        ListenerContainer a = listen(rmq, topic, "report-here", (String body, Delivery d) -> { });
        rmq.instances().reportSoon();
        await().atMost(Duration.ofSeconds(10)).until(() -> stateOf(a).equals("running"));
        a.pause();
        rmq.instances().reportSoon();
        await().atMost(Duration.ofSeconds(10)).until(() -> stateOf(a).equals("paused"));
        assertThat(listed(rmq).listeners()).singleElement().satisfies(l -> assertThat(l.pausedHere()).isTrue());
    }

    /**
     * Every message in flight in a busy CONCURRENT container is in its instance's report: the one in the handler as
     * handling, the ones fetched and waiting (in its buffer, or taken by the handler thread for its next calls) as
     * prefetched; none is left unnamed.
     */
    @Test
    void theReportNamesEveryMessageTheInstanceHoldsHandledOrPrefetched() throws Exception {
        String topic = "fleet-prefetch";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 2);
        rmq.instances().start(new InstanceSettings("app-a", BEAT));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ListenerContainer container = rmq.container(topic, SHORT_LEASE, String.class, (String body, Delivery d) -> {
            started.countDown();
            release.await(60, TimeUnit.SECONDS);
        }, new ContainerOptions("prefetcher", 1, Duration.ofMillis(200), Duration.ofSeconds(5), null)
                .withCommandTimeout(Duration.ofSeconds(2)));
        containers.add(container);
        // all five waiting before the first pop: the handler thread takes some of them for its next calls at once
        // (the case a report once missed: taken by the thread, no longer in the buffer, not yet in a handler)
        sendDue(topic, "held", 5);
        container.start();
        try {
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                List<String> inPrepare = rmq.admin().inFlightMessages(topic, 0, 20).stream()
                        .map(m -> RmqInstances.digest(m.member())).sorted().toList();
                RmqInstance report = listed(rmq);
                List<String> reported = new ArrayList<>();
                report.handling().forEach(h -> reported.add(h.digest()));
                report.prefetched().forEach(p -> reported.add(p.digest()));
                assertThat(inPrepare).hasSize(5);
                assertThat(reported).containsExactlyInAnyOrderElementsOf(inPrepare);
                assertThat(report.handling()).hasSize(1);
                assertThat(report.prefetched()).hasSize(4).allSatisfy(p -> {
                    assertThat(p.topic()).isEqualTo(topic);
                    assertThat(p.listener()).isEqualTo("prefetcher");
                });
            });
        }
        finally {
            release.countDown();
        }
    }

    private static RmqInstance listed(Rmq engine) {
        String id = engine.instances().id();
        return engine.instances().list().stream().filter(i -> i.id().equals(id)).findFirst().orElseThrow();
    }

    private String stateOf(ListenerContainer container) {
        return listed(rmq).listeners().stream().filter(l -> l.id().equals(container.id())).findFirst()
                .map(RmqInstance.Listener::state).orElse("absent");
    }
}
