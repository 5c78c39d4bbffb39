package io.rmq.spring.dashboard;

import java.net.CookieManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import io.rmq.admin.MessageRef;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.support.ui.WebDriverWait;
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
 * With Spring Security present (Boot's default set-up: every request authenticated, form login and basic auth, CSRF
 * on) the dashboard's POSTs need the CSRF token: refused without it, done with the one its {@code api/csrf} route
 * hands out, and the page itself sends it after a person logged in. Runs in the surefire run that has Spring Security
 * on the class path (see the module's pom); no class here names a Security type, so a wide {@code -Dtest} pattern on
 * the run without it only skips this.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.listeners.ops-orderly.mode=ORDERLY",
                "rmq.dashboard.enabled=true", "rmq.dashboard.read-only=false",
                "spring.security.user.name=" + DashboardCsrfSecurityTest.USER,
                "spring.security.user.password=" + DashboardCsrfSecurityTest.PASSWORD})
class DashboardCsrfSecurityTest {

    static final String USER = "ops";
    static final String PASSWORD = "ops-secret";
    private static final String BASIC = "Basic " + java.util.Base64.getEncoder().encodeToString((USER + ":" + PASSWORD)
            .getBytes(java.nio.charset.StandardCharsets.UTF_8));

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    int port;

    @Autowired
    RmqListenerEndpointRegistry registry;

    @Autowired
    io.rmq.spring.RmqTemplate template;

    @Autowired
    io.rmq.Rmq rmq;

    @BeforeAll
    static void securityIsThere() {
        assumeTrue(ClassUtils.isPresent("org.springframework.security.web.SecurityFilterChain", null),
                "Spring Security is not on this run's class path (the *SecurityTest run has it)");
    }

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        RedisTopology.STANDALONE.springProperties("csrf-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).header("Authorization", BASIC);
    }

    @Test
    void aPostWithoutTheTokenIsRefusedAndWithItIsDone() throws Exception {
        HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
        HttpResponse<String> refused = http.send(request("/rmq/api/listeners/ops-worker/pause")
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        // refused by the CSRF filter, which runs before basic authentication: Boot reports it through its error page,
        // as 403 or (the request not authenticated yet there) 401; the same request with the token is done below
        assertThat(refused.statusCode()).isIn(401, 403);
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isFalse();

        JsonNode token = JSON.readTree(http.send(request("/rmq/api/csrf").GET().build(),
                HttpResponse.BodyHandlers.ofString()).body());
        String header = token.get("headerName").asString();
        assertThat(header).isNotBlank();
        HttpResponse<String> done = http.send(request("/rmq/api/listeners/ops-worker/pause")
                .header(header, token.get("token").asString()).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isTrue();

        HttpResponse<String> wrong = http.send(request("/rmq/api/listeners/ops-worker/resume")
                .header(header, "not-the-token").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(wrong.statusCode()).isIn(401, 403);
        assertThat(registry.getListenerContainer("ops-worker").isPaused()).isTrue();
        registry.getListenerContainer("ops-worker").resume();
    }

    @Test
    void theOperatorActionsNeedTheTokenAndTheirAuditLineNamesTheUser() throws Exception {
        template.send(io.rmq.producer.OutgoingMessage.fixedTime("ops-backlog", "csrf-later",
                java.time.Instant.now().plus(java.time.Duration.ofHours(2))).withId("csrf-1"));
        int slot = rmq.admin().find(MessageRef.id("ops-backlog", "csrf-1")).slot();
        String one = "{\"messages\":[{\"slot\":" + slot + ",\"id\":\"csrf-1\"}]}";
        HttpClient http = HttpClient.newBuilder().cookieHandler(new CookieManager()).build();
        try (io.rmq.test.LogCapture audit = io.rmq.test.LogCapture.of("io.rmq.spring.dashboard.audit")) {
            HttpResponse<String> refused = http.send(request("/rmq/api/topics/ops-backlog/waiting/run-now")
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(one))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isIn(401, 403);
            assertThat(audit.messages()).as("refused before the dashboard: nothing done, nothing to audit").isEmpty();
            assertThat(rmq.admin().find(MessageRef.id("ops-backlog", "csrf-1")).waitingScore())
                    .isGreaterThan((double) java.time.Instant.now().plusSeconds(3600).toEpochMilli());

            JsonNode token = JSON.readTree(http.send(request("/rmq/api/csrf").GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            HttpResponse<String> done = http.send(request("/rmq/api/topics/ops-backlog/waiting/run-now")
                    .header("Content-Type", "application/json")
                    .header(token.get("headerName").asString(), token.get("token").asString())
                    .POST(HttpRequest.BodyPublishers.ofString(one)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
            assertThat(JSON.readTree(done.body()).get("count").asLong()).isEqualTo(1);
            assertThat(rmq.admin().find(MessageRef.id("ops-backlog", "csrf-1")).waitingScore())
                    .isLessThanOrEqualTo((double) java.time.Instant.now().plusSeconds(1).toEpochMilli());
            assertThat(audit.messages()).singleElement().asString().matches("RMQ dashboard: " + USER
                    + " from \\S+ POST topics/ops-backlog/waiting/run-now \\(messages=1: slot " + slot
                    + " id csrf-1\\) -> 200 count 1");
        }
    }

    /**
     * Clicks the element {@code by} finds, finding it again when the page redrew its table between the find and the
     * click (it redraws every few seconds; on a loaded machine the find and the click can straddle a redraw).
     */
    private static void clickAsRedrawn(WebDriverWait wait, By by) {
        wait.ignoring(StaleElementReferenceException.class).until(d -> {
            d.findElement(by).click();
            return true;
        });
    }

    @Test
    void thePageSendsTheTokenWithItsPosts() {
        WebDriver browser = Browser.start();
        try {
            browser.get("http://localhost:" + port + "/rmq");
            WebDriverWait login = new WebDriverWait(browser, java.time.Duration.ofSeconds(30));
            login.until(d -> !d.findElements(By.id("username")).isEmpty());
            browser.findElement(By.id("username")).sendKeys(USER);
            browser.findElement(By.id("password")).sendKeys(PASSWORD);
            browser.findElement(By.cssSelector("button[type='submit']")).click();
            WebDriverWait wait = new WebDriverWait(browser, java.time.Duration.ofSeconds(30));
            wait.until(d -> !d.findElements(By.cssSelector("#listeners tr[data-listener='ops-worker'] button.pause"))
                    .isEmpty());
            clickAsRedrawn(wait, By.cssSelector("#listeners tr[data-listener='ops-worker'] button.pause"));
            wait.until(d -> registry.getListenerContainer("ops-worker").isPaused());
            wait.until(d -> !d.findElements(By.cssSelector("#listeners tr[data-listener='ops-worker'] button.resume"))
                    .isEmpty());
            clickAsRedrawn(wait, By.cssSelector("#listeners tr[data-listener='ops-worker'] button.resume"));
            wait.until(d -> !registry.getListenerContainer("ops-worker").isPaused());
        }
        finally {
            browser.quit();
        }
    }
}
