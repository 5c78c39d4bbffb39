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
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.RmqNonRetryableException;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.redis.internal.EnvelopeKeys;
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
 * Deduplication windows (issue 47): once a message sent with a window was handled, sends of its identity (id, or body)
 * with a window are dropped until the window has passed since the handling; the window lives in the slot's dedupe
 * ZSET and expires with it. Merging while waiting is unchanged; a message that is not handled starts no window.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class DedupeWindowTest extends EngineTestSupport {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    DedupeWindowTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void closeEngines() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private Rmq engine() {
        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(new MicrometerInstrumentation(meters)));
        closing.add(engine);
        return engine;
    }

    private static ConsumerSettings settings() {
        return new ConsumerSettings(100, Duration.ofSeconds(5), new RetryPolicy(0,
                BackoffPolicy.fixed(Duration.ofMillis(50))));
    }

    private static List<String> handle(RmqConsumer consumer) {
        List<String> handled = new ArrayList<>();
        consumer.pollAndHandle(String.class, (String body, Delivery d) -> handled.add(body));
        return handled;
    }

    private double deduplicatedMeter(String topic) {
        var counter = meters.find("rmq.deduplicated.messages").tag("messaging.destination.name", topic).counter();
        return counter == null ? 0 : counter.count();
    }

    private Double windowOf(SlotKeys slot, byte[] identity) {
        return raw(c -> c.zscore(slot.dedupe(), identity));
    }

    private long exists(byte[] key) {
        return raw(c -> c.exists(key));
    }


    @Test
    void aHandledIdDropsSendsWithAWindowUntilItEnds() {
        Rmq engine = engine();
        engine.defineTopic("mails", TopicType.PRIORITY, 1);
        SlotKeys slot = redis(engine).keys().slot("mails", 0);
        byte[] identity = EnvelopeKeys.idMember("order-1");
        Duration window = Duration.ofMillis(1500);
        SendResult first = engine.producer().send(OutgoingMessage.priority("mails", "remind", 1).withId("order-1")
                .dedupeFor(window));
        assertThat(first.merged()).isFalse();
        assertThat(first.deduplicated()).isFalse();
        assertThat(windowOf(slot, identity)).as("pending while the message waits: minus the window").isEqualTo(-1500.0);
        assertThat(this.<Long>raw(c -> c.pttl(slot.dedupe()))).as("no TTL while a window is pending").isEqualTo(-1L);

        RmqConsumer consumer = engine.consumer("mails", settings());
        Instant before = redisNow();
        assertThat(handle(consumer)).containsExactly("remind");
        Instant after = redisNow();
        double ends = windowOf(slot, identity);
        assertThat(ends).as("the window starts when the message is handled")
                .isBetween((double) before.plus(window).toEpochMilli(), (double) after.plus(window).toEpochMilli() + 1);
        assertThat(this.<Long>raw(c -> c.pttl(slot.dedupe()))).as("the key expires with its last window").isBetween(1L, 1500L);

        SendResult again = engine.producer().send(OutgoingMessage.priority("mails", "remind again", 9)
                .withId("order-1").dedupeFor(window));
        assertThat(again.deduplicated()).isTrue();
        assertThat(again.merged()).as("nothing new was stored").isTrue();
        assertThat(exists(slot.store())).as("nothing written").isZero();
        assertThat(exists(slot.msg())).isZero();
        assertThat(deduplicatedMeter("mails")).isEqualTo(1.0);

        // a send without a window is never dropped
        SendResult unwindowed = engine.producer().send(OutgoingMessage.priority("mails", "direct", 1)
                .withId("order-1"));
        assertThat(unwindowed.deduplicated()).isFalse();
        assertThat(handle(consumer)).containsExactly("direct");
        assertThat(windowOf(slot, identity)).as("its handling leaves the window as it was").isEqualTo(ends);

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> redisNow().toEpochMilli() > ends);
        SendResult later = engine.producer().send(OutgoingMessage.priority("mails", "next", 1).withId("order-1")
                .dedupeFor(window));
        assertThat(later.deduplicated()).as("the window has ended").isFalse();
        assertThat(handle(consumer)).containsExactly("next");
        assertThat(deduplicatedMeter("mails")).isEqualTo(1.0);
    }

    @Test
    void aBodyIsItsOwnIdentityAndTheWindowKeepsADigestNotTheBody() {
        Rmq engine = engine();
        engine.defineTopic("bodies", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(engine).keys().slot("bodies", 0);
        String body = "reset-password:alice@example.com " + "x".repeat(500);
        Instant now = Instant.now().minusSeconds(1);
        engine.producer().send(OutgoingMessage.fixedTime("bodies", body, now).dedupeFor(MINUTE));
        assertThat(handle(engine.consumer("bodies", settings()))).containsExactly(body);

        assertThat(engine.producer().send(OutgoingMessage.fixedTime("bodies", body, now).dedupeFor(MINUTE))
                .deduplicated()).isTrue();
        assertThat(engine.producer().send(OutgoingMessage.fixedTime("bodies", body + "!", now).dedupeFor(MINUTE))
                .deduplicated()).as("another body is another identity").isFalse();
        List<byte[]> members = raw(c -> c.zrange(slot.dedupe(), 0, -1));
        assertThat(members).hasSize(2).allSatisfy(m -> assertThat(m).hasSize(14));
        assertThat(windowOf(slot, EnvelopeKeys.of(body.getBytes(StandardCharsets.UTF_8))))
                .as("keyed by the body's envelope key").isGreaterThan(0);
    }

    @Test
    void whileTheMessageWaitsASendMergesAndOneWhileItIsInFlightIsDeliveredAfterIt() {
        Rmq engine = engine();
        engine.defineTopic("waits", TopicType.PRIORITY, 1);
        SlotKeys slot = redis(engine).keys().slot("waits", 0);
        engine.producer().send(OutgoingMessage.priority("waits", "v1", 1).withId("w").dedupeFor(MINUTE));
        SendResult merged = engine.producer().send(OutgoingMessage.priority("waits", "v2", 1).withId("w")
                .dedupeFor(Duration.ofSeconds(90)));
        assertThat(merged.merged()).isTrue();
        assertThat(merged.deduplicated()).as("merging while waiting, as always").isFalse();
        assertThat(windowOf(slot, EnvelopeKeys.idMember("w"))).as("the latest send's window").isEqualTo(-90_000.0);

        RmqConsumer consumer = engine.consumer("waits", settings());
        List<String> handled = new ArrayList<>();
        List<SendResult> inFlight = new ArrayList<>();
        consumer.pollAndHandle(String.class, (String body, Delivery d) -> {
            handled.add(body);
            inFlight.add(engine.producer().send(OutgoingMessage.priority("waits", "v3", 1).withId("w")
                    .dedupeFor(MINUTE)));
        });
        assertThat(inFlight).singleElement().satisfies(r -> assertThat(r.deduplicated()).isFalse());
        assertThat(handle(consumer)).as("sent while the first was in flight: delivered after it").containsExactly("v3");
        assertThat(handled).containsExactly("v2");
        assertThat(engine.producer().send(OutgoingMessage.priority("waits", "v4", 1).withId("w").dedupeFor(MINUTE))
                .deduplicated()).isTrue();
    }

    @Test
    void aMessageThatIsNotHandledStartsNoWindowAndLeavesNoEntry() {
        Rmq engine = engine();
        engine.defineTopic("fails", TopicType.PRIORITY, 1);
        SlotKeys slot = redis(engine).keys().slot("fails", 0);
        engine.producer().send(OutgoingMessage.priority("fails", "bad", 1).withId("f").dedupeFor(MINUTE));
        RmqConsumer consumer = engine.consumer("fails", settings());
        try (var log = LogCapture.rmq().expecting("fails on purpose")) {
            consumer.pollAndHandle(String.class, (String body, Delivery d) -> {
                throw new RmqNonRetryableException("fails on purpose");
            });
        }
        assertThat(engine.admin().stats("fails").dead()).isEqualTo(1);
        assertThat(windowOf(slot, EnvelopeKeys.idMember("f"))).as("pending while it lies in dead").isEqualTo(-60_000.0);
        assertThat(engine.producer().send(OutgoingMessage.priority("fails", "good", 1).withId("f").dedupeFor(MINUTE))
                .deduplicated()).as("a dead message was not handled").isFalse();
        assertThat(engine.admin().purge("fails")).isEqualTo(1);
        engine.admin().deleteDeadMatching("fails", null, null);
        assertThat(exists(slot.dedupe())).as("its pending window went with its last copy").isZero();
    }

    @Test
    void aBatchCountsTheSendsItsWindowsDropped() {
        Rmq engine = engine();
        engine.defineTopic("batch", TopicType.PRIORITY, 2);
        List<OutgoingMessage> first = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            first.add(OutgoingMessage.priority("batch", "m" + i, 1).withId("id-" + i).dedupeFor(MINUTE));
        }
        assertThat(engine.producer().sendBatch(first).added()).isEqualTo(6);
        RmqConsumer consumer = engine.consumer("batch", settings());
        List<String> handled = new ArrayList<>();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            handled.addAll(handle(consumer));
            return handled.size() == 6;
        });

        List<OutgoingMessage> second = new ArrayList<>();
        for (int i = 4; i < 8; i++) {
            second.add(OutgoingMessage.priority("batch", "n" + i, 1).withId("id-" + i).dedupeFor(MINUTE));
        }
        second.add(OutgoingMessage.priority("batch", "plain", 1).withId("id-0"));
        BatchResult result = engine.producer().sendBatch(second);
        assertThat(result.deduplicated()).isEqualTo(2);
        assertThat(result.added()).as("id-6, id-7 and the send without a window").isEqualTo(3);
        assertThat(result.merged()).isEqualTo(2);
        assertThat(deduplicatedMeter("batch")).isEqualTo(2.0);
        List<String> next = new ArrayList<>();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            next.addAll(handle(consumer));
            return next.size() == 3;
        });
        assertThat(next).containsExactlyInAnyOrder("n6", "n7", "plain");
    }

    @Test
    void anExpiringMessageWithAWindowKeepsBoth() {
        Rmq engine = engine();
        engine.defineTopic("both", TopicType.PRIORITY, 1);
        SlotKeys slot = redis(engine).keys().slot("both", 0);
        engine.producer().send(OutgoingMessage.priority("both", "quote", 1).withId("q")
                .expiresAfter(Duration.ofMinutes(5)).dedupeFor(MINUTE));
        assertThat(exists(slot.expiry())).isEqualTo(1);
        assertThat(windowOf(slot, EnvelopeKeys.idMember("q"))).isEqualTo(-60_000.0);
        assertThat(handle(engine.consumer("both", settings()))).containsExactly("quote");
        assertThat(exists(slot.expiry())).isZero();
        assertThat(engine.producer().send(OutgoingMessage.priority("both", "quote", 1).withId("q")
                .expiresAfter(Duration.ofMinutes(5)).dedupeFor(MINUTE)).deduplicated()).isTrue();
    }

    @Test
    void anOrderlyListenerStartsTheWindowOfWhatItHandled() {
        Rmq engine = engine();
        String topic = "lanes";
        engine.defineTopic(topic, TopicType.FIXED_TIME, 1);
        engine.declareConsumeMode(topic, ConsumeMode.ORDERLY);
        SlotKeys slot = redis(engine).keys().slot(topic, 0);
        Instant base = Instant.now().minusSeconds(60);
        engine.producer().send(OutgoingMessage.fixedTime(topic, "a:0", base).withGroup("A").withId("a0")
                .dedupeFor(MINUTE));
        engine.producer().send(OutgoingMessage.fixedTime(topic, "a:1", base.plusMillis(1)).withGroup("A"));
        List<String> handled = new CopyOnWriteArrayList<>();
        ListenerContainer container = engine.container(topic, settings(), String.class,
                (String body, Delivery d) -> handled.add(body),
                ContainerOptions.of("o-dedupe", 1).withMode(ConsumeMode.ORDERLY)
                        .withOwnershipTimeout(Duration.ofSeconds(3)));
        closing.add(container::stop);
        container.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 2
                && windowOf(slot, EnvelopeKeys.idMember("a0")) != null
                && windowOf(slot, EnvelopeKeys.idMember("a0")) > 0);
        assertThat(handled).containsExactly("a:0", "a:1");
        assertThat(engine.producer().send(OutgoingMessage.fixedTime(topic, "a:0", base).withGroup("A").withId("a0")
                .dedupeFor(MINUTE)).deduplicated()).isTrue();
    }

    @Test
    void theWindowOutlivesTheEngineThatHandledIt() {
        Rmq first = engine();
        first.defineTopic("restart", TopicType.PRIORITY, 4);
        first.producer().send(OutgoingMessage.priority("restart", "once", 1).withId("r").dedupeFor(MINUTE));
        List<String> handled = new ArrayList<>();
        RmqConsumer consumer = first.consumer("restart", settings());
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            handled.addAll(handle(consumer));
            return handled.size() == 1;
        });
        first.close();

        Rmq second = engine();
        assertThat(second.producer().send(OutgoingMessage.priority("restart", "once", 1).withId("r")
                .dedupeFor(MINUTE)).deduplicated()).isTrue();
        assertThat(second.admin().stats("restart").waiting()).isZero();
    }

    @Test
    void badWindowsAreRefusedWithTheFieldNamed() {
        OutgoingMessage message = OutgoingMessage.priority("bad", "x", 1);
        assertThatThrownBy(() -> message.dedupeFor(Duration.ZERO)).isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("dedupeFor").hasMessageContaining("between 1 ms and 366 days");
        assertThatThrownBy(() -> message.dedupeFor(Duration.ofMillis(-5)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("dedupeFor");
        assertThatThrownBy(() -> message.dedupeFor(Duration.ofNanos(999_999)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("dedupeFor");
        assertThatThrownBy(() -> message.dedupeFor(Duration.ofDays(367)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("dedupeFor")
                .hasMessageContaining("topic 'bad'");
        assertThatThrownBy(() -> message.dedupeFor(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("dedupeFor");
        assertThat(message.dedupeFor(Duration.ofDays(366)).dedupeFor()).isEqualTo(Duration.ofDays(366));
        assertThat(message.dedupeFor(Duration.ofMillis(1)).withId("i").withHeader("h", "v").dedupeFor())
                .as("kept by the other with-ers").isEqualTo(Duration.ofMillis(1));
    }
}
