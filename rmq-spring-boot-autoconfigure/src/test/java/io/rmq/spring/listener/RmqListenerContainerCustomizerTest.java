package io.rmq.spring.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
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
import org.springframework.core.annotation.Order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link RmqListenerContainerCustomizer} beans adjust the containers the auto-configured factory builds: every one
 * for all listeners, in order, after the annotation and the properties; {@code forListener} for one listener id.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class RmqListenerContainerCustomizerTest {

    private final ApplicationContextRunner app = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.propertyValues("customizer-" + UUID.randomUUID()));

    static class Listener {
        final List<String> handled = new CopyOnWriteArrayList<>();
        final List<Long> startedAt = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "customized", type = "FIXED_TIME", slotAmount = "4", concurrency = "1")
        void handle(String body) {
            startedAt.add(System.currentTimeMillis());
            handled.add(body);
        }
    }

    static class Other {
        final List<String> handled = new CopyOnWriteArrayList<>();

        @RmqListener(topic = "other", type = "FIXED_TIME", slotAmount = "4", concurrency = "1")
        void handle(String body) {
            handled.add(body);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Customizers {
        /** Registered first, applied second: the order is the beans' order, not their registration. */
        @Bean
        @Order(2)
        RmqListenerContainerCustomizer oneListener() {
            return RmqListenerContainerCustomizer.forListener("other.handle", container -> {
                container.options(container.options().withConcurrency(container.options().concurrency() + 2));
                container.settings(container.settings().withBatchSize(1));
            });
        }

        @Bean
        @Order(1)
        RmqListenerContainerCustomizer allListeners() {
            return container -> container.options(container.options().withConcurrency(3));
        }
    }

    @Test
    void customizersApplyToEveryListenerInTheirOrderAndByIdToOne() {
        app.withBean("listener", Listener.class).withBean("other", Other.class)
                .withUserConfiguration(Customizers.class).run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqListenerEndpointRegistry registry = context.getBean(RmqListenerEndpointRegistry.class);
                    assertThat(registry.getListenerContainer("listener.handle").concurrency()).isEqualTo(3);
                    assertThat(registry.getListenerContainer("other.handle").concurrency()).isEqualTo(5);
                    // the containers built from the customized options work
                    RmqTemplate rmq = context.getBean(RmqTemplate.class);
                    rmq.sendFixedTime("customized", "a", Instant.now());
                    rmq.sendFixedTime("other", "b", Instant.now());
                    await().atMost(Duration.ofSeconds(30)).until(() -> context.getBean(Listener.class).handled
                            .contains("a") && context.getBean(Other.class).handled.contains("b"));
                });
    }

    @Test
    void theLookAheadPropertyReachesTheListenersSettingsAndTheListenerHandlesNotBeforeTheDueTime() {
        List<Duration> seen = new CopyOnWriteArrayList<>();
        app.withPropertyValues("rmq.consumer.look-ahead=300ms").withBean("listener", Listener.class)
                .withBean(RmqListenerContainerCustomizer.class, () -> container -> seen.add(
                        container.settings().lookAhead()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(seen).containsExactly(Duration.ofMillis(300));
                    Listener listener = context.getBean(Listener.class);
                    Instant due = Instant.now().plusMillis(1500);
                    context.getBean(RmqTemplate.class).sendFixedTime("customized", "ahead", due);
                    await().atMost(Duration.ofSeconds(30)).until(() -> listener.handled.contains("ahead"));
                    // Redis's clock is this host's; the container's estimate of it is off by a rounding at most
                    assertThat(listener.startedAt.get(0)).isGreaterThanOrEqualTo(due.toEpochMilli() - 5);
                });
    }

    static class AheadByAttribute {
        @RmqListener(topic = "ahead", type = "FIXED_TIME", slotAmount = "4", lookAhead = "50ms")
        void handle(String body) {
        }
    }

    static class TooFarAhead {
        @RmqListener(topic = "ahead", type = "FIXED_TIME", slotAmount = "4", lease = "1s", lookAhead = "500ms")
        void handle(String body) {
        }
    }

    @Test
    void theLookAheadAttributeWinsOverThePropertyAndIsCheckedAgainstTheListenersLease() {
        List<Duration> seen = new CopyOnWriteArrayList<>();
        app.withPropertyValues("rmq.consumer.look-ahead=300ms").withBean("ahead", AheadByAttribute.class)
                .withBean(RmqListenerContainerCustomizer.class, () -> container -> seen.add(
                        container.settings().lookAhead()))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(seen).containsExactly(Duration.ofMillis(50));
                });
        app.withBean("tooFar", TooFarAhead.class).run(context -> assertThat(context).getFailure().rootCause()
                .hasMessageContaining("lookAhead").hasMessageContaining("PT0.5S")
                .hasMessageContaining("a third of the lease"));
    }

    @Test
    void withoutCustomizersTheAnnotationDecides() {
        app.withBean("listener", Listener.class).run(context -> {
            assertThat(context.getBean(RmqListenerContainerFactory.class).getContainerCustomizers()).isEmpty();
            assertThat(context.getBean(RmqListenerEndpointRegistry.class).getListenerContainer("listener.handle")
                    .concurrency()).isEqualTo(1);
        });
    }

    @Test
    void aCustomizerThatChangesTheContainerIdFailsStartUpNamingBothIds() {
        app.withBean("listener", Listener.class)
                .withBean(RmqListenerContainerCustomizer.class, () -> container -> container.options(
                        new io.rmq.container.ContainerOptions("renamed", 1, Duration.ofSeconds(1), Duration.ZERO,
                                null)))
                .run(context -> assertThat(context).getFailure().rootCause().hasMessageContaining(
                        "A customizer of listener 'listener.handle' cannot change the container id (to 'renamed')"));
    }
}
