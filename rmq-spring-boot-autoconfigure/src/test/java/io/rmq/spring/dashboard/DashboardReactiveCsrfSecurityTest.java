package io.rmq.spring.dashboard;

import java.util.UUID;

import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.http.ResponseCookie;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link DashboardCsrfSecurityTest} for a Reactive application: Spring Security's WebFlux CSRF protection (Boot's
 * default set-up) refuses a dashboard POST without the token and lets it through with the one {@code api/csrf} hands
 * out.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, properties = {"spring.main.web-application-type=reactive",
        "rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.listeners.ops-orderly.mode=ORDERLY",
        "rmq.dashboard.enabled=true", "rmq.dashboard.read-only=false",
        "spring.security.user.name=" + DashboardCsrfSecurityTest.USER,
        "spring.security.user.password=" + DashboardCsrfSecurityTest.PASSWORD})
class DashboardReactiveCsrfSecurityTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    ApplicationContext context;

    @Autowired
    RmqListenerEndpointRegistry registry;

    @BeforeAll
    static void securityIsThere() {
        assumeTrue(ClassUtils.isPresent("org.springframework.security.web.server.SecurityWebFilterChain", null),
                "Spring Security is not on this run's class path (the *SecurityTest run has it)");
    }

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        RedisTopology.STANDALONE.springProperties("reactive-csrf-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    @Test
    void aPostWithoutTheTokenIsRefusedAndWithItIsDone() {
        WebTestClient client = WebTestClient.bindToApplicationContext(context).configureClient()
                .defaultHeaders(h -> h.setBasicAuth(DashboardCsrfSecurityTest.USER, DashboardCsrfSecurityTest.PASSWORD))
                .responseTimeout(java.time.Duration.ofSeconds(30)).build();
        client.post().uri("/rmq/api/listeners/ops-worker/pause").exchange().expectStatus().isForbidden();
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isFalse();

        EntityExchangeResult<byte[]> csrf = client.get().uri("/rmq/api/csrf").exchange().expectStatus().isOk()
                .expectBody().returnResult();
        JsonNode token = JSON.readTree(csrf.getResponseBody());
        ResponseCookie session = csrf.getResponseCookies().getFirst("SESSION");
        assertThat(session).as("the token lives in the session").isNotNull();
        client.post().uri("/rmq/api/listeners/ops-worker/pause").cookie("SESSION", session.getValue())
                .header(token.get("headerName").asString(), token.get("token").asString()).exchange()
                .expectStatus().isOk();
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isTrue();
        registry.getListenerContainer("ops-worker").resume();
    }
}
