package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.TopicHistory;
import io.rmq.admin.TopicHistory.Resolution;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.RmqRedisHistory;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The history: what engines count (sent, handled, failed, dead per topic) ends up in Redis per minute and per hour,
 * engines add up, the stored hash stays bounded as time passes, and an engine that counted nothing writes nothing.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class HistoryTest extends EngineTestSupport {

    private static final Duration FLUSH = Duration.ofMillis(200);

    private final List<AutoCloseable> closing = new ArrayList<>();

    HistoryTest(RedisTopology topology) {
        super(topology);
    }

    /** An engine on the test's prefix that writes its history every 200 ms. */
    private Rmq counting() {
        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix).withHistoryFlushInterval(FLUSH));
        closing.add(engine);
        return engine;
    }

    @AfterEach
    void closeCounting() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    @Test
    void sendsHandlesFailuresAndDeathsEndUpInTheMinuteAndHourCounts() {
        Rmq engine = counting();
        engine.defineTopic("hist", TopicType.FIXED_TIME, 4);
        for (int i = 0; i < 6; i++) {
            engine.producer().send(OutgoingMessage.fixedTime("hist", "ok-" + i, Instant.now()));
        }
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            batch.add(OutgoingMessage.fixedTime("hist", "ok-b" + i, Instant.now()));
        }
        batch.add(OutgoingMessage.fixedTime("hist", "bad-0", Instant.now()));
        batch.add(OutgoingMessage.fixedTime("hist", "bad-1", Instant.now()));
        engine.producer().sendBatch(batch);
        // one retry, then dead: each bad message fails twice
        ConsumerSettings settings = new ConsumerSettings(50, Duration.ofSeconds(5),
                new RetryPolicy(1, BackoffPolicy.fixed(Duration.ofMillis(50))));
        ListenerContainer container = engine.container("hist", settings, String.class, (String body, Delivery d) -> {
            if (body.startsWith("bad")) {
                throw new IllegalStateException("fails on purpose");
            }
        }, ContainerOptions.of("hist", 2));
        try (LogCapture failures = LogCapture.of("io.rmq.consumer").expecting("fails on purpose",
                "moved to the dead queue")) {
            container.start();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(totals(engine.admin().history("hist", Resolution.MINUTE)))
                        .as("sent, handled, failed, dead over the last hour").containsExactly(12, 10, 4, 2);
                assertThat(totals(engine.admin().history("hist", Resolution.HOUR)))
                        .as("over the last day").containsExactly(12, 10, 4, 2);
            });
            assertThat(failures.messages()).hasSize(4);
        }
        finally {
            container.stop();
        }
        TopicHistory minutes = rmq.admin().history("hist", Resolution.MINUTE);
        assertThat(minutes.points()).hasSize(60);
        assertThat(minutes.from()).isEqualTo(minutes.points().get(0).at());
        assertThat(Duration.between(minutes.from(), minutes.to())).isEqualTo(Duration.ofHours(1));
        for (int i = 1; i < 60; i++) {
            assertThat(Duration.between(minutes.points().get(i - 1).at(), minutes.points().get(i).at()))
                    .isEqualTo(Duration.ofMinutes(1));
        }
        assertThat(minutes.to()).as("the current minute is the last point").isAfter(Instant.now().minusSeconds(5));
        TopicHistory hours = rmq.admin().history("hist", Resolution.HOUR);
        assertThat(hours.points()).hasSize(24);
        assertThat(Duration.between(hours.from(), hours.to())).isEqualTo(Duration.ofDays(1));
    }

    /**
     * An ORDERLY listener settles through its slot's steps, not through acks and nacks: its handled, failed and dead
     * messages are counted too (here too the counts are the engine's only instrumentation, which reads no clock).
     */
    @Test
    void anOrderlyListenersHandlesFailuresAndDeathsAreCounted() {
        Rmq engine = counting();
        engine.defineTopic("hist-o", TopicType.FIXED_TIME, 2);
        for (int i = 0; i < 4; i++) {
            engine.producer().send(OutgoingMessage.fixedTime("hist-o", "ok-" + i, Instant.now()));
        }
        engine.producer().send(OutgoingMessage.fixedTime("hist-o", "bad-0", Instant.now()));
        ConsumerSettings settings = new ConsumerSettings(8, Duration.ofSeconds(5),
                new RetryPolicy(1, BackoffPolicy.fixed(Duration.ofMillis(50))));
        ListenerContainer container = engine.container("hist-o", settings, String.class, (String body, Delivery d) -> {
            if (body.startsWith("bad")) {
                throw new IllegalStateException("fails on purpose");
            }
        }, ContainerOptions.of("hist-o", 1).withMode(ConsumeMode.ORDERLY).withOwnershipTimeout(Duration.ofSeconds(3)));
        try (LogCapture failures = LogCapture.of("io.rmq").expecting("fails on purpose", "moved to the dead queue")) {
            container.start();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                    totals(engine.admin().history("hist-o", Resolution.MINUTE)))
                    .as("sent, handled, failed, dead over the last hour").containsExactly(5, 4, 2, 1));
        }
        finally {
            container.stop();
        }
    }

    @Test
    void twoEnginesCountsAddUp() {
        Rmq one = counting();
        Rmq two = counting();
        one.defineTopic("both", TopicType.PRIORITY, 2);
        two.defineTopic("both", TopicType.PRIORITY, 2);
        for (int i = 0; i < 5; i++) {
            one.producer().send(OutgoingMessage.priority("both", "one-" + i, i));
        }
        for (int i = 0; i < 7; i++) {
            two.producer().send(OutgoingMessage.priority("both", "two-" + i, i));
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(totals(rmq.admin().history("both", Resolution.MINUTE))[0]).isEqualTo(12));
    }

    @Test
    void theStoredHashStaysBoundedAsTimePasses() {
        RmqRedisHistory history = new RmqRedisHistory(redis(rmq));
        long start = Instant.parse("2030-01-01T00:00:00Z").toEpochMilli();
        long step = Duration.ofMinutes(7).toMillis();
        int flushes = 400; // 46 hours, every 7 minutes
        for (int i = 0; i < flushes; i++) {
            history.flush(List.of("trim", "other"), List.of(new long[] {1, 0, 0, 0}, new long[] {2, 1, 0, 0}),
                    start + i * step).join();
        }
        long last = start + (flushes - 1) * step;
        RmqRedisHistory.Reading reading = history.read("trim").join();
        long lastMinute = last / 60_000;
        long lastHour = last / 3_600_000;
        assertThat(reading.minutes().keySet()).allMatch(m -> m > lastMinute - 61 && m <= lastMinute)
                .hasSize(9); // 61 minutes hold 9 flushes 7 minutes apart
        assertThat(reading.hours().keySet()).allMatch(h -> h > lastHour - 25 && h <= lastHour).hasSizeLessThanOrEqualTo(25);
        assertThat(reading.minutes().values().stream().mapToLong(c -> c[0]).sum()).isEqualTo(9);
        byte[] key = redis(rmq).keys().history("trim");
        long fields = this.<Long>raw(c -> c.hlen(key));
        assertThat(fields).as("minutes, hours and the trim mark").isLessThanOrEqualTo(61 + 25 + 1);
        assertThat(this.<Long>raw(c -> c.pttl(key))).as("expires a day after its last write")
                .isBetween(Duration.ofHours(24).toMillis(), Duration.ofHours(25).toMillis());
        assertThat(history.read("other").join().minutes().values().stream().mapToLong(c -> c[1]).sum()).isEqualTo(9);
    }

    @Test
    void anEngineThatCountedNothingWritesNothing() throws Exception {
        Rmq engine = counting();
        engine.defineTopic("quiet", TopicType.FIXED_TIME, 2);
        engine.producer().send(OutgoingMessage.fixedTime("quiet", "one", Instant.now()));
        await().atMost(Duration.ofSeconds(30)).until(() -> totals(rmq.admin().history("quiet",
                Resolution.MINUTE))[0] == 1);
        Map<String, Long> before = commandCalls();
        Thread.sleep(FLUSH.toMillis() * 10);
        Map<String, Long> after = commandCalls();
        assertThat(after.getOrDefault("evalsha", 0L)).as("no script ran over 10 flush intervals")
                .isEqualTo(before.getOrDefault("evalsha", 0L));
        assertThat(after.getOrDefault("hset", 0L)).isEqualTo(before.getOrDefault("hset", 0L));
    }

    /**
     * A write that fails keeps its counts for the next one: here the script fails because the history key holds a
     * string (WRONGTYPE), which fails every write until it is deleted, as an outage would, on both topologies.
     */
    @Test
    void countsAWriteCouldNotStoreGoWithTheNextWrite() {
        byte[] key = redis(rmq).keys().history("kept");
        raw(c -> c.set(key, "not a hash".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        try (LogCapture log = LogCapture.of("io.rmq.observe").expecting("could not write the history counts")) {
            Rmq engine = counting();
            engine.defineTopic("kept", TopicType.FIXED_TIME, 2);
            for (int i = 0; i < 3; i++) {
                engine.producer().send(OutgoingMessage.fixedTime("kept", "before-" + i, Instant.now()));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> !log.messages().isEmpty());
            for (int i = 0; i < 2; i++) {
                engine.producer().send(OutgoingMessage.fixedTime("kept", "during-" + i, Instant.now()));
            }
            await().pollDelay(FLUSH.multipliedBy(3)).atMost(Duration.ofSeconds(30)).until(() -> true);
            raw(c -> c.del(key));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(totals(rmq.admin().history("kept", Resolution.MINUTE))[0]).isEqualTo(5));
            assertThat(log.messages()).as("one line per outage, not per failed write").hasSize(1);
            assertThat(log.messages().get(0)).contains("1 topic(s)").contains("WRONGTYPE");
        }
    }

    @Test
    void aBadResolutionIsRefusedNamingIt() {
        assertThatThrownBy(() -> Resolution.parse("second")).isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("resolution").hasMessageContaining("second")
                .hasMessageContaining("minute or hour");
        assertThat(Resolution.parse("HOUR")).isEqualTo(Resolution.HOUR);
        TopicHistory none = rmq.admin().history("never-counted", Resolution.HOUR);
        assertThat(none.points()).hasSize(24).allMatch(p -> p.sent() + p.handled() + p.failed() + p.dead() == 0);
    }

    private static long[] totals(TopicHistory history) {
        long[] out = new long[4];
        for (TopicHistory.Point p : history.points()) {
            out[0] += p.sent();
            out[1] += p.handled();
            out[2] += p.failed();
            out[3] += p.dead();
        }
        return out;
    }
}
