package io.rmq.autoconfigure;

import io.rmq.spring.operations.RmqEndpoint;
import io.rmq.spring.operations.RmqEndpointWebExtension;
import io.rmq.spring.operations.RmqOperations;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code rmq} Actuator endpoint ({@link RmqEndpoint}), when Actuator is on the class path and the endpoint is
 * available (enabled and exposed, e.g. {@code management.endpoints.web.exposure.include=rmq}). Backs off when the
 * application defines its own {@link RmqEndpoint}; over HTTP, {@link RmqEndpointWebExtension} answers for it (with
 * reasons in the error bodies), whichever {@link RmqEndpoint} is there.
 */
@AutoConfiguration(after = RmqAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(RmqOperations.class)
@ConditionalOnAvailableEndpoint(RmqEndpoint.class)
public class RmqEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public RmqEndpoint rmqEndpoint(RmqOperations operations,
            org.springframework.beans.factory.ObjectProvider<io.rmq.spring.schedule.RmqSchedules> schedules) {
        return new RmqEndpoint(operations, schedules.getIfAvailable());
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RmqEndpoint.class)
    public RmqEndpointWebExtension rmqEndpointWebExtension(RmqEndpoint endpoint, RmqOperations operations) {
        return new RmqEndpointWebExtension(endpoint, operations);
    }
}
