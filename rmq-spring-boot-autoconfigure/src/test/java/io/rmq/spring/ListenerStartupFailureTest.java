package io.rmq.spring;

import java.util.List;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** Unusable listeners fail start-up with the bean, the method and the problem named; usable ones start in any order. */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class ListenerStartupFailureTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.propertyValues("sf-" + UUID.randomUUID()));

    static class TwoParameters {
        @RmqListener(topic = "t", type = "PRIORITY")
        void handle(String a, String b) {
        }
    }

    static class NoParameter {
        @RmqListener(topic = "t", type = "PRIORITY")
        void handle() {
        }
    }

    static class UndefinedTopic {
        @RmqListener(topic = "never-defined")
        void handle(String body) {
        }
    }

    static class BadConcurrency {
        @RmqListener(topic = "t", type = "PRIORITY", concurrency = "many")
        void handle(String body) {
        }
    }

    static class BadSlotAmount {
        @RmqListener(topic = "t", type = "PRIORITY", slotAmount = "10")
        void handle(String body) {
        }
    }

    static class ConflictsWithProperties {
        @RmqListener(topic = "orders", type = "PRIORITY")
        void handle(String body) {
        }
    }

    static class Wildcard {
        @RmqListener(topic = "t", type = "PRIORITY")
        void handle(List<?> body) {
        }
    }

    static class DeadLetterListener {
        @RmqListener(topic = "orders.dlt")
        void handle(String body) {
        }
    }

    static class OrdersListener {
        @RmqListener(topic = "orders", deadLetterTopic = "orders.dlt")
        void handle(String body) {
        }
    }

    static class ReplyWithoutTimeRange {
        @RmqListener(topic = "t", type = "RANGE_MERGE")
        @org.springframework.messaging.handler.annotation.SendTo("t")
        String handle(String body) {
            return body;
        }
    }

    static class ReplyParameterOfAnotherType {
        @RmqListener(topic = "t", type = "PRIORITY")
        @org.springframework.messaging.handler.annotation.SendTo("orders")
        @io.rmq.spring.annotation.RmqReply(priority = "3")
        String handle(String body) {
            return body;
        }
    }

    static class ReplyFromVoid {
        @RmqListener(topic = "t", type = "PRIORITY")
        @org.springframework.messaging.handler.annotation.SendTo("orders")
        void handle(String body) {
        }
    }

    @Test
    void aReplyToARangeMergeTopicNeedsATimeRange() {
        assertFailure(ReplyWithoutTimeRange.class, "@SendTo topic 't' is RANGE_MERGE: set @RmqReply(timeRange = ...)");
    }

    @Test
    void aReplyParameterMustFitTheReplyTopicsType() {
        assertFailure(ReplyParameterOfAnotherType.class,
                "@RmqReply(priority) does not fit @SendTo topic 'orders', which is FIXED_TIME (it takes delay)");
    }

    @Test
    void sendToNeedsAReturnValue() {
        assertFailure(ReplyFromVoid.class, "the method returns void");
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
    }

    private void assertFailure(Class<?> listenerClass, String... fragments) {
        runner.withPropertyValues("rmq.topics.orders.type=FIXED_TIME")
                .withBean("myListener", listenerClass).run(context -> {
                    assertThat(context).hasFailed();
                    Throwable failure = context.getStartupFailure();
                    StringBuilder messages = new StringBuilder();
                    for (Throwable t = failure; t != null; t = t.getCause()) {
                        messages.append(t.getMessage()).append('\n');
                    }
                    assertThat(messages.toString()).contains("@RmqListener on bean 'myListener' method '"
                            + listenerClass.getSimpleName() + ".handle'");
                    for (String fragment : fragments) {
                        assertThat(messages.toString()).contains(fragment);
                    }
                });
    }

    @Test
    void aListenerOnADeadLetterTopicMayBeDeclaredBeforeTheListenerItServes() {
        runner.withPropertyValues("rmq.topics.orders.type=FIXED_TIME", "rmq.topics.orders.slot-amount=4")
                .withBean("deadLetters", DeadLetterListener.class).withBean("orders", OrdersListener.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Rmq.class).topics().get("orders.dlt"))
                            .isEqualTo(new TopicDefinition("orders.dlt", TopicType.FIXED_TIME, 4, ConsumeMode.CONCURRENT));
                    assertThat(context.getBean(RmqListenerEndpointRegistry.class).getListenerContainers())
                            .extracting(ListenerContainer::topic).containsExactlyInAnyOrder("orders", "orders.dlt");
                });
    }

    @Test
    void twoParameters() {
        assertFailure(TwoParameters.class, "takes 2 payload parameters", "must take at most one");
    }

    @Test
    void noParameter() {
        assertFailure(NoParameter.class, "takes 0");
    }

    @Test
    void undefinedTopic() {
        assertFailure(UndefinedTopic.class, "Invalid topic 'never-defined'", "rmq.topics.never-defined.type");
    }

    @Test
    void unreadableAttribute() {
        assertFailure(BadConcurrency.class, "attribute concurrency 'many' cannot be read");
    }

    @Test
    void slotAmountNotAPowerOfTwo() {
        assertFailure(BadSlotAmount.class, "Invalid slotAmount '10': must be a power of two");
    }

    @Test
    void definitionConflictingWithProperties() {
        assertFailure(ConflictsWithProperties.class, "topic 'orders' type=FIXED_TIME slotAmount=16",
                "topic 'orders' type=PRIORITY slotAmount=16");
    }

    @Test
    void wildcardPayloadIsStillConcrete() {
        runner.withBean("myListener", Wildcard.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void duplicateContainerIds() {
        runner.withBean("a", DuplicateIdA.class).withBean("b", DuplicateIdB.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("already has the id 'same'");
        });
    }

    static class DuplicateIdA {
        @RmqListener(id = "same", topic = "t1", type = "PRIORITY")
        void handle(String body) {
        }
    }

    static class DuplicateIdB {
        @RmqListener(id = "same", topic = "t2", type = "PRIORITY")
        void handle(String body) {
        }
    }

    @Bean
    Beans unused() {
        return new Beans();
    }
}
