package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.micrometer.observation.ObservationInstrumentation;
import io.rmq.micrometer.observation.RmqProcessContext;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The rmq.send and rmq.process observations against a real Redis, recorded by a {@link TestObservationRegistry}
 * (which also checks that each observation is started, scoped and stopped correctly, on the right threads).
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ObservationTest extends EngineTestSupport {

    ObservationTest(RedisTopology topology) {
        super(topology);
    }

    private static final String SECRET_BODY = "{\"iban\":\"DE89370400440532013000\"}";

    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private Rmq observed;

    @BeforeEach
    void observedEngine() {
        observed = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(new ObservationInstrumentation(registry)));
    }

    @org.junit.jupiter.api.AfterEach
    void closeObserved() {
        observed.close();
    }

    @Test
    void aSendIsObservedWithMessagingKeysAndNoBody() {
        observed.defineTopic("orders", TopicType.FIXED_TIME, 4);
        observed.producer().sendFixedTime("orders", SECRET_BODY, Instant.now());
        observed.producer().sendBatch(List.of(OutgoingMessage.fixedTime("orders", "{\"id\":1}", Instant.now()),
                OutgoingMessage.fixedTime("orders", "{\"id\":2}", Instant.now())));

        TestObservationRegistryAssert.assertThat(registry)
                .hasNumberOfObservationsWithNameEqualTo("rmq.send", 2)
                .forAllObservationsWithNameEqualTo("rmq.send", observation -> observation
                        .doesNotHaveError()
                        .hasContextualNameEqualTo("send orders")
                        .hasLowCardinalityKeyValue("messaging.system", "rmq")
                        .hasLowCardinalityKeyValue("messaging.destination.name", "orders")
                        .hasLowCardinalityKeyValue("messaging.operation.name", "send")
                        .hasLowCardinalityKeyValue("error.type", "none"))
                .hasAnObservationWithAKeyValue("messaging.batch.message_count", "2");
        assertNoKeyValueQuotes("DE89");
    }

    @Test
    void aRefusedSendIsObservedWithItsError() {
        observed.defineTopic("orders", TopicType.FIXED_TIME, 4);
        assertThatThrownBy(() -> observed.producer().sendPriority("orders", "{\"id\":1}", 1))
                .isInstanceOf(RmqInvalidArgumentException.class);
        TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("rmq.send").that()
                .hasBeenStopped().hasError()
                .hasLowCardinalityKeyValue("error.type", "RmqInvalidArgumentException");
    }

    @Test
    void eachHandlerCallIsObservedOnTheHandlerThreadWithItsListenerAndError() throws Exception {
        observed.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        List<String> handled = new CopyOnWriteArrayList<>();
        List<Observation> current = new CopyOnWriteArrayList<>();
        ConsumerSettings settings = new ConsumerSettings(10, Duration.ofSeconds(5),
                new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));
        ListenerContainer container = observed.container("jobs", settings, String.class,
                (String body, io.rmq.consumer.Delivery delivery) -> {
                    current.add(registry.getCurrentObservation()); // the process observation is in scope here
                    handled.add(body);
                    if (body.contains("fail")) {
                        throw new IllegalStateException("failing on purpose");
                    }
                }, new ContainerOptions("jobs-listener", 2, Duration.ofSeconds(1), Duration.ofSeconds(5), null));
        try (LogCapture log = LogCapture.rmq()) {
            container.start();
            try {
                observed.producer().sendFixedTime("jobs", "{\"job\":\"ok\"}", Instant.now());
                observed.producer().sendFixedTime("jobs", "{\"job\":\"fail\"}", Instant.now());
                await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 2 && observed.admin()
                        .deadCount("jobs") == 1);
            }
            finally {
                container.stop();
            }
            assertThat(log.warnings()).anySatisfy(line -> assertThat(line).contains("jobs/", "moved to the dead queue"));
        }
        assertThat(current).hasSize(2).allSatisfy(observation -> assertThat(observation.getContext())
                .isInstanceOf(RmqProcessContext.class));
        TestObservationRegistryAssert.assertThat(registry)
                .hasNumberOfObservationsWithNameEqualTo("rmq.process", 2)
                .forAllObservationsWithNameEqualTo("rmq.process", observation -> observation

                        .hasContextualNameEqualTo("process jobs")
                        .hasLowCardinalityKeyValue("messaging.system", "rmq")
                        .hasLowCardinalityKeyValue("messaging.destination.name", "jobs")
                        .hasLowCardinalityKeyValue("messaging.operation.name", "process")
                        .hasLowCardinalityKeyValue("rmq.listener.id", "jobs-listener")
                        .doesNotHaveLowCardinalityKeyValueWithKey("rmq.slot"))
                .hasAnObservation(observation -> observation.hasError()
                        .hasLowCardinalityKeyValue("error.type", "IllegalStateException"))
                .hasAnObservation(observation -> observation.doesNotHaveError()
                        .hasLowCardinalityKeyValue("error.type", "none"));
    }

    @Test
    void orderlyHandlerCallsAreObservedToo() {
        observed.defineTopic("ordered", TopicType.FIXED_TIME, 2);
        List<String> handled = new CopyOnWriteArrayList<>();
        ListenerContainer container = observed.container("ordered", FAST, String.class,
                (String body, io.rmq.consumer.Delivery delivery) -> handled.add(body),
                new ContainerOptions("ordered-listener", 1, Duration.ofSeconds(1), Duration.ofSeconds(5), null)
                        .withMode(ConsumeMode.ORDERLY));
        container.start();
        try {
            observed.producer().sendFixedTime("ordered", SECRET_BODY, Instant.now());
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 1);
        }
        finally {
            container.stop();
        }
        TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("rmq.process").that()
                .hasBeenStopped().hasLowCardinalityKeyValue("rmq.listener.id", "ordered-listener")
                .hasLowCardinalityKeyValue("messaging.destination.name", "ordered");
        assertNoKeyValueQuotes("DE89");
    }

    private void assertNoKeyValueQuotes(String fragment) {
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> {
            for (Observation.Context context : contexts) {
                for (KeyValue keyValue : context.getAllKeyValues()) {
                    assertThat(keyValue.getValue()).as(keyValue.getKey()).doesNotContain(fragment);
                }
                assertThat(context.getContextualName()).doesNotContain(fragment);
            }
        });
    }
}
