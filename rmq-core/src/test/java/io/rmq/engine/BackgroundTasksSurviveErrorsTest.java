package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.TopicHistory;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.TopicType;
import io.rmq.core.internal.BackgroundTask;
import io.rmq.instances.InstanceSettings;
import io.rmq.micrometer.RmqQueueSizeMeters;
import io.rmq.observe.internal.HistoryFlusher;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.WakeUpSubscriber;
import io.rmq.test.LateRedisServer;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static io.rmq.internal.RmqInternals.wakeUps;
import static org.awaitility.Awaitility.await;

/**
 * Every background task of the engine keeps its schedule after a run that throws an {@link Error} (what their own
 * {@code catch (RuntimeException)} let through, and what silently ended a {@code ScheduledExecutorService} task): the
 * failure is logged once at ERROR with the task's name, and the next run does the task's work. The container watchdog
 * has its own test ({@code ContainerWatchdogTest}), the schedule top-up its own in the Spring module. One topology is
 * enough: the guard is the same on both.
 */
@ParameterizedClass
@EnumSource(value = RedisTopology.class, names = "STANDALONE")
class BackgroundTasksSurviveErrorsTest extends EngineTestSupport {

    private String task;

    BackgroundTasksSurviveErrorsTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void dropUntakenInjection() {
        if (task != null) {
            BackgroundTask.clearInjection(task);
        }
    }

    /** Makes the next run of {@code name} throw an Error and captures the guard's line about it. */
    private LogCapture failNextRun(String name) {
        task = name;
        LogCapture log = LogCapture.of(BackgroundTask.class.getName()).expecting("'" + name + "'");
        BackgroundTask.failNextRun(name, new AssertionError("thrown on purpose by the test"));
        return log;
    }

    private static void assertLoggedOnceWithTheTasksName(LogCapture log, String name) {
        assertThat(log.events()).filteredOn(e -> e.getLevel() == Level.ERROR).singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage()).isEqualTo(
                        "RMQ background task '" + name + "' failed; it keeps its schedule and runs again"))
                .extracting(ILoggingEvent::getThrowableProxy).satisfies(t -> assertThat(t.getMessage())
                        .isEqualTo("thrown on purpose by the test"));
    }

    @Test
    void theInstanceHeartbeatBeatsAgainAfterAnError() {
        try (LogCapture log = failNextRun("instance heartbeat")) {
            // the first beat (run by start) throws: the instance is not listed until the next one
            rmq.instances().start(new InstanceSettings("guarded", Duration.ofMillis(200)));
            assertThat(BackgroundTask.injectionPending("instance heartbeat")).isFalse();
            await().atMost(Duration.ofSeconds(20)).until(() -> rmq.instances().list().stream()
                    .anyMatch(i -> i.application().equals("guarded")));
            assertLoggedOnceWithTheTasksName(log, "instance heartbeat");
            assertThat(log.events()).anySatisfy(e -> assertThat(e.getFormattedMessage())
                    .isEqualTo("RMQ background task 'instance heartbeat' runs again"));
        }
    }

    @Test
    void theHistoryFlushWritesAgainAfterAnError() {
        try (Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withHistoryFlushInterval(Duration.ofMillis(200)));
                LogCapture log = failNextRun(HistoryFlusher.TASK)) {
            engine.defineTopic("guarded-history", TopicType.FIXED_TIME, 2);
            engine.producer().send(OutgoingMessage.fixedTime("guarded-history", "counted", Instant.now()));
            await().atMost(Duration.ofSeconds(20)).until(() -> sent(engine.admin().history("guarded-history",
                    TopicHistory.Resolution.MINUTE)) == 1);
            assertThat(BackgroundTask.injectionPending(HistoryFlusher.TASK)).isFalse();
            assertLoggedOnceWithTheTasksName(log, HistoryFlusher.TASK);
        }
    }

    private static long sent(TopicHistory history) {
        return history.points().stream().mapToLong(TopicHistory.Point::sent).sum();
    }

    @Test
    void theQueueSizeGaugesReadRedisAgainAfterAnError() {
        rmq.defineTopic("guarded-sizes", TopicType.FIXED_TIME, 2);
        for (int i = 0; i < 3; i++) {
            rmq.producer().send(OutgoingMessage.fixedTime("guarded-sizes", "waiting-" + i, Instant.now()));
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LogCapture log = failNextRun("queue-size gauges");
                RmqQueueSizeMeters sizes = new RmqQueueSizeMeters(rmq, Duration.ofMillis(200), List::of)) {
            sizes.bindTo(registry); // its first round, at once, throws
            await().atMost(Duration.ofSeconds(20)).until(() -> registry.find("rmq.messages")
                    .tag("messaging.destination.name", "guarded-sizes").tag("rmq.state", "waiting").gauge() != null
                    && registry.get("rmq.messages").tag("messaging.destination.name", "guarded-sizes")
                            .tag("rmq.state", "waiting").gauge().value() == 3);
            assertThat(BackgroundTask.injectionPending("queue-size gauges")).isFalse();
            assertLoggedOnceWithTheTasksName(log, "queue-size gauges");
        }
    }

    @Test
    void theWakeUpCheckStillOpensTheSubscriptionAfterAnError() throws Exception {
        // an engine started while Redis is down: only a check that still runs opens the subscription once it is up
        int port = LateRedisServer.freePort();
        RedisClient lazyClient = RedisClient.create("redis://127.0.0.1:" + port);
        try (LogCapture log = failNextRun(WakeUpSubscriber.CHECK_TASK);
                LogCapture outage = LogCapture.of("io.rmq", "io.lettuce.core")
                        .expecting("cannot reach Redis", "failed to poll", "Cannot reconnect");
                Rmq lazy = Rmq.connectLazily(lazyClient, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
            lazy.defineTopic("guarded-wake", TopicType.FIXED_TIME, 2);
            ListenerContainer container = lazy.container("guarded-wake", FAST, String.class,
                    (String body, Delivery delivery) -> { }, ContainerOptions.of("guarded-wake", 1));
            container.start(); // registers with the subscriber, which starts its check (every second)
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> !BackgroundTask.injectionPending(WakeUpSubscriber.CHECK_TASK));
            assertThat(wakeUps(lazy).isSubscribed()).isFalse();
            try (LateRedisServer redis = LateRedisServer.startOn(port)) {
                await().atMost(Duration.ofSeconds(30)).until(() -> wakeUps(lazy).isSubscribed());
                container.stop();
            }
            assertLoggedOnceWithTheTasksName(log, WakeUpSubscriber.CHECK_TASK);
        }
        finally {
            lazyClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void theConnectLoopConnectsAfterAnError() {
        RedisClient lazyClient = RedisClient.create(topology.uris().get(0));
        try (LogCapture log = failNextRun("connect loop");
                Rmq lazy = Rmq.connectLazily(lazyClient, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
            // its first attempt throws; without the guard the thread ended and the engine never connected
            await().atMost(Duration.ofSeconds(20)).until(lazy::isConnected);
            lazy.defineTopic("guarded-connect", TopicType.FIXED_TIME, 2);
            lazy.producer().send(OutgoingMessage.fixedTime("guarded-connect", "after", Instant.now()));
            assertThat(rmq.admin().stats("guarded-connect").waiting()).isEqualTo(1);
            assertLoggedOnceWithTheTasksName(log, "connect loop");
        }
        finally {
            lazyClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
