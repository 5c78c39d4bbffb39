package io.rmq.autoconfigure;

import io.rmq.Rmq;
import io.rmq.spring.health.RmqHealthIndicator;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;

/**
 * The {@code rmq} health indicator ({@link RmqHealthIndicator}) when Spring Boot's health support is on the class
 * path; off with {@code management.health.rmq.enabled=false}; backs off when the application defines a bean named
 * {@code rmqHealthIndicator}.
 */
@AutoConfiguration(after = RmqAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, Rmq.class})
@ConditionalOnBean(Rmq.class)
@ConditionalOnEnabledHealthIndicator("rmq")
public class RmqHealthContributorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = {"rmqHealthIndicator", "rmqHealthContributor"})
    public RmqHealthIndicator rmqHealthIndicator(Rmq rmq, ObjectProvider<RmqListenerEndpointRegistry> registry,
            RmqProperties properties) {
        RmqProperties.Health health = properties.health();
        return new RmqHealthIndicator(rmq, registry.getIfAvailable(), health.deadThreshold(),
                health.oldestDueThreshold(), new Status(health.thresholdStatus().trim().toUpperCase(java.util.Locale.ROOT)),
                health.timeout(), health.cacheTimeToLive());
    }
}
