package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.TopicHistory;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.DeadLetterRetention;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.observe.CompositeInstrumentation;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.EnvelopeKeys;
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
 * Messages that expire (issue 47): one past its expiry is never handed to a handler. Pops and ORDERLY steps drop it
 * (or move it to the dead queue when the topic keeps expired messages), count it in the meter and the history, and
 * forget its expiry with its last copy; merging takes the latest send's expiry; bad expiries are refused with nothing
 * written.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ExpiryTest extends EngineTestSupport {

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    /** "topic slot messages toDead" per expiry report of {@link #engine}. */
    private final List<String> reports = new CopyOnWriteArrayList<>();

    ExpiryTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void closeEngines() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    /** An engine on the test's prefix that reports expiries to {@link #reports}, meters and its history. */
    private Rmq engine(Duration historyFlush) {
        RmqInstrumentation recording = new RmqInstrumentation() {
            @Override
            public void expired(String topic, int slot, long messages, boolean toDead) {
                reports.add(topic + " " + slot + " " + messages + " " + toDead);
            }
        };
        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(CompositeInstrumentation.of(List.of(recording,
                        new MicrometerInstrumentation(meters))))
                .withHistoryFlushInterval(historyFlush));
        closing.add(engine);
        return engine;
    }

    private static ConsumerSettings settings(boolean keepExpired) {
        return new ConsumerSettings(100, Duration.ofSeconds(5), new RetryPolicy(3,
                BackoffPolicy.fixed(Duration.ofMillis(50)), DeadLetterRetention.DEFAULT.withKeepExpired(keepExpired)));
    }

    private List<String> handle(RmqConsumer consumer) {
        List<String> handled = new ArrayList<>();
        consumer.pollAndHandle(String.class, (String body, Delivery d) -> handled.add(body));
        return handled;
    }

    private double expiredMeter(String topic, String to) {
        var counter = meters.find("rmq.expired.messages").tag("messaging.destination.name", topic)
                .tag("rmq.expired.to", to).counter();
        return counter == null ? 0 : counter.count();
    }

    private Double expiryOf(SlotKeys slot, byte[] member) {
        return scoreIn(slot.expiry(), member);
    }

    private Double scoreIn(byte[] zset, byte[] member) {
        return raw(c -> c.zscore(zset, member));
    }

    private long exists(byte[] key) {
        return raw(c -> c.exists(key));
    }

    /** Waits until Redis's clock is past {@code instant}. */
    private void redisPast(Instant instant) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> redisNow().isAfter(instant));
    }


    @Test
    void aMessagePastItsExpiryIsDroppedAtThePopAndCounted() {
        Rmq engine = engine(Duration.ofMillis(200));
        engine.defineTopic("quotes", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(engine).keys().slot("quotes", 0);
        Instant due = Instant.now().minusSeconds(1);
        engine.producer().send(OutgoingMessage.fixedTime("quotes", "quote-1", due).withId("q1")
                .withHeader("tenant", "a").expiresAfter(Duration.ofMillis(200)));
        engine.producer().send(OutgoingMessage.fixedTime("quotes", "plain", due));
        assertThat(exists(slot.expiry())).as("the expiry is stored beside the message").isEqualTo(1);
        redisPast(Instant.now().plusMillis(300));

        RmqConsumer consumer = engine.consumer("quotes", settings(false));
        assertThat(handle(consumer)).as("only the message without expiry is handled").containsExactly("plain");

        assertThat(reports).containsExactly("quotes 0 1 false");
        assertThat(expiredMeter("quotes", "dropped")).isEqualTo(1.0);
        assertThat(exists(slot.store())).isZero();
        assertThat(exists(slot.msg())).as("its payload and headers went with it").isZero();
        assertThat(exists(slot.expiry())).isZero();
        assertThat(engine.admin().stats("quotes").dead()).isZero();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            TopicHistory history = engine.admin().history("quotes", TopicHistory.Resolution.MINUTE);
            assertThat(history.points().stream().mapToLong(TopicHistory.Point::expired).sum()).isEqualTo(1);
            assertThat(history.points().stream().mapToLong(TopicHistory.Point::sent).sum()).isEqualTo(2);
            assertThat(history.points().stream().mapToLong(TopicHistory.Point::failed).sum())
                    .as("an expired message did not fail").isZero();
        });
    }

    @Test
    void aTopicThatKeepsExpiredMessagesMovesThemToDeadWithTheReasonAndARequeueDeliversThem() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("codes", TopicType.PRIORITY, 1);
        SlotKeys slot = redis(engine).keys().slot("codes", 0);
        engine.producer().send(OutgoingMessage.priority("codes", "code-7", 5).expiresAfter(Duration.ofMillis(150)));
        redisPast(Instant.now().plusMillis(250));

        RmqConsumer consumer = engine.consumer("codes", settings(true));
        assertThat(handle(consumer)).isEmpty();
        List<DeadMessage> dead = engine.admin().deadMessages("codes", 0, 10);
        assertThat(dead).singleElement().satisfies(m -> {
            assertThat(m.bodyText()).isEqualTo("code-7");
            assertThat(m.lastError()).startsWith("expired at ").contains("before it was handled");
            assertThat(m.priority()).isEqualTo(5L);
        });
        assertThat(reports).containsExactly("codes 0 1 true");
        assertThat(expiredMeter("codes", "dead")).isEqualTo(1.0);
        assertThat(exists(slot.expiry())).as("a dead message does not expire").isZero();

        assertThat(engine.admin().requeueAllDead("codes")).isEqualTo(1);
        assertThat(handle(consumer)).as("an operator's requeue is handled").containsExactly("code-7");
    }

    @Test
    void mergingTakesTheLatestSendsExpiryAndASendWithoutOneLeavesIt() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("merge", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(engine).keys().slot("merge", 0);
        byte[] member = EnvelopeKeys.idMember("m");
        Instant due = Instant.now().plusSeconds(3600);
        engine.producer().send(OutgoingMessage.fixedTime("merge", "v1", due).withId("m")
                .expiresAt(due.plusSeconds(60)));
        assertThat(expiryOf(slot, member)).isEqualTo((double) due.plusSeconds(60).toEpochMilli());

        var merged = engine.producer().send(OutgoingMessage.fixedTime("merge", "v2", due).withId("m")
                .expiresAt(due.plusSeconds(30)));
        assertThat(merged.merged()).isTrue();
        assertThat(expiryOf(slot, member)).as("the latest send's, though earlier")
                .isEqualTo((double) due.plusSeconds(30).toEpochMilli());

        engine.producer().send(OutgoingMessage.fixedTime("merge", "v3", due.plusSeconds(10)).withId("m"));
        assertThat(expiryOf(slot, member)).as("a send without expiry leaves it")
                .isEqualTo((double) due.plusSeconds(30).toEpochMilli());
        assertThat(scoreIn(slot.store(), member)).as("the due time follows the type's rule")
                .isEqualTo((double) due.plusSeconds(10).toEpochMilli());

        // a batch: the last send of one member within the call wins
        engine.producer().sendBatch(List.of(
                OutgoingMessage.fixedTime("merge", "v4", due).withId("m").expiresAt(due.plusSeconds(40)),
                OutgoingMessage.fixedTime("merge", "v5", due).withId("m").expiresAt(due.plusSeconds(50))));
        assertThat(expiryOf(slot, member)).isEqualTo((double) due.plusSeconds(50).toEpochMilli());
    }

    @Test
    void aMessageThatWillExpireBeforeItIsDueLeavesOnceExpiredNotWhenDue() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("later", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(engine).keys().slot("later", 0);
        Instant soon = Instant.now().plusMillis(100);
        engine.producer().send(OutgoingMessage.fixedTime("later", "ride", soon).withId("r")
                .expiresAt(soon.plusMillis(200)));
        // moved far out by a later send of the same id (FIXED_TIME takes the latest time), keeping its expiry
        engine.producer().send(OutgoingMessage.fixedTime("later", "ride", Instant.now().plusSeconds(3600)).withId("r"));
        redisPast(soon.plusMillis(300));

        RmqConsumer consumer = engine.consumer("later", settings(false));
        assertThat(handle(consumer)).isEmpty();
        assertThat(exists(slot.store())).as("gone long before its due time: expired messages do not pile up")
                .isZero();
        assertThat(exists(slot.msg())).isZero();
        assertThat(reports).containsExactly("later 0 1 false");
    }

    @Test
    void aDuplicateWaitingBehindADeliveryExpiresAloneAndTheDeliveryIsAcked() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("dup", TopicType.PRIORITY, 1);
        SlotKeys slot = redis(engine).keys().slot("dup", 0);
        engine.producer().send(OutgoingMessage.priority("dup", "job", 1).withId("j"));
        RmqConsumer consumer = engine.consumer("dup", settings(false));
        List<String> inner = new ArrayList<>();
        consumer.pollAndHandle(String.class, (String body, Delivery d) -> {
            // while this delivery runs, the same id is sent again with a short expiry, and expires
            engine.producer().send(OutgoingMessage.priority("dup", "job again", 1).withId("j")
                    .expiresAfter(Duration.ofMillis(100)));
            redisPast(Instant.now().plusMillis(200));
            inner.addAll(handle(engine.consumer("dup", settings(false))));
        });
        assertThat(inner).as("the waiting duplicate is never handed out").isEmpty();
        assertThat(reports).containsExactly("dup 0 1 false");
        assertThat(exists(slot.prepare())).as("the delivery's ack went through").isZero();
        assertThat(exists(slot.store())).isZero();
        assertThat(exists(slot.expiry())).isZero();
        assertThat(exists(slot.msg())).isZero();
    }

    @Test
    void anOrderlyLaneDropsItsExpiredMessageAndGoesOn() {
        Rmq engine = engine(Duration.ZERO);
        String topic = "lanes";
        engine.defineTopic(topic, TopicType.FIXED_TIME, 1);
        engine.declareConsumeMode(topic, ConsumeMode.ORDERLY);
        SlotKeys slot = redis(engine).keys().slot(topic, 0);
        Instant base = Instant.now().minusSeconds(60);
        engine.producer().send(OutgoingMessage.fixedTime(topic, "a:0", base).withGroup("A"));
        engine.producer().send(OutgoingMessage.fixedTime(topic, "a:1", base.plusMillis(1)).withGroup("A")
                .expiresAfter(Duration.ofMillis(100)));
        engine.producer().send(OutgoingMessage.fixedTime(topic, "a:2", base.plusMillis(2)).withGroup("A"));
        engine.producer().send(OutgoingMessage.fixedTime(topic, "b:0", base.plusMillis(3)).withGroup("B")
                .expiresAfter(Duration.ofMillis(100)));
        redisPast(Instant.now().plusMillis(200));

        List<String> handled = new CopyOnWriteArrayList<>();
        ListenerContainer container = engine.container(topic, settings(false), String.class,
                (String body, Delivery d) -> handled.add(body),
                ContainerOptions.of("o-expiry", 2).withMode(ConsumeMode.ORDERLY)
                        .withOwnershipTimeout(Duration.ofSeconds(3)));
        closing.add(container::stop);
        container.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() >= 2 && exists(slot.store()) == 0
                && exists(slot.prepare()) == 0);
        assertThat(handled).containsExactly("a:0", "a:2");
        assertThat(reports.stream().mapToLong(r -> Long.parseLong(r.split(" ")[2])).sum()).isEqualTo(2);
        assertThat(exists(slot.expiry())).isZero();
        assertThat(((OrderlyListenerContainer) container).ownedSlots()).hasSize(1);
    }

    @Test
    void anExpiredMessageHeldByAnOrderlyOwnerIsNotHandedOutAgain() {
        Rmq engine = engine(Duration.ZERO);
        String topic = "held";
        engine.defineTopic(topic, TopicType.FIXED_TIME, 1);
        engine.declareConsumeMode(topic, ConsumeMode.ORDERLY);
        SlotKeys slot = redis(engine).keys().slot(topic, 0);
        // a head that fails waits in prepare for its retry; it expires meanwhile and is dropped, not retried
        engine.producer().send(OutgoingMessage.fixedTime(topic, "h:0", Instant.now().minusSeconds(1)).withGroup("H")
                .expiresAfter(Duration.ofMillis(400)));
        engine.producer().send(OutgoingMessage.fixedTime(topic, "h:1", Instant.now().minusMillis(500)).withGroup("H"));
        List<String> handled = new CopyOnWriteArrayList<>();
        ConsumerSettings slowRetry = new ConsumerSettings(100, Duration.ofSeconds(5), new RetryPolicy(3,
                BackoffPolicy.fixed(Duration.ofMillis(800))));
        try (var log = io.rmq.test.LogCapture.rmq().expecting("fails on purpose")) {
            ListenerContainer container = engine.container(topic, slowRetry, String.class, (String body,
                    Delivery d) -> {
                handled.add(body + "#" + d.attempt());
                if (body.equals("h:0")) {
                    throw new IllegalStateException("fails on purpose");
                }
            }, ContainerOptions.of("o-held", 2).withMode(ConsumeMode.ORDERLY)
                    .withOwnershipTimeout(Duration.ofSeconds(3)));
            closing.add(container::stop);
            container.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.contains("h:1#1"));
            assertThat(log.warnings()).hasSize(1);
        }
        assertThat(handled).containsExactly("h:0#1", "h:1#1");
        assertThat(reports).containsExactly("held 0 1 false");
        await().atMost(Duration.ofSeconds(10)).until(() -> exists(slot.prepare()) == 0);
        assertThat(exists(slot.expiry())).isZero();
        assertThat(exists(slot.attempts())).isZero();
    }

    @Test
    void badExpiriesAreRefusedWithNothingWritten() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("bad", TopicType.FIXED_TIME, 1);
        engine.defineTopic("range", TopicType.RANGE_MERGE, 1);
        SlotKeys slot = redis(engine).keys().slot("bad", 0);
        Instant now = Instant.now();
        assertThatThrownBy(() -> OutgoingMessage.fixedTime("bad", "x", now).expiresAt(now.minusSeconds(1)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("expiresAt").hasMessageContaining("must be in the future");
        assertThatThrownBy(() -> OutgoingMessage.fixedTime("bad", "x", now.plusSeconds(60))
                .expiresAt(now.plusSeconds(30)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("expiresAt").hasMessageContaining("after the message's fixedTime");
        assertThatThrownBy(() -> OutgoingMessage.fixedTime("bad", "x", now).expiresAfter(Duration.ZERO))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("expiresAfter").hasMessageContaining("PT0S").hasMessageContaining("1 ms");
        assertThatThrownBy(() -> OutgoingMessage.rangeMerge("range", "x", Duration.ofSeconds(10))
                .expiresAfter(Duration.ofSeconds(5)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("expiresAfter").hasMessageContaining("longer than the message's timeRange");
        assertThatThrownBy(() -> OutgoingMessage.fixedTime("bad", "x", now).expiresAfter(Duration.ofDays(365L * 200_000)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("2^52 ms");

        // an instant the host takes for the future but Redis's clock has passed (clocks differ): Redis refuses it.
        // Coalesced single sends (one call, several callers): that message alone, nothing of it written
        byte[] plain = "plain".getBytes(StandardCharsets.UTF_8);
        byte[] late = "late".getBytes(StandardCharsets.UTF_8);
        assertThat(redis(engine).send(slot, false, false, List.of(plain, late), List.of(0L, 0L),
                java.util.Arrays.asList(null, new byte[] {1, 0}), java.util.Arrays.asList(null, "=1000")).join())
                .containsExactly(1L, -1L);
        assertThat(scoreIn(slot.store(), plain)).isNotNull();
        assertThat(scoreIn(slot.store(), late)).isNull();
        assertThat(exists(slot.expiry())).isZero();
        assertThat(exists(slot.msg())).as("nor its envelope").isZero();
        // a batch's chunk (one caller): the whole chunk
        byte[] other = "other".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> redis(engine).sendCounting(slot, false, false, List.of(other, late),
                List.of(0L, 0L), java.util.Arrays.asList(null, null), java.util.Arrays.asList(null, "=1000")).join())
                .hasCauseInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("expiresAt").hasMessageContaining("must be after Redis's clock");
        assertThat(scoreIn(slot.store(), other)).isNull();
        assertThat(exists(slot.expiry())).isZero();
        // FIXED_TIME: an expiresAfter that ends before the due time
        assertThatThrownBy(() -> OutgoingMessage.fixedTime("bad", "x", now.plusSeconds(60))
                .expiresAfter(Duration.ofSeconds(30)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("expiresAfter").hasMessageContaining("must end after the message's fixedTime");
    }

    @Test
    void aMessageThatDiesOfFailuresLeavesNoExpiryForItsNextSend() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("fails", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(engine).keys().slot("fails", 0);
        engine.producer().send(OutgoingMessage.fixedTime("fails", "poison", Instant.now()).withId("p")
                .expiresAfter(Duration.ofHours(1)));
        RmqConsumer consumer = engine.consumer("fails", new ConsumerSettings(100, Duration.ofSeconds(5),
                new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO))));
        try (var log = io.rmq.test.LogCapture.rmq().expecting("fails on purpose")) {
            consumer.pollAndHandle(String.class, (String body, Delivery d) -> {
                throw new IllegalStateException("fails on purpose");
            });
            assertThat(log.warnings()).hasSize(1);
        }
        assertThat(engine.admin().stats("fails").dead()).isEqualTo(1);
        assertThat(exists(slot.expiry())).as("a dead message does not expire").isZero();
        engine.producer().send(OutgoingMessage.fixedTime("fails", "again", Instant.now()).withId("p"));
        assertThat(exists(slot.expiry())).as("its next send starts without one").isZero();
    }

    @Test
    void moreExpiredMessagesThanOnePopTakesOutAreNeverHandedOut() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("many", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(engine).keys().slot("many", 0);
        Instant base = Instant.now().minusSeconds(10);
        List<OutgoingMessage> batch = new ArrayList<>();
        // a batch of 1: a pop takes out at most 10 x 1 + 100 expired messages first, and passes over the rest
        for (int i = 0; i < 300; i++) {
            batch.add(OutgoingMessage.fixedTime("many", "e" + i, base.plusMillis(i))
                    .expiresAfter(Duration.ofMillis(100)));
        }
        batch.add(OutgoingMessage.fixedTime("many", "live", base.plusMillis(400)));
        engine.producer().sendBatch(batch);
        redisPast(Instant.now().plusMillis(200));
        RmqConsumer consumer = engine.consumer("many", new ConsumerSettings(1, Duration.ofSeconds(5),
                RetryPolicy.DEFAULT));
        List<String> handled = new ArrayList<>();
        for (int i = 0; i < 5 && handled.isEmpty(); i++) {
            handled.addAll(handle(consumer));
        }
        assertThat(handled).containsExactly("live");
        while (exists(slot.store()) > 0) {
            assertThat(handle(consumer)).isEmpty();
        }
        assertThat(reports.stream().mapToLong(r -> Long.parseLong(r.split(" ")[2])).sum()).isEqualTo(300);
        assertThat(exists(slot.expiry())).isZero();
    }

    @Test
    void plainMessagesNeverTouchTheExpiryKey() {
        Rmq engine = engine(Duration.ZERO);
        engine.defineTopic("plain", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(engine).keys().slot("plain", 0);
        engine.producer().send(OutgoingMessage.fixedTime("plain", "a", Instant.now()));
        engine.producer().sendBatch(List.of(OutgoingMessage.fixedTime("plain", "b", Instant.now()),
                OutgoingMessage.fixedTime("plain", "c", Instant.now()).withId("c")));
        assertThat(exists(slot.expiry())).isZero();
        assertThat(handle(engine.consumer("plain", settings(false)))).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(reports).isEmpty();
    }
}
