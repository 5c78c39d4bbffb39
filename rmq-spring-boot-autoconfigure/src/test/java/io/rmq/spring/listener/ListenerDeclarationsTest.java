package io.rmq.spring.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.Rmq;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.autoconfigure.diagnostics.RmqListenerFailureAnalyzer;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.handler.annotation.Header;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How listeners are declared, on a standalone Redis: repeated {@code @RmqListener}s (one container each, distinct
 * default ids), SpEL in attributes, {@code containerFactory} naming a factory bean; and the start-up errors of each.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class ListenerDeclarationsTest {

    private final ApplicationContextRunner app = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.springProperties().entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new))
            .withPropertyValues("rmq.key-prefix=declare-" + UUID.randomUUID());

    static class TwoTopics {
        final List<String> handled = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "first", type = "FIXED_TIME", slotAmount = "4")
        @RmqListener(topic = "second", type = "FIXED_TIME", slotAmount = "4", concurrency = "2")
        void handle(String body, @Header(RmqHeaders.LISTENER_ID) String listenerId) {
            handled.add(listenerId + ":" + body);
        }
    }

    @Test
    void twoListenersOnOneMethodGiveTwoContainersTheSecondWithANumberedDefaultId() {
        app.withBean("twoTopics", TwoTopics.class).run(context -> {
            assertThat(context).hasNotFailed();
            RmqListenerEndpointRegistry registry = context.getBean(RmqListenerEndpointRegistry.class);
            assertThat(registry.getListenerContainerIds()).containsExactlyInAnyOrder("twoTopics.handle",
                    "twoTopics.handle-2");
            assertThat(registry.getListenerContainer("twoTopics.handle").topic()).isEqualTo("first");
            assertThat(registry.getListenerContainer("twoTopics.handle-2").topic()).isEqualTo("second");
            assertThat(registry.getListenerContainer("twoTopics.handle-2").concurrency()).isEqualTo(2);
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            rmq.sendFixedTime("first", "a", Instant.now());
            rmq.sendFixedTime("second", "b", Instant.now());
            TwoTopics listener = context.getBean(TwoTopics.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> listener.handled.size() == 2);
            assertThat(listener.handled).containsExactlyInAnyOrder("twoTopics.handle:a", "twoTopics.handle-2:b");
        });
    }

    static class RepeatedWithIds {
        @RmqListener(id = "audit-first", topic = "first", type = "FIXED_TIME", slotAmount = "4")
        @RmqListener(id = "audit-second", topic = "second", type = "FIXED_TIME", slotAmount = "4")
        void handle(String body) {
        }
    }

    @Test
    void repeatedListenersMayNameTheirIds() {
        app.withBean("audit", RepeatedWithIds.class).run(context -> assertThat(context
                .getBean(RmqListenerEndpointRegistry.class).getListenerContainerIds())
                .containsExactlyInAnyOrder("audit-first", "audit-second"));
    }

    static class SameIdA {
        @RmqListener(id = "billing", topic = "first", type = "FIXED_TIME", slotAmount = "4")
        void onFirst(String body) {
        }
    }

    static class SameIdB {
        @RmqListener(id = "billing", topic = "second", type = "FIXED_TIME", slotAmount = "4")
        void onSecond(String body) {
        }
    }

    @Test
    void twoListenersWithOneIdFailStartUpNamingBothMethods() {
        app.withBean("a", SameIdA.class).withBean("b", SameIdB.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessage("@RmqListener on bean 'b' method"
                    + " 'SameIdB.onSecond': @RmqListener on bean 'a' method 'SameIdA.onFirst' already has the id"
                    + " 'billing'; listener ids must be unique: set distinct ids");
            FailureAnalysis analysis = new RmqListenerFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).contains("Listener: @RmqListener on bean 'b' method"
                    + " 'SameIdB.onSecond'\n    Problem:  @RmqListener on bean 'a' method 'SameIdA.onFirst' already"
                    + " has the id 'billing'");
            assertThat(analysis.getAction()).startsWith("Give each listener its own id");
        });
    }

    static class RepeatedSameId {
        @RmqListener(id = "twice", topic = "first", type = "FIXED_TIME", slotAmount = "4")
        @RmqListener(id = "twice", topic = "second", type = "FIXED_TIME", slotAmount = "4")
        void handle(String body) {
        }
    }

    @Test
    void repeatedListenersWithOneIdFailStartUp() {
        app.withBean("repeated", RepeatedSameId.class).run(context -> assertThat(context).getFailure().rootCause()
                .hasMessageContaining("already has the id 'twice'"));
    }

    /** A bean whose property names a topic, for {@code #{@names.topic}}. */
    public static class Names {
        public String getTopic() {
            return "spel-topic";
        }
    }

    static class Expressions {
        final List<String> handled = new CopyOnWriteArrayList<>();

        @RmqListener(id = "#{'${listener.name}'.toUpperCase()}", topic = "#{@names.topic}",
                type = "#{'fixed_time'.toUpperCase()}", slotAmount = "#{2 * 2}", concurrency = "#{1 + ${extra}}")
        void handle(String body) {
            handled.add(body);
        }
    }

    @Test
    void attributesTakeSpelAfterPlaceholders() {
        app.withPropertyValues("listener.name=spelled", "extra=2").withBean("names", Names.class)
                .withBean("expressions", Expressions.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqListenerEndpointRegistry registry = context.getBean(RmqListenerEndpointRegistry.class);
                    assertThat(registry.getListenerContainerIds()).containsExactly("SPELLED");
                    assertThat(registry.getListenerContainer("SPELLED").topic()).isEqualTo("spel-topic");
                    assertThat(registry.getListenerContainer("SPELLED").concurrency()).isEqualTo(3);
                    assertThat(context.getBean(Rmq.class).topics().get("spel-topic").slotAmount()).isEqualTo(4);
                    context.getBean(RmqTemplate.class).sendFixedTime("spel-topic", "x", Instant.now());
                    await().atMost(Duration.ofSeconds(30)).until(() -> context.getBean(Expressions.class).handled
                            .contains("x"));
                });
    }

    static class BadExpression {
        @RmqListener(topic = "#{@missing.topic}", type = "FIXED_TIME")
        void handle(String body) {
        }
    }

    @Test
    void anExpressionThatFailsFailsStartUpNamingTheListener() {
        app.withBean("bad", BadExpression.class).run(context -> assertThat(context).getFailure()
                .hasMessageContaining("@RmqListener on bean 'bad' method 'BadExpression.handle': ")
                .hasMessageContaining("expression '#{@missing.topic}' cannot be evaluated: No bean named 'missing'"));
    }

    static class TwoFactories {
        final List<String> handled = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "bulk", type = "FIXED_TIME", slotAmount = "4", containerFactory = "bulkFactory")
        void bulk(String body) {
            handled.add("bulk:" + body);
        }

        @RmqListener(topic = "plain", type = "FIXED_TIME", slotAmount = "4")
        void plain(String body) {
            handled.add("plain:" + body);
        }
    }

    /** The listener ids the customizer of {@link BulkFactory} was applied to. */
    static final List<String> BULK_CUSTOMIZED = new CopyOnWriteArrayList<>();

    @Configuration(proxyBeanMethods = false)
    static class BulkFactory {
        /** Built from the auto-configured factory: another default concurrency and a customizer of its own. */
        @Bean
        RmqListenerContainerFactory bulkFactory(
                @Qualifier("rmqListenerContainerFactory") RmqListenerContainerFactory standard) {
            RmqListenerContainerFactory bulk = standard.withDefaultConcurrency(4);
            bulk.setContainerCustomizers(List.of(container -> BULK_CUSTOMIZED.add(container.listenerId())));
            return bulk;
        }
    }

    @Test
    void containerFactoryNamesTheFactoryBeanThatBuildsTheContainerAndTheOthersUseTheAutoConfiguredOne() {
        BULK_CUSTOMIZED.clear();
        app.withUserConfiguration(BulkFactory.class).withBean("listeners", TwoFactories.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBeansOfType(RmqListenerContainerFactory.class)).containsOnlyKeys(
                    "rmqListenerContainerFactory", "bulkFactory");
            RmqListenerEndpointRegistry registry = context.getBean(RmqListenerEndpointRegistry.class);
            assertThat(registry.getListenerContainer("listeners.bulk").concurrency()).isEqualTo(4);
            assertThat(registry.getListenerContainer("listeners.plain").concurrency()).isEqualTo(1);
            assertThat(BULK_CUSTOMIZED).containsExactly("listeners.bulk");
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            rmq.sendFixedTime("bulk", "a", Instant.now());
            rmq.sendFixedTime("plain", "b", Instant.now());
            TwoFactories listeners = context.getBean(TwoFactories.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> listeners.handled.size() == 2);
            assertThat(listeners.handled).containsExactlyInAnyOrder("bulk:a", "plain:b");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnDefaultFactory {
        /** Named as the auto-configured one: replaces it, and listeners without containerFactory use it. */
        @Bean
        RmqListenerContainerFactory rmqListenerContainerFactory(Rmq rmq) {
            return new RmqListenerContainerFactory(rmq, io.rmq.consumer.ConsumerSettings.DEFAULT, 5,
                    java.util.concurrent.Executors.defaultThreadFactory(), Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(5));
        }
    }

    @Test
    void aFactoryBeanNamedRmqListenerContainerFactoryReplacesTheAutoConfiguredOne() {
        app.withUserConfiguration(OwnDefaultFactory.class).withBean("listeners", TwoFactories.class)
                .withUserConfiguration(BulkFactory.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBeansOfType(RmqListenerContainerFactory.class)).hasSize(2);
                    RmqListenerEndpointRegistry registry = context.getBean(RmqListenerEndpointRegistry.class);
                    assertThat(registry.getListenerContainer("listeners.plain").concurrency()).isEqualTo(5);
                    assertThat(registry.getListenerContainer("listeners.bulk").concurrency()).isEqualTo(4);
                });
    }

    static class UnknownFactory {
        @RmqListener(topic = "bulk", type = "FIXED_TIME", containerFactory = "${factory.name}")
        void handle(String body) {
        }
    }

    @Test
    void anUnknownContainerFactoryFailsStartUpNamingTheListenerAndTheName() {
        app.withPropertyValues("factory.name=bulkFactroy").withUserConfiguration(BulkFactory.class)
                .withBean("orders", UnknownFactory.class).run(context -> assertThat(context).getFailure()
                        .hasMessage("@RmqListener on bean 'orders' method 'UnknownFactory.handle':"
                                + " containerFactory 'bulkFactroy' is not a bean; the RmqListenerContainerFactory"
                                + " beans are [bulkFactory, rmqListenerContainerFactory]")
                        .satisfies(failure -> assertThat(new RmqListenerFailureAnalyzer().analyze(failure).getAction())
                                .startsWith("Name an RmqListenerContainerFactory bean")));
    }

    static class FactoryOfWrongType {
        @RmqListener(topic = "bulk", type = "FIXED_TIME", containerFactory = "rmqTemplate")
        void handle(String body) {
        }
    }

    @Test
    void aContainerFactoryThatIsAnotherKindOfBeanFailsStartUp() {
        app.withBean("orders", FactoryOfWrongType.class).run(context -> assertThat(context).getFailure()
                .hasMessageStartingWith("@RmqListener on bean 'orders' method 'FactoryOfWrongType.handle':"
                        + " containerFactory 'rmqTemplate' is a io.rmq.spring.RmqTemplate, not an"
                        + " RmqListenerContainerFactory"));
    }
}
