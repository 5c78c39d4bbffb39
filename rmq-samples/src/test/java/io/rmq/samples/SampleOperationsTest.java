package io.rmq.samples;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.rmq.spring.RmqTemplate;
import io.rmq.test.LogCapture;
import io.rmq.test.context.RmqTest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.annotation.DirtiesContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample as its README describes it, on a real port: after the scenario it keeps running, serves the dashboard,
 * the rmq endpoint (its writes switched on), health and metrics at the addresses it prints, and its live traffic puts another shop's order
 * close into the dead queue with its reason.
 */
@SpringBootTest(classes = {RmqSamplesApplication.class, SampleOperationsTest.Logs.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"samples.exit-when-done=false", "samples.live-traffic=true"})
@RmqTest
@DirtiesContext
class SampleOperationsTest {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Value("${local.server.port}")
    int port;

    @Autowired
    LogCapture log;

    @Autowired
    RmqTemplate rmq;

    /**
     * The sample's log from before the driver runs until the context closes: the failures it causes on purpose (two in
     * the scenario, the other shop's order closes of the live traffic) and the addresses it prints.
     */
    @Configuration(proxyBeanMethods = false)
    static class Logs {

        @Bean
        LogCapture sampleLog() {
            return LogCapture.of("io.rmq").expecting("picture CDN upload timed out", "core banking timed out",
                    "does not exist in this shop", "http://localhost:", "RMQ started: ");
        }
    }

    @Test
    void theSampleServesTheDashboardEndpointHealthAndMetricsWhereItSaysItDoes() throws Exception {
        String base = "http://localhost:" + port;
        assertThat(log.messages()).as("RMQ's start line, shown by the sample's log levels")
                .anyMatch(m -> m.startsWith("RMQ started: Redis standalone") && m.contains("7 listener(s)"));
        assertThat(log.messages()).as("the addresses printed after the scenario")
                .anyMatch(m -> m.contains("Dashboard") && m.contains(base + "/rmq"))
                .anyMatch(m -> m.contains(base + "/actuator/rmq"))
                .anyMatch(m -> m.contains(base + "/actuator/health/rmq"));

        HttpResponse<String> page = get(base + "/rmq");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("<html").contains("dashboard");

        HttpResponse<String> endpoint = get(base + "/actuator/rmq");
        assertThat(endpoint.statusCode()).isEqualTo(200);
        assertThat(endpoint.body()).contains("\"picture-render\"", "\"merchant-tasks\"", "\"order-timeout\"",
                "\"ledger\"");

        HttpResponse<String> health = get(base + "/actuator/health/rmq");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"");

        // the sample switches the endpoint's writes on (management.endpoint.rmq.access=unrestricted)
        String notifier = base + "/actuator/rmq/listeners/customer-notifier";
        HttpResponse<String> paused = post(notifier, "{\"action\":\"pause\"}");
        assertThat(paused.statusCode()).as(paused.body()).isEqualTo(200);
        assertThat(paused.body()).contains("\"state\":\"paused\"");
        HttpResponse<String> resumed = post(notifier, "{\"action\":\"resume\"}");
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);
        assertThat(resumed.body()).contains("\"state\":\"running\"");

        assertThat(get(base + "/actuator/metrics/rmq.handled.messages").statusCode()).isEqualTo(200);
        assertThat(get(base + "/actuator/metrics/messaging.client.sent.messages").statusCode()).isEqualTo(200);

        // the live traffic: now and then the close of an order another shop placed, refused as non-retryable
        await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().stats(SampleDriver.ORDER_TOPIC).dead() >= 1);
        assertThat(get(base + "/rmq/api/topics/" + SampleDriver.ORDER_TOPIC + "/dead?offset=0&limit=10").body())
                .contains("does not exist in this shop");
    }

    @Test
    void theSampleDashboardListsItsOwnInstanceWithItsListenersAndTheRedisItUses() throws Exception {
        String api = "http://localhost:" + port + "/rmq/api/";
        JsonMapper json = JsonMapper.builder().build();

        HttpResponse<String> instances = get(api + "instances");
        assertThat(instances.statusCode()).as(instances.body()).isEqualTo(200);
        String pid = String.valueOf(ProcessHandle.current().pid());
        JsonNode self = null;
        for (JsonNode instance : json.readTree(instances.body())) {
            if (instance.get("pid").asString().equals(pid)) {
                self = instance;
            }
        }
        assertThat(self).as("this JVM (pid %s) in %s", pid, instances.body()).isNotNull();
        assertThat(self.get("application").asString()).isEqualTo("rmq-samples");
        List<String> listeners = new ArrayList<>();
        self.get("listeners").forEach(l -> listeners.add(l.get("id").asString() + "@" + l.get("topic").asString()));
        // its seven @RmqListener methods and the listener that runs its schedule (order-stats)
        assertThat(listeners).containsExactlyInAnyOrder("picture-render@picture-render",
                "merchant-tasks@merchant-tasks", "order-timeout@order-timeout", "customer-notifier@order-closed",
                "ledger@ledger", "quote-desk@quote-requests", "reminder-mailer@payment-reminders",
                "rmq-schedule.order-stats@rmq-schedule.order-stats");
        // its own page answers too
        HttpResponse<String> own = get(api + "instances/" + java.net.URLEncoder.encode(self.get("id").asString(),
                java.nio.charset.StandardCharsets.UTF_8));
        assertThat(own.statusCode()).as(own.body()).isEqualTo(200);
        assertThat(json.readTree(own.body()).get("inFlight").isArray()).isTrue();

        HttpResponse<String> redis = get(api + "redis");
        assertThat(redis.statusCode()).as(redis.body()).isEqualTo(200);
        JsonNode figures = json.readTree(redis.body());
        assertThat(figures.get("mode").asString()).isEqualTo("standalone");
        assertThat(figures.get("version").asString()).matches("\\d+\\.\\d+\\.\\d+.*");
        assertThat(figures.get("rmqKeys").asLong()).as("the sample's topics have keys").isPositive();
    }

    private HttpResponse<String> post(String url, String json) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
