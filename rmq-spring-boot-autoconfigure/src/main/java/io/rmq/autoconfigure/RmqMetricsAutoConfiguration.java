package io.rmq.autoconfigure;

import java.util.Collection;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.rmq.Rmq;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.micrometer.RmqQueueSizeMeters;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * RMQ's Micrometer meters, when the application has a {@link MeterRegistry} (e.g. Spring Boot Actuator) and
 * {@code rmq.metrics.enabled} is not false: a {@link MicrometerInstrumentation} (which {@link RmqAutoConfiguration}
 * hands to the engine with every other {@code RmqInstrumentation} bean) and the {@link RmqQueueSizeMeters} gauges,
 * read every {@code rmq.metrics.queue-sizes-interval}. Both back off when the application defines its own.
 */
@AutoConfiguration(after = {MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
        SimpleMetricsExportAutoConfiguration.class, RmqAutoConfiguration.class})
@ConditionalOnClass({MeterRegistry.class, MicrometerInstrumentation.class})
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "rmq.metrics.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RmqProperties.class)
public class RmqMetricsAutoConfiguration {

    /** The engine's meters (messaging.*, rmq.*), on the application's registry. */
    @Bean
    @ConditionalOnMissingBean
    public MicrometerInstrumentation rmqMicrometerInstrumentation(MeterRegistry registry) {
        return new MicrometerInstrumentation(registry);
    }

    /**
     * The {@code rmq.messages} gauges of every topic the engine knows, and the ORDERLY slot gauges of the listeners
     * in the registry; bound to the application's registries by Spring Boot (it binds every {@code MeterBinder}).
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnBean(Rmq.class)
    public RmqQueueSizeMeters rmqQueueSizeMeters(Rmq rmq, RmqProperties properties,
            ObjectProvider<RmqListenerEndpointRegistry> listeners) {
        return new RmqQueueSizeMeters(rmq, properties.metrics().queueSizesInterval(), () -> containers(listeners));
    }

    private static Collection<? extends io.rmq.container.ListenerContainer> containers(
            ObjectProvider<RmqListenerEndpointRegistry> listeners) {
        RmqListenerEndpointRegistry registry = listeners.getIfAvailable();
        return registry == null ? List.of() : registry.getListenerContainers();
    }
}
