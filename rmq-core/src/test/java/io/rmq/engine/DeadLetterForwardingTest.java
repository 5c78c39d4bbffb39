package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailurePolicy;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.producer.MessageLimits;
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
 * Dead-letter forwarding never fails for a size: a message that died is sent on as Redis holds it, whatever this
 * instance's limits, and RMQ's {@code rmq_dlt_*} headers do not count against the user's limits (each is bounded by
 * its own rule). Messages at every header limit, at the body limit, with a trace context beside a full set of user
 * headers, or sent under larger limits elsewhere all reach the dead-letter topic with their story, and leave the dead
 * queue.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class DeadLetterForwardingTest extends EngineTestSupport {

    private static final ConsumerSettings ONE_RETRY = new ConsumerSettings(50, Duration.ofSeconds(5),
            new RetryPolicy(1, BackoffPolicy.fixed(Duration.ZERO)), FailurePolicy.DEFAULT.withDeadLetterTopic("x03-dlt"));

    private final List<ListenerContainer> containers = new ArrayList<>();
    private final List<Rmq> engines = new ArrayList<>();

    DeadLetterForwardingTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void stop() {
        containers.forEach(ListenerContainer::stop);
        engines.forEach(Rmq::close);
    }

    private Rmq engine(RmqOptions options) {
        Rmq engine = Rmq.create(client, options.withKeyPrefix(prefix));
        engines.add(engine);
        engine.defineTopic("x03", TopicType.FIXED_TIME, 4);
        return engine;
    }

    /** {@code count} headers h0.. whose names and values take {@code totalBytes} together (names 2-3 bytes). */
    private static Map<String, String> headers(int count, int totalBytes) {
        Map<String, String> headers = new LinkedHashMap<>();
        int names = 0;
        for (int i = 0; i < count; i++) {
            names += ("h" + i).length();
        }
        int left = totalBytes - names;
        for (int i = 0; i < count; i++) {
            int size = left / (count - i);
            headers.put("h" + i, "v".repeat(size));
            left -= size;
        }
        return headers;
    }

    /**
     * Runs {@code consuming}'s failing listener on x03 and a recovery listener on x03-dlt until the message of body
     * {@code body} has arrived there; returns its delivery. No line says a forward failed.
     */
    private Delivery dieAndRecover(Rmq consuming, String body, String error) {
        List<Delivery> recovered = new CopyOnWriteArrayList<>();
        try (LogCapture logs = LogCapture.rmq().expecting("x03")) {
            ListenerContainer failing = consuming.container("x03", ONE_RETRY, String.class, (String p, Delivery d) -> {
                throw new IllegalStateException(error);
            }, ContainerOptions.of("x03", 1));
            containers.add(failing);
            failing.start();
            ListenerContainer recovery = consuming.container("x03-dlt", FAST, String.class, (String p, Delivery d) -> {
                if (d.bodyAsString().equals(body)) {
                    recovered.add(d);
                }
            }, ContainerOptions.of("x03-dlt", 1));
            containers.add(recovery);
            recovery.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> recovered.size() == 1);
            await().atMost(Duration.ofSeconds(30)).until(() -> consuming.admin().deadCount("x03") == 0);
            assertThat(logs.messages()).noneSatisfy(line -> assertThat(line).contains("failed:"))
                    .anySatisfy(line -> assertThat(line).contains("sent on to dead-letter topic 'x03-dlt'"));
        }
        return recovered.get(0);
    }

    private static void assertStory(Delivery dead, Map<String, String> userHeaders) {
        assertThat(dead.headers()).containsAllEntriesOf(userHeaders)
                .containsEntry("rmq_dlt_original_topic", "x03")
                .containsEntry("rmq_dlt_exception", IllegalStateException.class.getName())
                .containsEntry("rmq_dlt_attempts", "2")
                .containsKeys("rmq_dlt_original_slot", "rmq_dlt_exception_message", "rmq_dlt_failed_at");
    }

    @Test
    void aMessageAtTheHeaderCountLimitReachesItsDeadLetterTopicWithItsStory() {
        Map<String, String> full = headers(MessageLimits.DEFAULT.maxHeaders(), 1000);
        rmq.defineTopic("x03", TopicType.FIXED_TIME, 4);
        rmq.producer().send(OutgoingMessage.fixedTime("x03", "{\"n\":32}", Instant.now()).withHeaders(full));
        Delivery dead = dieAndRecover(rmq, "{\"n\":32}", "refused");
        assertStory(dead, full);
        assertThat(dead.headers()).hasSize(MessageLimits.DEFAULT.maxHeaders() + 6);
    }

    @Test
    void aMessageAtTheHeaderSizeLimitWithAnIdReachesItsDeadLetterTopicWithALongReasonCut() {
        Map<String, String> full = headers(9, MessageLimits.DEFAULT.maxHeadersBytes());
        rmq.defineTopic("x03", TopicType.FIXED_TIME, 4);
        rmq.producer().send(OutgoingMessage.fixedTime("x03", "{\"n\":9}", Instant.now()).withId("order-9")
                .withHeaders(full));
        Delivery dead = dieAndRecover(rmq, "{\"n\":9}", "ü".repeat(2000));
        assertStory(dead, full);
        assertThat(dead.id()).isEqualTo("order-9");
        String reason = dead.headers().get("rmq_dlt_exception_message");
        assertThat(reason).startsWith(IllegalStateException.class.getName()).endsWith("…");
        assertThat(reason.getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                .isLessThanOrEqualTo(OutgoingMessage.MAX_DEAD_LETTER_HEADER_BYTES);
    }

    @Test
    void aTraceContextBesideAFullSetOfUserHeadersDoesNotStopTheForward() {
        Map<String, String> context = Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "tracestate", "congo=t61rcWkgMzE");
        Rmq sending = engine(RmqOptions.DEFAULT.withInstrumentation(new RmqInstrumentation() {
            @Override
            public SendScope sendStarted(String topic, int messages) {
                return new SendScope() {
                    @Override
                    public Map<String, String> context() {
                        return context;
                    }
                };
            }
        }));
        Map<String, String> full = headers(MessageLimits.DEFAULT.maxHeaders(), MessageLimits.DEFAULT.maxHeadersBytes());
        sending.producer().send(OutgoingMessage.fixedTime("x03", "{\"n\":1}", Instant.now()).withHeaders(full));
        Rmq consuming = engine(RmqOptions.DEFAULT.withPropagateContext(true));
        Delivery dead = dieAndRecover(consuming, "{\"n\":1}", "refused");
        assertStory(dead, full);
        assertThat(dead.headers()).containsAllEntriesOf(context);
    }

    @Test
    void aBodyAtTheBodyLimitWithHeadersAtEveryLimitIsForwarded() {
        Rmq strict = engine(RmqOptions.DEFAULT.withMaxBodyBytes(100).withLimits(new MessageLimits(16, 64, 256, 4)));
        String atLimit = "b".repeat(100);
        strict.producer().send(OutgoingMessage.fixedTime("x03", atLimit, Instant.now()).withHeaders(headers(4, 256)));
        Delivery dead = dieAndRecover(strict, atLimit, "refused");
        assertStory(dead, headers(4, 256));
        assertThat(dead.body()).hasSize(100);
    }

    @Test
    void aMessageSentUnderLargerLimitsElsewhereIsForwardedAsStored() {
        // sent by an instance with the default limits, consumed by one with smaller ones
        Rmq strict = engine(RmqOptions.DEFAULT.withMaxBodyBytes(100).withLimits(new MessageLimits(16, 64, 256, 4)));
        String larger = "c".repeat(500);
        Map<String, String> many = headers(20, 4000);
        rmq.defineTopic("x03", TopicType.FIXED_TIME, 4);
        rmq.producer().send(OutgoingMessage.fixedTime("x03", larger, Instant.now()).withId("an-id-longer-than-16")
                .withHeaders(many));
        Delivery forwarded = dieAndRecover(strict, larger, "refused");
        assertStory(forwarded, many);
        assertThat(forwarded.id()).isEqualTo("an-id-longer-than-16");
    }

    @Test
    void theStoryTellsRedisTimeAndADeadLetterResentAsItCameIsAccepted() {
        rmq.defineTopic("x03", TopicType.FIXED_TIME, 4);
        long before = redisMillis();
        Map<String, String> full = headers(MessageLimits.DEFAULT.maxHeaders(), 2000);
        rmq.producer().send(OutgoingMessage.fixedTime("x03", "{\"n\":7}", Instant.now()).withHeaders(full));
        Delivery dead = dieAndRecover(rmq, "{\"n\":7}", "refused");
        long after = redisMillis();
        long failedAt = Long.parseLong(dead.headers().get("rmq_dlt_failed_at"));
        assertThat(failedAt).as("the dead queue's died-at: Redis's clock").isBetween(before, after);

        // a recovery that sends the dead letter back as it came (32 user headers and the story) is not refused
        rmq.producer().send(OutgoingMessage.fixedTime("x03", "{\"n\":8}", Instant.now()).withHeaders(dead.headers()));
        // but RMQ's headers keep a bound of their own, and other rmq_ names stay reserved
        assertThatThrownBy(() -> rmq.producer().send(OutgoingMessage.fixedTime("x03", "{\"n\":9}", Instant.now())
                .withHeader("rmq_dlt_exception_message", "x".repeat(1025))))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("header 'rmq_dlt_exception_message' value")
                .hasMessageContaining("must be at most 1024 bytes (an RMQ dead-letter header");
        assertThatThrownBy(() -> OutgoingMessage.fixedTime("x03", "{\"n\":9}", Instant.now())
                .withHeader("rmq_other", "x"))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("reserved prefix rmq_");
        // user headers still count against the user's limits
        Map<String, String> tooMany = headers(MessageLimits.DEFAULT.maxHeaders() + 1, 2000);
        assertThatThrownBy(() -> rmq.producer().send(OutgoingMessage.fixedTime("x03", "{\"n\":9}", Instant.now())
                .withHeaders(tooMany)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("must be at most 32 per message");
    }

    /** Redis's clock now, ms (TIME of the node the connection reaches). */
    private long redisMillis() {
        List<byte[]> time = raw(c -> c.time());
        return Long.parseLong(new String(time.get(0))) * 1000 + Long.parseLong(new String(time.get(1))) / 1000;
    }
}
