package io.rmq.autoconfigure;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.rmq.Rmq;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.schedule.RmqScheduleMeters;
import io.rmq.spring.schedule.RmqScheduledAnnotationBeanPostProcessor;
import io.rmq.spring.schedule.RmqScheduler;
import io.rmq.spring.schedule.RmqSchedules;
import io.rmq.spring.schedule.ScheduleDeclaration;
import io.rmq.spring.schedule.ScheduleEvents;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * Periodic messages ({@code rmq.schedules.*} entries and {@code @RmqScheduled} methods), fired once per firing across
 * every instance: the annotation post-processor, the {@link RmqScheduler} that runs them, {@link RmqSchedules} to list,
 * pause and resume them, and their meters when the application has a {@link MeterRegistry}. Every bean backs off when
 * the application defines its own.
 */
// the metrics auto-configurations by name: this class is loaded without spring-boot-micrometer-metrics too, and class
// references to it made Spring log "Failed to introspect meta-annotation @AutoConfiguration" at every start
@AutoConfiguration(after = RmqAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass(Rmq.class)
@ConditionalOnBooleanProperty(name = "rmq.enabled", matchIfMissing = true)
public class RmqSchedulingAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static RmqScheduledAnnotationBeanPostProcessor rmqScheduledAnnotationBeanPostProcessor() {
        return new RmqScheduledAnnotationBeanPostProcessor();
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnBean({Rmq.class, RmqListenerEndpointRegistry.class})
    public RmqScheduler rmqScheduler(Rmq rmq, RmqListenerEndpointRegistry registry, RmqProperties properties,
            ObjectProvider<RmqScheduledAnnotationBeanPostProcessor> methods, ObjectProvider<ScheduleEvents> events) {
        List<ScheduleDeclaration> entries = properties.schedules().entrySet().stream()
                .map(e -> ScheduleDeclaration.ofProperty(e.getKey(), e.getValue().cron(), e.getValue().zone(),
                        e.getValue().fixedRate(), e.getValue().misfire(), e.getValue().misfireThreshold(),
                        e.getValue().topic(), e.getValue().payload()))
                .sorted(java.util.Comparator.comparing(ScheduleDeclaration::name)).toList();
        return new RmqScheduler(rmq, registry, entries, () -> {
            RmqScheduledAnnotationBeanPostProcessor processor = methods.getIfAvailable();
            return processor == null ? List.of() : processor.declarations();
        }, events.getIfAvailable(() -> ScheduleEvents.NONE), properties.shutdownTimeout());
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RmqScheduler.class)
    public RmqSchedules rmqSchedules(RmqScheduler scheduler) {
        return new RmqSchedules(scheduler);
    }

    /** The schedules' meters ({@code rmq.schedule.*}), with {@code rmq.metrics.enabled}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnBooleanProperty(name = "rmq.metrics.enabled", matchIfMissing = true)
    static class Meters {

        @Bean
        @ConditionalOnMissingBean(ScheduleEvents.class)
        RmqScheduleMeters rmqScheduleMeters(MeterRegistry registry) {
            return new RmqScheduleMeters(registry);
        }
    }
}
