package io.rmq.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.rmq.spring.dashboard.MicrometerDashboardMeters;
import io.rmq.spring.dashboard.RmqDashboard;
import io.rmq.spring.dashboard.RmqDashboardWebFlux;
import io.rmq.spring.dashboard.RmqDashboardWebMvc;
import io.rmq.spring.operations.RmqOperations;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The dashboard page ({@code rmq.dashboard.enabled=true}) at {@code rmq.dashboard.path} (default {@code /rmq}), in a
 * Servlet (Spring MVC) or Reactive (WebFlux) application, as router functions; nothing is served when it is off. Rates
 * and lateness come from Micrometer when the application has a {@link MeterRegistry}. Backs off when the application
 * defines its own {@link RmqDashboard} (or a router function bean named {@code rmqDashboardRoutes}).
 */
@AutoConfiguration(after = RmqAutoConfiguration.class)
@ConditionalOnBooleanProperty("rmq.dashboard.enabled")
@ConditionalOnWebApplication
@ConditionalOnBean(RmqOperations.class)
public class RmqDashboardAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public RmqDashboard rmqDashboard(RmqOperations operations, RmqProperties properties,
            ObjectProvider<RmqDashboard.Meters> meters,
            ObjectProvider<io.rmq.spring.schedule.RmqSchedules> schedules) {
        RmqProperties.Dashboard dashboard = properties.dashboard();
        RmqDashboard page = new RmqDashboard(operations, dashboard.path(), dashboard.readOnly(), meters.getIfUnique());
        page.setSchedules(schedules.getIfAvailable());
        return page;
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class MetersConfiguration {

        @Bean
        @ConditionalOnMissingBean
        RmqDashboard.Meters rmqDashboardMeters(ObjectProvider<MeterRegistry> registry) {
            return new MicrometerDashboardMeters(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(org.springframework.web.servlet.function.RouterFunction.class)
    static class ServletConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "rmqDashboardRoutes")
        org.springframework.web.servlet.function.RouterFunction<org.springframework.web.servlet.function.ServerResponse>
                rmqDashboardRoutes(RmqDashboard dashboard) {
            return RmqDashboardWebMvc.routes(dashboard);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(org.springframework.web.reactive.function.server.RouterFunction.class)
    static class ReactiveConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "rmqDashboardRoutes")
        org.springframework.web.reactive.function.server.RouterFunction<
                org.springframework.web.reactive.function.server.ServerResponse> rmqDashboardRoutes(
                RmqDashboard dashboard) {
            return RmqDashboardWebFlux.routes(dashboard);
        }
    }
}
