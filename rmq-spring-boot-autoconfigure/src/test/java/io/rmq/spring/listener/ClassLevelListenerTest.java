package io.rmq.spring.listener;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageRef;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.RmqMessage;
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
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.SendTo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @RmqListener} on a class with {@code @RmqHandler} methods: one container, each message to the first handler
 * whose payload type its body fits (typed handlers in declaration order, then String, then the default), on a real
 * Redis (the dispatch standalone and on the cluster); what no handler takes is dead at once with the types tried.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class ClassLevelListenerTest {

    /** Nullable amount and reason: a body with the id alone fits both types (strict payload mapping). */
    record OrderCreated(String id, @Nullable BigDecimal amount) {
    }

    record OrderCancelled(String id, @Nullable String reason) {
    }

    /** The class's {@code @SendTo} serves handlers that return a value and have none of their own. */
    @RmqListener(topic = "order-events", type = "FIXED_TIME", slotAmount = "8")
    @SendTo("order-receipts")
    static class OrderEvents {
        final BlockingQueue<String> handled = new LinkedBlockingQueue<>();

        @RmqHandler
        void created(OrderCreated created, @Header(RmqHeaders.LISTENER_ID) String listenerId) {
            handled.add("created " + created.id() + " " + created.amount() + " by " + listenerId);
        }

        /** Declared before the others, but String takes any body: it is tried after every typed handler. */
        @RmqHandler
        void text(String text) {
            handled.add("text " + text);
        }

        @RmqHandler
        @SendTo("order-receipts")
        String cancelled(RmqMessage<OrderCancelled> message) {
            handled.add("cancelled " + message.payload().id() + " " + message.payload().reason() + " attempt "
                    + message.attempt());
            return "receipt-" + message.payload().id();
        }

        @RmqHandler
        String numbers(List<Integer> numbers) {
            handled.add("numbers " + numbers);
            return "sum-" + numbers.stream().mapToInt(Integer::intValue).sum();
        }
    }

    static class Receipts {
        final BlockingQueue<String> received = new LinkedBlockingQueue<>();

        @RmqListener(topic = "order-receipts", type = "FIXED_TIME", slotAmount = "4")
        void receipt(String receipt) {
            received.add(receipt);
        }
    }

    private ApplicationContextRunner app(RedisTopology topology) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                .withPropertyValues(topology.springProperties().entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new))
                .withPropertyValues("rmq.key-prefix=class-level-" + UUID.randomUUID());
    }

    @Test
    void eachMessageGoesToTheFirstHandlerItsBodyFits() {
        dispatchesByPayloadType(RedisTopology.STANDALONE);
    }

    @Test
    void eachMessageGoesToTheFirstHandlerItsBodyFitsOnTheCluster() {
        dispatchesByPayloadType(RedisTopology.CLUSTER);
    }

    private void dispatchesByPayloadType(RedisTopology topology) {
        app(topology).withBean("orderEvents", OrderEvents.class).withBean("receipts", Receipts.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RmqListenerEndpointRegistry.class).getListenerContainerIds())
                    .as("one container for the class, its id the bean name")
                    .containsExactlyInAnyOrder("orderEvents", "receipts.receipt");
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            Instant now = Instant.now();
            rmq.sendFixedTime("order-events", new OrderCreated("1", new BigDecimal("5")), now);
            rmq.sendFixedTime("order-events", new OrderCancelled("2", "late"), now);
            rmq.sendFixedTime("order-events", List.of(1, 2), now);
            rmq.sendFixedTime("order-events", "hello", now);
            // a property neither record has: no typed handler fits, the String handler takes it
            rmq.sendFixedTime("order-events", "{\"colour\":\"red\",\"id\":\"5\"}", now);
            // fits both records (no unknown property): the handler declared first takes it
            rmq.sendFixedTime("order-events", "{\"id\":\"3\"}", now);
            OrderEvents events = context.getBean(OrderEvents.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> events.handled.size() >= 6);
            assertThat(events.handled).containsExactlyInAnyOrder("created 1 5 by orderEvents",
                    "cancelled 2 late attempt 1", "numbers [1, 2]", "text hello",
                    "text {\"colour\":\"red\",\"id\":\"5\"}", "created 3 null by orderEvents");
            Receipts receipts = context.getBean(Receipts.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> receipts.received.size() >= 2);
            assertThat(receipts.received).as("the handler's @SendTo, the class's for the handler without one")
                    .containsExactlyInAnyOrder("receipt-2", "sum-3");
        });
    }

    @RmqListener(topic = "payments", type = "FIXED_TIME", slotAmount = "4")
    static class Payments {
        final BlockingQueue<String> handled = new LinkedBlockingQueue<>();

        @RmqHandler(isDefault = true)
        void other(Map<String, Object> fields) {
            handled.add("other " + fields);
        }

        @RmqHandler
        void created(OrderCreated created) {
            handled.add("created " + created.id());
        }
    }

    @RmqListener(id = "strict", topic = "strict", type = "FIXED_TIME", slotAmount = "4")
    static class Strict {
        final BlockingQueue<String> handled = new LinkedBlockingQueue<>();

        /** Overloads: told apart by their parameter types, tried in the order written. */
        @RmqHandler
        void on(OrderCancelled cancelled) {
            handled.add("cancelled " + cancelled.id());
        }

        @RmqHandler
        void on(OrderCreated created) {
            handled.add("created " + created.id());
        }
    }

    @Test
    void theDefaultHandlerTakesWhatNoOtherTakesAndWhatNoneCanReadIsDeadAtOnceNamingTheTypesTried() {
        app(RedisTopology.STANDALONE).withBean("payments", Payments.class).withBean("strict", Strict.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqTemplate rmq = context.getBean(RmqTemplate.class);
                    Payments payments = context.getBean(Payments.class);
                    Strict strict = context.getBean(Strict.class);
                    try (LogCapture log = LogCapture.rmq().expecting("no @RmqHandler takes this body")) {
                        Instant now = Instant.now();
                        rmq.sendFixedTime("payments", new OrderCreated("1", BigDecimal.ONE), now);
                        rmq.sendFixedTime("payments", "{\"refund\":true}", now);
                        rmq.sendFixedTime("payments", "not json", now);
                        rmq.sendFixedTime("strict", "{\"id\":\"9\"}", now);
                        rmq.sendFixedTime("strict", "{\"amount\":2,\"id\":\"8\"}", now);
                        rmq.sendFixedTime("strict", "[1]", now);
                        await().atMost(Duration.ofSeconds(30)).until(() -> payments.handled.size() == 2
                                && strict.handled.size() == 2
                                && rmq.admin().find(MessageRef.body("payments", "not json")).isDead()
                                && rmq.admin().find(MessageRef.body("strict", "[1]")).isDead()
                                && log.warnings().size() == 2);
                        assertThat(log.warnings()).allSatisfy(line -> assertThat(line).contains("will not be retried"));
                    }
                    assertThat(payments.handled).containsExactlyInAnyOrder("created 1", "other {refund=true}");
                    assertThat(strict.handled).containsExactlyInAnyOrder("cancelled 9", "created 8");
                    DeadMessage notJson = rmq.admin().deadMessages("payments", 0, 10).get(0);
                    assertThat(notJson.attempts()).as("not retried").isEqualTo(1);
                    assertThat(notJson.lastError()).startsWith("io.rmq.consumer.RmqNonRetryableException:"
                            + " @RmqListener on bean 'payments' class 'Payments': no @RmqHandler takes this body"
                            + " (tried [OrderCreated]) and the default handler 'Payments.other' cannot read it as"
                            + " Map<String, Object>: Unrecognized token 'not'");
                    DeadMessage array = rmq.admin().deadMessages("strict", 0, 10).get(0);
                    assertThat(array.attempts()).isEqualTo(1);
                    assertThat(array.lastError()).isEqualTo("io.rmq.consumer.RmqNonRetryableException:"
                            + " @RmqListener on bean 'strict' class 'Strict': no @RmqHandler takes this body (tried"
                            + " [OrderCancelled, OrderCreated], in this order) and there is no"
                            + " @RmqHandler(isDefault = true)");
                });
    }

    static class BaseHandlers {
        @RmqHandler
        void zeta(OrderCreated created) {
        }

        @RmqHandler
        void alpha(OrderCancelled cancelled) {
        }
    }

    static class SubHandlers extends BaseHandlers {
        @RmqHandler
        void on(List<String> list) {
        }

        @RmqHandler
        void on(Map<String, String> map) {
        }

        @RmqHandler
        void first(String text) {
        }
    }

    @Test
    void handlersAreOrderedAsDeclaredOverloadsIncludedASubclassBeforeItsSuperclass() throws Exception {
        List<java.lang.reflect.Method> methods = List.of(BaseHandlers.class.getDeclaredMethod("alpha",
                OrderCancelled.class), SubHandlers.class.getDeclaredMethod("first", String.class),
                BaseHandlers.class.getDeclaredMethod("zeta", OrderCreated.class),
                SubHandlers.class.getDeclaredMethod("on", Map.class), SubHandlers.class.getDeclaredMethod("on",
                        List.class));
        assertThat(RmqListenerAnnotationBeanPostProcessor.inDeclarationOrder(SubHandlers.class, methods))
                .extracting(m -> m.getName() + "(" + m.getParameterTypes()[0].getSimpleName() + ")")
                .containsExactly("on(List)", "on(Map)", "first(String)", "zeta(OrderCreated)",
                        "alpha(OrderCancelled)");
    }

    static class HandlersOnly {
        @RmqHandler
        void on(String body) {
        }
    }

    @RmqListener(topic = "t", type = "FIXED_TIME")
    static class NoHandlers {
        void on(String body) {
        }
    }

    @RmqListener(topic = "t", type = "FIXED_TIME")
    static class BothAnnotations {
        @RmqHandler
        @RmqListener(topic = "u", type = "FIXED_TIME")
        void on(String body) {
        }
    }

    @RmqListener(topic = "t", type = "FIXED_TIME")
    static class TwoDefaults {
        @RmqHandler(isDefault = true)
        void first(String body) {
        }

        @RmqHandler(isDefault = true)
        void second(byte[] body) {
        }
    }

    @RmqListener(topic = "t", type = "FIXED_TIME")
    static class OneTypeTwice {
        @RmqHandler
        void first(OrderCreated created) {
        }

        @RmqHandler
        void second(RmqMessage<OrderCreated> created) {
        }
    }

    @RmqListener(topic = "t", type = "FIXED_TIME")
    static class BadHandlerSignature {
        @RmqHandler
        void on(String a, String b) {
        }
    }

    @RmqListener(topic = "t", type = "FIXED_TIME", batch = "true")
    static class BatchOfHandlers {
        @RmqHandler
        void on(String body) {
        }
    }

    @Test
    void unusableClassLevelListenersFailStartUpNamingTheBeanAndTheMethods() {
        assertFailure(HandlersOnly.class, "@RmqHandler methods [HandlersOnly.on] on bean 'listener' (HandlersOnly)"
                + " need @RmqListener on the class");
        assertFailure(NoHandlers.class, "@RmqListener on bean 'listener' class 'NoHandlers': the class has no"
                + " @RmqHandler methods to deliver to");
        assertFailure(BothAnnotations.class, "@RmqListener on bean 'listener' class 'BothAnnotations': method"
                + " 'BothAnnotations.on' has both @RmqListener and @RmqHandler");
        assertFailure(TwoDefaults.class, "@RmqListener on bean 'listener' class 'TwoDefaults': @RmqHandler method"
                + " 'TwoDefaults.second': it is a second @RmqHandler(isDefault = true), after 'TwoDefaults.first'");
        assertFailure(OneTypeTwice.class, "@RmqListener on bean 'listener' class 'OneTypeTwice': @RmqHandler method"
                + " 'OneTypeTwice.second': it takes " + OrderCreated.class.getName() + " as 'OneTypeTwice.first'"
                + " does, so one of them would never be called");
        assertFailure(BadHandlerSignature.class, "@RmqHandler method 'BadHandlerSignature.on': the method takes 2"
                + " payload parameters");
        assertFailure(BatchOfHandlers.class, "listener 'listener': attribute batch 'true' cannot be used on a class"
                + " with @RmqHandler methods");
    }

    private void assertFailure(Class<?> listenerClass, String fragment) {
        app(RedisTopology.STANDALONE).withBean("listener", listenerClass).run(context -> {
            assertThat(context).hasFailed();
            StringBuilder messages = new StringBuilder();
            for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString()).contains(fragment);
        });
    }
}
