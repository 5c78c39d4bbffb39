package io.rmq.autoconfigure;

import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.operations.RmqEndpoint;
import io.rmq.spring.operations.RmqEndpointWebExtension;
import io.rmq.spring.operations.RmqOperations;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** When the {@code rmq} endpoint appears (needs no Redis: the operations are never called here). */
class RmqEndpointAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RmqEndpointAutoConfiguration.class))
            .withBean(RmqOperations.class, () -> new RmqOperations(null, new RmqListenerEndpointRegistry()));

    @Test
    void theEndpointAppearsWhenItIsExposed() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=rmq")
                .run(context -> assertThat(context).hasSingleBean(RmqEndpoint.class)
                        .as("the answers over HTTP, with reasons").hasSingleBean(RmqEndpointWebExtension.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=*")
                .run(context -> assertThat(context).hasSingleBean(RmqEndpoint.class));
        runner.withPropertyValues("management.endpoints.jmx.exposure.include=rmq", "spring.jmx.enabled=true")
                .run(context -> assertThat(context).hasSingleBean(RmqEndpoint.class));
    }

    @Test
    void theEndpointIsAbsentWhenNotExposedOrSwitchedOff() {
        runner.run(context -> assertThat(context).doesNotHaveBean(RmqEndpoint.class)
                .doesNotHaveBean(RmqEndpointWebExtension.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=health")
                .run(context -> assertThat(context).doesNotHaveBean(RmqEndpoint.class));
        runner.withPropertyValues("management.endpoints.web.exposure.include=rmq",
                "management.endpoint.rmq.access=NONE")
                .run(context -> assertThat(context).doesNotHaveBean(RmqEndpoint.class));
    }

    @Test
    void theEndpointIsAbsentWithoutRmq() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RmqEndpointAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=rmq")
                .run(context -> assertThat(context).doesNotHaveBean(RmqEndpoint.class));
    }

    @Test
    void theEndpointIsAbsentWithoutActuator() {
        runner.withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader(
                org.springframework.boot.actuate.endpoint.annotation.Endpoint.class))
                .withPropertyValues("management.endpoints.web.exposure.include=rmq")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RmqEndpoint.class));
    }

    @Test
    void theEndpointBacksOffForTheApplicationsOwn() {
        RmqEndpoint own = new RmqEndpoint(new RmqOperations(null, new RmqListenerEndpointRegistry()));
        runner.withPropertyValues("management.endpoints.web.exposure.include=rmq")
                .withBean("myEndpoint", RmqEndpoint.class, () -> own)
                .run(context -> {
                    assertThat(context).getBean(RmqEndpoint.class).isSameAs(own);
                    assertThat(context).as("the application's endpoint answers over HTTP with reasons too")
                            .hasSingleBean(RmqEndpointWebExtension.class);
                });
    }
}
