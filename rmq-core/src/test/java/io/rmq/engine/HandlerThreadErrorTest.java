package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code Throwable} that is not a {@code RuntimeException} (here an {@code Error} from the instrumentation, which
 * is the application's code) on a CONCURRENT handler thread neither ends the thread nor strands its delivery: the
 * error is logged once with the listener's id, the thread goes on with the next message, and the delivery, no longer
 * kept leased, is redelivered when its lease expires.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class HandlerThreadErrorTest extends EngineTestSupport {

    private Rmq engine;
    private ListenerContainer container;

    HandlerThreadErrorTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void stop() {
        if (container != null) {
            container.stop();
        }
        if (engine != null) {
            engine.close();
        }
    }

    /** Throws an Error from handleStarted for the first delivery of {@code body}, once. */
    private static RmqInstrumentation breakingOnce(String body) {
        AtomicBoolean broken = new AtomicBoolean();
        return new RmqInstrumentation() {
            @Override
            public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
                if (delivery.bodyAsString().contains(body) && broken.compareAndSet(false, true)) {
                    throw new InstrumentationBroke();
                }
                return HandleScope.NONE;
            }
        };
    }

    @Test
    void anErrorOnAHandlerThreadEndsNeitherTheThreadNorTheDelivery() {
        engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(breakingOnce("first")));
        engine.defineTopic("jobs", TopicType.FIXED_TIME, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        // one handler thread: were it to end, nothing after "first" would be handled
        container = engine.container("jobs", FAST, String.class, (String body, Delivery delivery) ->
                handled.add(body + "#" + delivery.attempt()), ContainerOptions.of("breaking", 1));
        theThreadAndTheDeliverySurvive("jobs", "breaking", handled);
    }

    @Test
    void anErrorOnABatchHandlerThreadEndsNeitherTheThreadNorTheBatch() {
        engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(breakingOnce("first")));
        engine.defineTopic("batches", TopicType.FIXED_TIME, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        container = engine.batchContainer("batches", FAST, String.class,
                (List<String> bodies, List<Delivery> deliveries) -> {
                    for (int i = 0; i < bodies.size(); i++) {
                        handled.add(bodies.get(i) + "#" + deliveries.get(i).attempt());
                    }
                }, ContainerOptions.of("breaking-batch", 1));
        theThreadAndTheDeliverySurvive("batches", "breaking-batch", handled);
    }

    /**
     * Starts {@link #container}, whose instrumentation breaks on "first": the error is logged once with the listener
     * id, "second" (sent after it) is handled by the same single thread, and "first" comes back once its 5 s lease
     * has expired, as a failed attempt.
     */
    private void theThreadAndTheDeliverySurvive(String topic, String listenerId, List<String> handled) {
        try (LogCapture log = LogCapture.rmq()) {
            container.start();
            engine.producer().sendFixedTime(topic, "first", Instant.now());
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().stream()
                    .anyMatch(m -> m.contains("unexpected error on handler thread")));
            engine.producer().sendFixedTime(topic, "second", Instant.now());
            await().atMost(Duration.ofSeconds(60)).until(() -> handled.contains("second#1")
                    && handled.stream().anyMatch(h -> h.startsWith("first#")));
            assertThat(handled).noneMatch(h -> h.equals("first#1"));
            assertThat(log.messages()).filteredOn(m -> m.contains("unexpected error on handler thread"))
                    .singleElement().asString().contains("'" + listenerId + "'", "topic '" + topic + "'");
        }
    }

    /** An Error the test throws on purpose (no stack trace: it is expected in the log). */
    static final class InstrumentationBroke extends Error {
        InstrumentationBroke() {
            super("instrumentation broke", null, false, false);
        }
    }
}
