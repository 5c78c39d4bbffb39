package io.rmq.autoconfigure;

import io.micrometer.observation.ObservationRegistry;
import io.rmq.micrometer.observation.ObservationInstrumentation;
import io.rmq.micrometer.observation.RmqProcessObservationConvention;
import io.rmq.micrometer.observation.RmqSendObservationConvention;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer Observations around RMQ's sends and handler calls ({@code rmq.send}, {@code rmq.process}), when the
 * application has an {@link ObservationRegistry} and {@code rmq.observation.enabled=true}: opt-in, as Spring Kafka's
 * observations are, because an observation per send and per handler call costs several microseconds (a third of
 * W1B's throughput with Micrometer's default meter handler; BENCHMARKS.md), where RMQ's meters cost a few percent. The
 * {@link ObservationInstrumentation} bean is one of the {@code RmqInstrumentation} beans the engine reports to; it
 * takes {@link RmqSendObservationConvention} and {@link RmqProcessObservationConvention} beans when the application
 * defines them, and backs off for the application's own {@link ObservationInstrumentation}. With
 * {@code rmq.observation.propagate-context=true} sends of sampled traces store their trace context beside the message
 * and listeners continue the sender's trace; {@code rmq.observation.propagate-unsampled=true} stores unsampled traces'
 * contexts too.
 */
@AutoConfiguration(after = ObservationAutoConfiguration.class, before = RmqAutoConfiguration.class)
@ConditionalOnClass({ObservationRegistry.class, ObservationInstrumentation.class})
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty("rmq.observation.enabled")
@EnableConfigurationProperties(RmqProperties.class)
public class RmqObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public ObservationInstrumentation rmqObservationInstrumentation(ObservationRegistry registry,
            RmqProperties properties, ObjectProvider<RmqSendObservationConvention> sendConvention,
            ObjectProvider<RmqProcessObservationConvention> processConvention) {
        RmqProperties.Observation observation = properties.observation();
        return new ObservationInstrumentation(registry, observation.propagateContext(),
                observation.propagateUnsampled(), sendConvention.getIfUnique(), processConvention.getIfUnique());
    }
}
