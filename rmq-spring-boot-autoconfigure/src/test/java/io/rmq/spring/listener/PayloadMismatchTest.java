package io.rmq.spring.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import io.rmq.admin.DeadMessage;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqHandler;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A body that does not match the listener's payload type (a required property missing, or of the wrong shape) is not
 * handled with nulls: it goes to the dead queue at once, its reason naming the type and the property, for records,
 * bean-style classes and generic payloads alike, nor does it fit an {@code @RmqHandler}'s type; well-formed bodies,
 * unknown properties included, are handled; {@code rmq.consumer.payload-mapping=lenient} restores the application
 * mapper's reading. Real Redis, Spring Boot's own JsonMapper.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class PayloadMismatchTest {

    record OrderRef(String id) {
    }

    record Envelope<T>(String kind, T item) {
    }

    record Customer(String name) {
    }

    record Shipment(Customer customer, @Nullable String note) {
    }

    /** Bean-style: a property left null once read is missing; one with an initial value has a default. */
    static class Refund {
        private String orderId;
        private String currency = "EUR";
        private @Nullable String reason;

        public String getOrderId() {
            return orderId;
        }

        public void setOrderId(String orderId) {
            this.orderId = orderId;
        }

        public String getCurrency() {
            return currency;
        }

        public void setCurrency(String currency) {
            this.currency = currency;
        }

        public @Nullable String getReason() {
            return reason;
        }

        public void setReason(@Nullable String reason) {
            this.reason = reason;
        }
    }

    static class Listeners {
        final BlockingQueue<String> handled = new LinkedBlockingQueue<>();

        @RmqListener(topic = "unpaid", type = "FIXED_TIME", slotAmount = "1")
        void close(OrderRef order) {
            handled.add("Closing unpaid order " + order.id());
        }

        @RmqListener(topic = "refunds", type = "FIXED_TIME", slotAmount = "1")
        void refund(Refund refund) {
            handled.add("refund " + refund.getOrderId() + " " + refund.getCurrency() + " " + refund.getReason());
        }

        @RmqListener(topic = "envelopes", type = "FIXED_TIME", slotAmount = "1")
        void envelope(Envelope<OrderRef> envelope) {
            handled.add("envelope " + envelope.kind() + " " + envelope.item().id());
        }

        @RmqListener(topic = "lists", type = "FIXED_TIME", slotAmount = "1")
        void list(List<OrderRef> orders) {
            handled.add("list " + orders.stream().map(OrderRef::id).toList());
        }

        @RmqListener(topic = "maps", type = "FIXED_TIME", slotAmount = "1")
        void map(Map<String, OrderRef> orders) {
            handled.add("map " + orders.keySet());
        }

        @RmqListener(topic = "shipments", type = "FIXED_TIME", slotAmount = "1")
        void ship(Shipment shipment) {
            handled.add("shipment " + shipment.customer().name());
        }

        @RmqListener(topic = "batches", type = "FIXED_TIME", slotAmount = "1", batch = "true")
        void batch(List<OrderRef> orders) {
            orders.forEach(order -> handled.add("batch " + order.id()));
        }
    }

    record RefundRequested(String orderId, String reason) {
    }

    @RmqListener(topic = "order-events", type = "FIXED_TIME", slotAmount = "1")
    static class OrderEvents {
        final BlockingQueue<String> handled = new LinkedBlockingQueue<>();

        @RmqHandler
        void refund(RefundRequested refund) {
            handled.add("refund " + refund.orderId() + " " + refund.reason());
        }

        @RmqHandler(isDefault = true)
        void other(String body) {
            handled.add("other " + body);
        }
    }

    private static ApplicationContextRunner app() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                .withPropertyValues(RedisTopology.STANDALONE.springProperties().entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new))
                .withPropertyValues("rmq.key-prefix=payload-" + UUID.randomUUID())
                .withBean("listeners", Listeners.class);
    }

    private static String type(String simpleName) {
        return PayloadMismatchTest.class.getName() + "$" + simpleName;
    }

    @Test
    void aBodyThatLacksARequiredPropertyOrHasOneOfTheWrongShapeIsDeadAtOnceNamingTheTypeAndTheProperty() {
        app().run(context -> {
            assertThat(context).hasNotFailed();
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            Listeners listeners = context.getBean(Listeners.class);
            Map<String, String> bad = Map.of(
                    "unpaid", "{\"orderId\":7}",
                    "refunds", "{\"currency\":\"USD\"}",
                    "envelopes", "{\"item\":{\"orderId\":7},\"kind\":\"close\"}",
                    "lists", "[{\"id\":\"o-1\"},{\"orderId\":7}]",
                    "maps", "{\"a\":{\"id\":\"o-1\"},\"b\":{}}",
                    "shipments", "{\"customer\":\"SECRET\"}",
                    "batches", "{\"orderId\":8}");
            try (LogCapture log = LogCapture.rmq().expecting("does not match")) {
                Instant now = Instant.now();
                bad.forEach((topic, body) -> rmq.sendFixedTime(topic, body, now));
                // well-formed bodies beside them, a property the type does not know included
                rmq.sendFixedTime("unpaid", "{\"extra\":true,\"id\":\"o-2\"}", now);
                rmq.sendFixedTime("refunds", "{\"orderId\":\"o-3\"}", now);
                rmq.sendFixedTime("envelopes", new Envelope<>("close", new OrderRef("o-4")), now);
                rmq.sendFixedTime("lists", List.of(new OrderRef("o-5")), now);
                rmq.sendFixedTime("maps", Map.of("c", new OrderRef("o-6")), now);
                rmq.sendFixedTime("shipments", new Shipment(new Customer("ann"), null), now);
                rmq.sendFixedTime("batches", new OrderRef("o-7"), now);
                await().atMost(Duration.ofSeconds(30)).until(() -> listeners.handled.size() >= 7
                        && bad.keySet().stream().allMatch(topic -> rmq.admin().deadCount(topic) == 1)
                        && log.warnings().size() == bad.size());
                assertThat(log.warnings()).as("one ERROR line per mismatch, no stack trace").hasSize(bad.size())
                        .allSatisfy(line -> assertThat(line).contains("moved to the dead queue: payload of")
                                .doesNotContain("SECRET"))
                        .anySatisfy(line -> assertThat(line).endsWith("moved to the dead queue: payload of 13 bytes"
                                + " does not match " + type("OrderRef") + ": missing required property 'id'"));
                assertThat(log.events()).allSatisfy(event -> assertThat(event.getThrowableProxy()).isNull());
            }
            assertThat(listeners.handled).containsExactlyInAnyOrder("Closing unpaid order o-2", "refund o-3 EUR null",
                    "envelope close o-4", "list [o-5]", "map [c]", "shipment ann", "batch o-7");
            Map<String, String> reasons = Map.of(
                    "unpaid", type("OrderRef") + ": missing required property 'id'",
                    "refunds", type("Refund") + ": required property 'orderId' is missing or null",
                    "envelopes", type("Envelope") + "<" + type("OrderRef") + ">: missing required property 'item.id'",
                    "lists", "java.util.List<" + type("OrderRef") + ">: missing required property '[1].id'",
                    "maps", "java.util.Map<java.lang.String, " + type("OrderRef") + ">: missing required property"
                            + " 'b.id'",
                    "shipments", type("Shipment") + ": property 'customer' has the wrong shape: a string where Customer"
                            + " is expected",
                    "batches", type("OrderRef") + ": missing required property 'id'");
            reasons.forEach((topic, reason) -> {
                DeadMessage dead = rmq.admin().deadMessages(topic, 0, 10).get(0);
                assertThat(dead.attempts()).as(topic + ": not retried").isEqualTo(1);
                assertThat(dead.bodyAsString()).isEqualTo(bad.get(topic));
                assertThat(dead.lastError()).as(topic).isEqualTo("payload of " + bad.get(topic).length()
                        + " bytes does not match " + reason);
            });
        });
    }

    @Test
    void withLogBodiesTheReasonShowsTheBody() {
        app().withPropertyValues("rmq.log-bodies=true").run(context -> {
            assertThat(context).hasNotFailed();
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            try (LogCapture log = LogCapture.rmq().expecting("does not match")) {
                rmq.sendFixedTime("unpaid", "{\"orderId\":7}", Instant.now());
                await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("unpaid") == 1
                        && log.warnings().size() == 1);
                assertThat(log.warnings()).singleElement().asString().endsWith("moved to the dead queue: payload"
                        + " {\"orderId\":7} does not match " + type("OrderRef") + ": missing required property 'id'");
            }
            assertThat(rmq.admin().deadMessages("unpaid", 0, 10)).singleElement()
                    .satisfies(dead -> assertThat(dead.lastError())
                    .isEqualTo("payload {\"orderId\":7} does not match " + type("OrderRef")
                            + ": missing required property 'id'"));
            assertThat(context.getBean(Listeners.class).handled).isEmpty();
        });
    }

    @Test
    void aBodyLackingARequiredPropertyDoesNotFitAnRmqHandlersTypeUnlessLenient() {
        Map<String, List<String>> expected = Map.of(
                "strict", List.of("other {\"orderId\":\"o-1\"}", "refund o-2 late"),
                "lenient", List.of("refund o-1 null", "refund o-2 late"));
        expected.forEach((mapping, handled) -> app().withBean("orderEvents", OrderEvents.class)
                .withPropertyValues("rmq.consumer.payload-mapping=" + mapping).run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqTemplate rmq = context.getBean(RmqTemplate.class);
                    OrderEvents events = context.getBean(OrderEvents.class);
                    rmq.sendFixedTime("order-events", "{\"orderId\":\"o-1\"}", Instant.now());
                    rmq.sendFixedTime("order-events", new RefundRequested("o-2", "late"), Instant.now());
                    await().atMost(Duration.ofSeconds(30)).until(() -> events.handled.size() >= 2);
                    assertThat(events.handled).as(mapping).containsExactlyInAnyOrderElementsOf(handled);
                }));
    }

    @Test
    void lenientPayloadMappingRestoresTheApplicationMappersReading() {
        app().withPropertyValues("rmq.consumer.payload-mapping=lenient").run(context -> {
            assertThat(context).hasNotFailed();
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            Listeners listeners = context.getBean(Listeners.class);
            Instant now = Instant.now();
            rmq.sendFixedTime("unpaid", "{\"orderId\":7}", now);
            rmq.sendFixedTime("refunds", "{\"currency\":\"USD\"}", now);
            rmq.sendFixedTime("lists", "[{\"orderId\":7}]", now);
            await().atMost(Duration.ofSeconds(30)).until(() -> listeners.handled.size() >= 3);
            assertThat(listeners.handled).containsExactlyInAnyOrder("Closing unpaid order null",
                    "refund null USD null", "list [null]");
            assertThat(rmq.admin().deadCount("unpaid") + rmq.admin().deadCount("refunds")
                    + rmq.admin().deadCount("lists")).isZero();
        });
    }
}
