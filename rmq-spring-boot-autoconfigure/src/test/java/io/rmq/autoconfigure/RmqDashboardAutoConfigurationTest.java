package io.rmq.autoconfigure;

import io.rmq.spring.dashboard.RmqDashboard;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.operations.RmqOperations;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.http.codec.autoconfigure.CodecsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.HttpHandlerAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * When the dashboard is served: only with {@code rmq.dashboard.enabled=true}, in Servlet and Reactive applications,
 * at its path; never otherwise. (The page needs no Redis: the operations are never called here.)
 */
class RmqDashboardAutoConfigurationTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RmqProperties.class)
    static class Operations {

        @org.springframework.context.annotation.Bean
        RmqOperations rmqOperations() {
            return new RmqOperations(null, new RmqListenerEndpointRegistry());
        }
    }

    private final WebApplicationContextRunner servlet = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RmqDashboardAutoConfiguration.class, WebMvcAutoConfiguration.class,
                    DispatcherServletAutoConfiguration.class))
            .withUserConfiguration(Operations.class);

    private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RmqDashboardAutoConfiguration.class, WebFluxAutoConfiguration.class,
                    HttpHandlerAutoConfiguration.class, CodecsAutoConfiguration.class))
            .withUserConfiguration(Operations.class);

    private static MockMvc mvc(WebApplicationContext context) {
        return MockMvcBuilders.webAppContextSetup(context).build();
    }

    @Test
    void nothingIsServedWhenTheDashboardIsOff() {
        servlet.run(context -> {
            assertThat(context).doesNotHaveBean(RmqDashboard.class).doesNotHaveBean("rmqDashboardRoutes");
            mvc(context).perform(get("/rmq")).andExpect(status().isNotFound());
            mvc(context).perform(get("/rmq/api/overview")).andExpect(status().isNotFound());
            mvc(context).perform(post("/rmq/api/topics/t/dead/purge")).andExpect(status().isNotFound());
        });
        servlet.withPropertyValues("rmq.dashboard.enabled=false").run(context ->
                assertThat(context).doesNotHaveBean(RmqDashboard.class));
        reactive.run(context -> {
            assertThat(context).doesNotHaveBean(RmqDashboard.class);
            WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
            client.get().uri("/rmq").exchange().expectStatus().isNotFound();
            client.get().uri("/rmq/api/overview").exchange().expectStatus().isNotFound();
        });
    }

    @Test
    void aServletApplicationServesThePageAtItsPath() {
        servlet.withPropertyValues("rmq.dashboard.enabled=true", "rmq.dashboard.path=/ops/queues").run(context -> {
            assertThat(context).hasSingleBean(RmqDashboard.class).hasBean("rmqDashboardRoutes");
            MockMvc mvc = mvc(context);
            mvc.perform(get("/ops/queues")).andExpect(status().isOk())
                    .andExpect(content().contentTypeCompatibleWith("text/html"))
                    .andExpect(header().string("Content-Security-Policy", RmqDashboard.CONTENT_SECURITY_POLICY))
                    .andExpect(content().string(org.hamcrest.Matchers.containsString(
                            "<script src=\"/ops/queues/dashboard.js\" defer>")));
            mvc.perform(get("/ops/queues/dashboard.js")).andExpect(status().isOk())
                    .andExpect(content().contentTypeCompatibleWith("text/javascript"));
            mvc.perform(get("/ops/queues/dashboard.css")).andExpect(status().isOk());
            mvc.perform(get("/rmq")).andExpect(status().isNotFound());
            mvc.perform(post("/ops/queues/api/topics/t/dead/purge")).andExpect(status().isForbidden());
        });
    }

    @Test
    void aReactiveApplicationServesThePage() {
        reactive.withPropertyValues("rmq.dashboard.enabled=true").run(context -> {
            assertThat(context).hasSingleBean(RmqDashboard.class).hasBean("rmqDashboardRoutes");
            WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
            client.get().uri("/rmq").exchange().expectStatus().isOk().expectBody(String.class)
                    .value(page -> assertThat(page).contains("<title>RMQ dashboard</title>"));
            client.post().uri("/rmq/api/listeners/x/pause").exchange().expectStatus().isForbidden();
        });
    }

    @Test
    void theDashboardNeedsNeitherMicrometerNorSpringSecurity() {
        // Spring Security is not on this run's class path at all (see the pom); Micrometer is hidden here
        servlet.withClassLoader(new org.springframework.boot.test.context.FilteredClassLoader("io.micrometer"))
                .withPropertyValues("rmq.dashboard.enabled=true").run(context -> {
                    assertThat(context).hasSingleBean(RmqDashboard.class).doesNotHaveBean(RmqDashboard.Meters.class);
                    mvc(context).perform(get("/rmq")).andExpect(status().isOk());
                    mvc(context).perform(get("/rmq/api/csrf")).andExpect(status().isOk())
                            .andExpect(content().json("{}"));
                });
    }

    @Test
    void aNonWebApplicationGetsNoDashboard() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RmqDashboardAutoConfiguration.class))
                .withUserConfiguration(Operations.class).withPropertyValues("rmq.dashboard.enabled=true")
                .run(context -> assertThat(context).doesNotHaveBean(RmqDashboard.class));
    }

    @Test
    void theDashboardBacksOffForTheApplicationsOwn() {
        RmqDashboard own = new RmqDashboard(new RmqOperations(null, new RmqListenerEndpointRegistry()), "/mine", true,
                null);
        servlet.withPropertyValues("rmq.dashboard.enabled=true").withBean("myDashboard", RmqDashboard.class, () -> own)
                .run(context -> {
                    assertThat(context).getBean(RmqDashboard.class).isSameAs(own);
                    mvc(context).perform(get("/mine")).andExpect(status().isOk());
                });
    }

    @Test
    void aBadPathFailsStartUpNamingTheProperty() {
        try (io.rmq.test.LogCapture log = io.rmq.test.LogCapture.of("org.springframework").expecting("RmqProperties")) {
            servlet.withPropertyValues("rmq.dashboard.enabled=true", "rmq.dashboard.path=rmq/").run(context ->
                    assertThat(context).getFailure().rootCause().hasMessageContaining("rmq.dashboard.path"));
            assertThat(log.warnings()).hasSize(1);
        }
    }
}
