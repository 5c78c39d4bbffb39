package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageRef;
import io.rmq.admin.TopicHistory;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.DeadLetterRetention;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.observe.CompositeInstrumentation;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.RmqRedisOrderly;
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
 * Dead-letter retention: the scripts that bury (a failure, a lease expiry, an ORDERLY failure) trim the slot's dead
 * queue to its share of the topic's count and to its age, oldest first, with everything a dead message keeps beside
 * it, and the engine counts the trims in its meter and its history.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class DeadLetterRetentionTest extends EngineTestSupport {

    private final List<AutoCloseable> closing = new ArrayList<>();
    /** What the engines of {@link #engine} reported as trimmed. */
    private final LongAdder reported = new LongAdder();

    DeadLetterRetentionTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void closeEngines() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    /** An engine on the test's prefix that reports its trims to {@link #reported} and to {@code also}. */
    private Rmq engine(RmqInstrumentation also, Duration historyFlush) {
        RmqInstrumentation counting = new RmqInstrumentation() {
            @Override
            public void deadTrimmed(String topic, int slot, long messages) {
                reported.add(messages);
            }
        };
        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(CompositeInstrumentation.of(List.of(counting, also)))
                .withHistoryFlushInterval(historyFlush));
        closing.add(engine);
        return engine;
    }

    private Rmq engine() {
        return engine(RmqInstrumentation.NONE, Duration.ZERO);
    }

    /** No retry: the first failure buries; dead messages kept as {@code retention} says. */
    private static ConsumerSettings burying(DeadLetterRetention retention) {
        return new ConsumerSettings(100, Duration.ofSeconds(5),
                new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO), retention));
    }

    /** Sends each body due now and lets it fail once (it dies), one round per body so they die in order. */
    private static void dieInOrder(Rmq engine, RmqConsumer consumer, String topic, List<String> bodies) {
        try (LogCapture log = LogCapture.rmq()) {
            for (String body : bodies) {
                engine.producer().sendFixedTime(topic, body, Instant.now().minusSeconds(1));
                int seen = consumer.pollAndHandle(String.class, (String b, Delivery d) -> {
                    throw new IllegalStateException("poison " + b);
                });
                assertThat(seen).isEqualTo(1);
            }
            assertThat(log.warnings()).hasSize(bodies.size())
                    .allSatisfy(line -> assertThat(line).contains("failed for the last time"));
        }
    }

    private static List<String> names(String prefix, int from, int to) {
        List<String> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(String.format("%s-%02d", prefix, i));
        }
        return out;
    }

    private List<String> deadBodies(Rmq engine, String topic) {
        return engine.admin().deadMessages(topic, 0, 1000).stream().map(DeadMessage::bodyText).sorted().toList();
    }

    @Test
    void aSlotKeepsTheNewestDeadUpToTheCountAndTrimsTheOldestFirst() {
        Rmq engine = engine();
        engine.defineTopic("count", TopicType.FIXED_TIME, 1);
        RmqConsumer consumer = engine.consumer("count", burying(new DeadLetterRetention(5, Duration.ZERO)));
        dieInOrder(engine, consumer, "count", names("m", 0, 12));

        assertThat(deadBodies(engine, "count")).containsExactlyElementsOf(names("m", 7, 12));
        assertThat(reported.sum()).isEqualTo(7);
        assertThat(engine.admin().stats("count").dead()).isEqualTo(5);
    }

    @Test
    void theTopicsCountIsSharedOutOverItsSlotsRoundedUp() {
        Rmq engine = engine();
        engine.defineTopic("shared", TopicType.FIXED_TIME, 4);
        // 6 over 4 slots: each keeps 2
        RmqConsumer consumer = engine.consumer("shared", burying(new DeadLetterRetention(6, Duration.ZERO)));
        List<String> bodies = names("s", 0, 40);
        dieInOrder(engine, consumer, "shared", bodies);

        List<DeadMessage> dead = engine.admin().deadMessages("shared", 0, 1000);
        int[] perSlot = new int[4];
        dead.forEach(m -> perSlot[m.slot()]++);
        // these 40 bodies put at least 2 in each slot
        assertThat(perSlot).containsOnly(2);
        assertThat(reported.sum()).isEqualTo(40 - 8);
    }

    @Test
    void deadOlderThanTheAgeIsTrimmedWhenTheNextDies() {
        Rmq engine = engine();
        engine.defineTopic("aged", TopicType.FIXED_TIME, 1);
        Duration age = Duration.ofMillis(500);
        RmqConsumer consumer = engine.consumer("aged", burying(new DeadLetterRetention(0, age)));
        dieInOrder(engine, consumer, "aged", List.of("old-0", "old-1"));
        Instant diedAt = engine.admin().deadMessages("aged", 0, 10).get(1).diedAt();
        // on Redis's clock, past the age of both
        await().atMost(Duration.ofSeconds(30)).until(() -> redisNow().isAfter(diedAt.plus(age).plusMillis(1)));
        assertThat(deadBodies(engine, "aged")).as("nothing trims until something dies").hasSize(2);

        dieInOrder(engine, consumer, "aged", List.of("new-0"));

        assertThat(deadBodies(engine, "aged")).containsExactly("new-0");
        assertThat(reported.sum()).isEqualTo(2);
    }

    @Test
    void zeroKeepsEveryDeadMessage() {
        Rmq engine = engine();
        engine.defineTopic("all", TopicType.FIXED_TIME, 1);
        RmqConsumer consumer = engine.consumer("all", burying(DeadLetterRetention.KEEP_ALL));
        dieInOrder(engine, consumer, "all", names("k", 0, 15));

        assertThat(deadBodies(engine, "all")).containsExactlyElementsOf(names("k", 0, 15));
        assertThat(reported.sum()).isZero();
    }

    @Test
    void aTrimmedMessageTakesItsDetailsPayloadAndHeadersWithItAndLeavesTheOthersAlone() {
        Rmq engine = engine();
        engine.defineTopic("ids", TopicType.FIXED_TIME, 1);
        RmqConsumer consumer = engine.consumer("ids", burying(new DeadLetterRetention(2, Duration.ZERO)));
        SlotKeys slot = redis(engine).keys().slot("ids", 0);
        try (LogCapture log = LogCapture.rmq()) {
            for (String id : List.of("a", "b", "c")) {
                engine.producer().send(OutgoingMessage.fixedTime("ids", "payload of " + id, Instant.now())
                        .withId("order-" + id).withHeader("tenant", id));
                consumer.pollAndHandle(String.class, (String b, Delivery d) -> {
                    throw new IllegalStateException("poison");
                });
            }
            assertThat(log.warnings()).hasSize(3);
        }
        byte[] a = idMember("order-a");
        assertThat(score(slot.dead(), a)).as("the oldest is trimmed").isNull();
        assertThat(has(slot.deadInfo(), a)).isFalse();
        assertThat(has(slot.msg(), a)).as("its payload and headers").isFalse();
        assertThat(has(slot.attempts(), a)).isFalse();
        assertThat(has(slot.errors(), a)).isFalse();
        for (String kept : List.of("order-b", "order-c")) {
            byte[] member = idMember(kept);
            assertThat(score(slot.dead(), member)).as(kept).isNotNull();
            assertThat(has(slot.deadInfo(), member)).as(kept).isTrue();
            assertThat(has(slot.msg(), member)).as(kept).isTrue();
        }
        assertThat(engine.admin().deadMessages("ids", 0, 10)).extracting(DeadMessage::id, m -> m.headers().get("tenant"))
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("order-b", "b"),
                        org.assertj.core.groups.Tuple.tuple("order-c", "c"));
    }

    @Test
    void aTrimmedMessageWithANewerCopyWaitingKeepsWhatThatCopyNeeds() {
        Rmq engine = engine();
        engine.defineTopic("dup", TopicType.FIXED_TIME, 1);
        RmqConsumer consumer = engine.consumer("dup", burying(new DeadLetterRetention(1, Duration.ZERO)));
        SlotKeys slot = redis(engine).keys().slot("dup", 0);
        try (LogCapture log = LogCapture.rmq()) {
            engine.producer().send(OutgoingMessage.fixedTime("dup", "first", Instant.now()).withId("order-1")
                    .withHeader("v", "1"));
            consumer.pollAndHandle(String.class, (String b, Delivery d) -> {
                throw new IllegalStateException("poison");
            });
            // a newer send of the same id waits in store while the first lies dead
            engine.producer().send(OutgoingMessage.fixedTime("dup", "second", Instant.now().plusSeconds(3600))
                    .withId("order-1").withHeader("v", "2"));
            engine.producer().sendFixedTime("dup", "other", Instant.now());
            consumer.pollAndHandle(String.class, (String b, Delivery d) -> {
                throw new IllegalStateException("poison");
            });
            assertThat(log.warnings()).hasSize(2);
        }
        byte[] member = idMember("order-1");
        assertThat(score(slot.dead(), member)).as("trimmed from dead").isNull();
        assertThat(has(slot.deadInfo(), member)).isFalse();
        assertThat(score(slot.store(), member)).as("the newer copy waits").isNotNull();
        assertThat(has(slot.msg(), member)).as("with its payload and headers").isTrue();
        assertThat(engine.admin().find(MessageRef.body("dup", "order-1"))).isNotNull();
        assertThat(reported.sum()).isEqualTo(1);
    }

    @Test
    void theLeaseExpirySweepTrimsAsItBuries() throws Exception {
        Rmq engine = engine();
        engine.defineTopic("swept", TopicType.FIXED_TIME, 1);
        ConsumerSettings shortLease = new ConsumerSettings(100, Duration.ofMillis(100),
                new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO), new DeadLetterRetention(2, Duration.ZERO)));
        RmqConsumer consumer = engine.consumer("swept", shortLease);
        for (String body : names("x", 0, 5)) {
            engine.producer().sendFixedTime("swept", body, Instant.now().minusSeconds(1));
        }
        assertThat(consumer.poll().deliveries()).hasSize(5); // leased, never settled: a consumer that died
        await().atMost(Duration.ofSeconds(30)).until(() -> consumer.sweep()[1] > 0);

        assertThat(engine.admin().deadMessages("swept", 0, 10)).hasSize(2)
                .allSatisfy(m -> assertThat(m.lastError()).startsWith("lease expired"));
        assertThat(reported.sum()).isEqualTo(3);
    }

    @Test
    void anOrderlyFailureTrimsAsItBuries() {
        Rmq engine = engine();
        engine.defineTopic("ordered", TopicType.FIXED_TIME, 1);
        for (String body : names("o", 0, 4)) {
            engine.producer().sendFixedTime("ordered", body, Instant.now().minusSeconds(1));
        }
        RmqRedisOrderly orderly = redis(engine).orderly();
        SlotKeys slot = redis(engine).keys().slot("ordered", 0);
        RetryPolicy retry = new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO),
                new DeadLetterRetention(1, Duration.ZERO));
        long epoch = orderly.claim(slot, "owner", 0, 10_000, 0, false, retry, null).join().epoch();
        List<byte[]> members = orderly.orderlyNext(slot, epoch, false, 10, retry, true, false, List.of(), List.of(),
                List.of(), false).join().messages().stream().map(p -> p.member()).toList();
        assertThat(members).hasSize(4);
        List<RmqRedisOrderly.OrderlyFailure> failures = members.stream()
                .map(m -> new RmqRedisOrderly.OrderlyFailure(m, "poison", "d")).toList();
        RmqRedisOrderly.OrderlyStep step = orderly.orderlyNext(slot, epoch, false, 0, retry, false, false, List.of(),
                failures, List.of(), false).join();

        assertThat(step.failedOutcomes()).containsOnly(2);
        assertThat(deadBodies(engine, "ordered")).hasSize(1);
        assertThat(reported.sum()).isEqualTo(3);
    }

    @Test
    void trimsAreCountedInTheMeterAndTheHistory() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Rmq engine = engine(new MicrometerInstrumentation(registry), Duration.ofMillis(200));
        engine.defineTopic("counted", TopicType.FIXED_TIME, 1);
        RmqConsumer consumer = engine.consumer("counted", burying(new DeadLetterRetention(3, Duration.ZERO)));
        dieInOrder(engine, consumer, "counted", names("c", 0, 8));

        assertThat(registry.get("rmq.dead.trimmed").tag("messaging.destination.name", "counted").counter().count())
                .isEqualTo(5.0);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            TopicHistory history = engine.admin().history("counted", TopicHistory.Resolution.MINUTE);
            assertThat(history.points().stream().mapToLong(TopicHistory.Point::trimmed).sum()).isEqualTo(5);
        });
    }

    @Test
    void negativeBoundsAreRefusedNamingFieldValueAndRule() {
        assertThatThrownBy(() -> new DeadLetterRetention(-1, Duration.ZERO))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("dead-letter maxCount").hasMessageContaining("-1")
                .hasMessageContaining("must be zero (no bound) or positive");
        assertThatThrownBy(() -> new DeadLetterRetention(0, Duration.ofSeconds(-1)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("dead-letter maxAge").hasMessageContaining("PT-1S");
        assertThat(DeadLetterRetention.DEFAULT).isEqualTo(new DeadLetterRetention(10_000, Duration.ofDays(30)));
        assertThat(RetryPolicy.DEFAULT.deadLetters()).isEqualTo(DeadLetterRetention.DEFAULT);
        assertThat(DeadLetterRetention.DEFAULT.maxCountPerSlot(16)).isEqualTo(625);
        assertThat(new DeadLetterRetention(10, Duration.ZERO).maxCountPerSlot(16)).isEqualTo(1);
    }

    private static byte[] idMember(String id) {
        byte[] text = id.getBytes(StandardCharsets.UTF_8);
        byte[] member = new byte[text.length + 1];
        member[0] = (byte) 0xFF;
        System.arraycopy(text, 0, member, 1, text.length);
        return member;
    }

    private boolean has(byte[] hash, byte[] field) {
        Boolean found = raw(c -> c.hexists(hash, field));
        return found;
    }

    private Double score(byte[] zset, byte[] member) {
        return raw(c -> c.zscore(zset, member));
    }

}
