package io.rmq.spring.operations;

import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.UUID;

import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Spring Security recipe of docs/operations.md ({@link OperationsSecurity}) with both write switches on: anyone
 * logged in reads, only OPS changes, through the endpoint (Basic, no CSRF token) and the dashboard (with its CSRF
 * token).
 * Runs in the surefire run that has Spring Security (see the module's pom); the users are in
 * {@link OperationsRecipeUsers}, so this class names no Security type.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = {OpsTestApplication.class, OperationsSecurity.class, OperationsRecipeUsers.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=health,rmq",
                "management.endpoint.rmq.access=unrestricted", "rmq.dashboard.enabled=true",
                "rmq.dashboard.read-only=false"})
class OperationsRecipeSecurityTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    int port;

    @Autowired
    RmqListenerEndpointRegistry registry;

    @BeforeAll
    static void securityIsThere() {
        assumeTrue(ClassUtils.isPresent("org.springframework.security.web.SecurityFilterChain", null),
                "Spring Security is not on this run's class path (the *SecurityTest run has it)");
    }

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        RedisTopology.STANDALONE.springProperties("recipe-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    @Test
    void theEndpointReadsForAnyoneLoggedInAndChangesOnlyForOps() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        assertThat(send(http, "GET", "/actuator/rmq", null, null).statusCode()).isEqualTo(401);
        assertThat(send(http, "GET", "/actuator/health", null, null).statusCode()).isEqualTo(200);
        assertThat(send(http, "GET", "/actuator/rmq", OperationsRecipeUsers.VIEWER, null).statusCode())
                .isEqualTo(200);

        String pause = "{\"action\":\"pause\"}";
        assertThat(send(http, "POST", "/actuator/rmq/listeners/ops-worker", null, pause).statusCode())
                .isEqualTo(401);
        assertThat(send(http, "POST", "/actuator/rmq/listeners/ops-worker", OperationsRecipeUsers.VIEWER, pause)
                .statusCode()).isEqualTo(403);
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isFalse();

        HttpResponse<String> paused = send(http, "POST", "/actuator/rmq/listeners/ops-worker",
                OperationsRecipeUsers.OPS, pause);
        assertThat(paused.statusCode()).as(paused.body()).isEqualTo(200);
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isTrue();
        assertThat(send(http, "POST", "/actuator/rmq/listeners/ops-worker", OperationsRecipeUsers.OPS,
                "{\"action\":\"resume\"}").statusCode()).isEqualTo(200);
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isFalse();
    }

    @Test
    void theDashboardChangesOnlyForOps() throws Exception {
        for (String user : new String[] {OperationsRecipeUsers.VIEWER, OperationsRecipeUsers.OPS}) {
            HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
            assertThat(send(http, "GET", "/rmq/api/overview", user, null).statusCode()).isEqualTo(200);
            JsonNode token = JSON.readTree(send(http, "GET", "/rmq/api/csrf", user, null).body());
            HttpResponse<String> pause = http.send(request("/rmq/api/listeners/ops-worker/pause", user)
                    .header(token.get("headerName").asString(), token.get("token").asString())
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            boolean ops = user.equals(OperationsRecipeUsers.OPS);
            assertThat(pause.statusCode()).as("%s: %s", user, pause.body()).isEqualTo(ops ? 200 : 403);
            assertThat(registry.getListenerContainer("ops-worker").isPaused()).isEqualTo(ops);
        }
        registry.getListenerContainer("ops-worker").resume();
    }

    private HttpRequest.Builder request(String path, String user) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    (user + ":" + OperationsRecipeUsers.PASSWORD).getBytes(StandardCharsets.UTF_8)));
        }
        return request;
    }

    private HttpResponse<String> send(HttpClient http, String method, String path, String user, String json)
            throws Exception {
        HttpRequest.Builder request = request(path, user);
        request = json == null ? request.GET() : request.header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(json));
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
