package io.rmq.modulith;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.rmq.Rmq;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;
import org.springframework.modulith.events.support.EventExternalizerModuleListener;

import static org.assertj.core.api.Assertions.assertThat;

/** When RMQ becomes Modulith's externalization target, and what replaces or switches it off. */
@ExtendWith(RedisServersExtension.class)
class RmqModulithAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class, EventExternalizationAutoConfiguration.class,
                    RmqModulithAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.propertyValues("modulith-ac-" + UUID.randomUUID()))
            .withBean(EventExternalizationConfiguration.class,
                    () -> EventExternalizationConfiguration.defaults("io.rmq.modulith.shop").build());

    @Test
    void withModulithsEventsAndRmqTheTransportAndModulithsListenerAreThere() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(RmqEventExternalizationTransport.class);
            assertThat(context.getBean(RmqModulithAutoConfiguration.EXTERNALIZER))
                    .isInstanceOf(EventExternalizerModuleListener.class);
        });
    }

    @Test
    void theApplicationsOwnTransportReplacesRmqs() {
        runner.withUserConfiguration(OwnTransport.class)
                .run(context -> assertThat(context).hasNotFailed().getBean(RmqEventExternalizationTransport.class)
                        .isSameAs(context.getBean("ownTransport")));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnTransport {

        @Bean
        RmqEventExternalizationTransport ownTransport(Rmq rmq, EventExternalizationConfiguration configuration,
                BeanFactory beanFactory) {
            return new RmqEventExternalizationTransport(rmq, configuration, beanFactory, true);
        }
    }

    @Test
    void theApplicationsOwnExternalizerOfThatNameReplacesRmqs() {
        EventExternalizerModuleListener own = new EventExternalizerModuleListener(
                EventExternalizationConfiguration.disabled(), (payload, target) -> CompletableFuture.completedFuture(1));
        runner.withBean(RmqModulithAutoConfiguration.EXTERNALIZER, EventExternalizerModuleListener.class, () -> own)
                .run(context -> assertThat(context).hasNotFailed()
                        .getBean(RmqModulithAutoConfiguration.EXTERNALIZER).isSameAs(own));
    }

    @Test
    void withoutModulithThereIsNothing() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class, RmqModulithAutoConfiguration.class))
                .withPropertyValues(RedisTopology.STANDALONE.propertyValues("modulith-ac-" + UUID.randomUUID()))
                .withClassLoader(new FilteredClassLoader("org.springframework.modulith"))
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(RmqEventExternalizationTransport.class)
                        .doesNotHaveBean(RmqModulithAutoConfiguration.EXTERNALIZER));
    }

    @Test
    void externalizationSwitchedOffInModulithSwitchesRmqsOff() {
        runner.withPropertyValues("spring.modulith.events.externalization.enabled=false")
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(RmqEventExternalizationTransport.class)
                        .doesNotHaveBean(RmqModulithAutoConfiguration.EXTERNALIZER));
    }

    @Test
    void withoutRmqThereIsNothing() {
        runner.withPropertyValues("rmq.enabled=false")
                .run(context -> assertThat(context).hasNotFailed()
                        .doesNotHaveBean(RmqEventExternalizationTransport.class)
                        .doesNotHaveBean(RmqModulithAutoConfiguration.EXTERNALIZER));
    }

    @Test
    void inModulithsOutboxModeOnlyTheTransportIsThereForTheOutboxToUse() {
        runner.withPropertyValues("spring.modulith.events.externalization.mode=outbox")
                .run(context -> assertThat(context).hasNotFailed()
                        .hasSingleBean(RmqEventExternalizationTransport.class)
                        .doesNotHaveBean(RmqModulithAutoConfiguration.EXTERNALIZER));
    }
}
