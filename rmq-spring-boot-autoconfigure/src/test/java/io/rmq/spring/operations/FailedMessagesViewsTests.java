package io.rmq.spring.operations;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.dashboard.RmqDashboard;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The views of failed messages and of Redis (issue 33) over {@code /actuator/rmq} and the dashboard's routes, against
 * a real Redis, standalone and cluster (the subclasses): messages waiting for a retry with their last error (no body
 * text unless {@code rmq.dashboard.show-bodies}), the dead queue searched, a selection requeued and deleted, the Redis
 * figures, and bad requests answered 4xx naming field, value and rule.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.topics.ops-backlog.slot-amount=4",
                "rmq.listeners.ops-orderly.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s",
                "management.endpoints.web.exposure.include=rmq", "management.endpoint.rmq.access=unrestricted"})
abstract class FailedMessagesViewsTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RmqTemplate template;

    @Autowired
    Rmq rmq;

    @Autowired
    RmqOperations operations;

    @Autowired
    RmqListenerEndpointRegistry registry;

    @Autowired
    OpsTestApplication.Handlers handlers;

    abstract RedisTopology topology();

    static void redis(DynamicPropertyRegistry registry, RedisTopology topology) {
        topology.springProperties("views-" + topology.name().toLowerCase() + "-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, String json) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode json(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    static JsonNode json(RmqDashboard.Reply reply) {
        assertThat(reply.status()).as(RmqDashboard.json(reply.body())).isEqualTo(200);
        return JSON.readTree(RmqDashboard.json(reply.body()));
    }

    private static java.util.function.Function<String, String> query(String... pairs) {
        Map<String, String> values = new java.util.HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            values.put(pairs[i], pairs[i + 1]);
        }
        return values::get;
    }

    @Test
    void messagesWaitingForARetryShowTheirLastErrorAndHandleButNoBodyUnlessAllowed() throws Exception {
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            template.send(OutgoingMessage.fixedTime("ops-flaky", "{\"card\":\"4111\"}", Instant.now()).withId("r-1"));
            template.send(OutgoingMessage.fixedTime("ops-flaky", "retry-body-2", Instant.now()));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(json(get("/actuator/rmq/topics/ops-flaky/retries")).get("total").asLong())
                            .isEqualTo(2));
            assertThat(log.warnings()).hasSize(2);
        }
        JsonNode page = json(get("/actuator/rmq/topics/ops-flaky/retries?offset=0&limit=10"));
        assertThat(page.get("topic").asString()).isEqualTo("ops-flaky");
        assertThat(page.get("offset").asLong()).isZero();
        assertThat(page.get("limit").asInt()).isEqualTo(10);
        assertThat(page.get("messages")).hasSize(2);
        for (JsonNode m : page.get("messages")) {
            assertThat(m.get("body").isNull()).as("no body text by default").isTrue();
            assertThat(m.get("attempt").asInt()).isEqualTo(1);
            assertThat(m.get("lastError").asString()).startsWith("java.lang.IllegalStateException: "
                    + OpsTestApplication.ON_PURPOSE);
            assertThat(Instant.parse(m.get("nextAttemptAt").asString())).isAfter(Instant.now().plusSeconds(200));
            assertThat(Instant.parse(m.get("failedAt").asString())).isBefore(Instant.now().plusSeconds(1));
            assertThat(m.get("slot").asInt()).isBetween(0, 1);
        }
        JsonNode byId = null;
        JsonNode byBody = null;
        for (JsonNode m : page.get("messages")) {
            if (m.get("id").isNull()) {
                byBody = m;
            }
            else {
                byId = m;
            }
        }
        assertThat(byId.get("id").asString()).isEqualTo("r-1");
        assertThat(Base64.getDecoder().decode(byId.get("handle").asString())).startsWith(0xFF).hasSize(4);
        assertThat(new String(Base64.getDecoder().decode(byBody.get("handle").asString()), StandardCharsets.UTF_8))
                .isEqualTo("retry-body-2");

        // the dashboard's route answers the same, with body text once show-bodies is on
        RmqOperations showing = new RmqOperations(rmq, registry);
        showing.setShowBodies(true);
        JsonNode shown = json(new RmqDashboard(showing, "/rmq", true, null).get("topics/ops-flaky/retries",
                query("limit", "10")));
        assertThat(shown.get("total").asLong()).isEqualTo(2);
        assertThat(shown.get("messages").findValuesAsString("body")).containsExactlyInAnyOrder("{\"card\":\"4111\"}",
                "retry-body-2");
        assertThat(operations.showBodies()).as("rmq.dashboard.show-bodies defaults to false").isFalse();
    }

    @Test
    void deadMessagesAreSearchedByErrorAndPrefixAndASelectionIsRequeuedOrDeleted() throws Exception {
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            for (int i = 0; i < 6; i++) {
                template.send(OutgoingMessage.fixedTime("ops-failing", (i < 4 ? "sel-a-" : "sel-b-") + i,
                        Instant.now()));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("ops-failing") >= 6);
            assertThat(log.warnings()).hasSize(6);
        }
        JsonNode found = json(get("/actuator/rmq/topics/ops-failing/dead?prefix=sel-a-&error=FAILS%20ON%20PURPOSE"
                + "&limit=3"));
        assertThat(found.get("total").asLong()).isEqualTo(4);
        assertThat(found.get("scanned").asLong()).isEqualTo(6);
        assertThat(found.get("capped").asBoolean()).isFalse();
        assertThat(found.get("messages")).hasSize(3);
        JsonNode dashboardFound = json(new RmqDashboard(operations, "/rmq", false, null).get("topics/ops-failing/dead",
                query("prefix", "sel-a-", "limit", "20")));
        assertThat(dashboardFound.get("total").asLong()).isEqualTo(4);
        assertThat(json(get("/actuator/rmq/topics/ops-failing/dead?error=no-such-text")).get("total").asLong())
                .isZero();

        // requeue two of them through the endpoint (named by handle), delete the rest of "a" through the dashboard
        StringBuilder two = new StringBuilder();
        for (int i = 0; i < 2; i++) {
            JsonNode m = dashboardFound.get("messages").get(i);
            two.append(i == 0 ? "" : ",").append("{\"slot\":").append(m.get("slot").asInt()).append(",\"handle\":\"")
                    .append(m.get("handle").asString()).append("\"}");
        }
        handlers.failing = false;
        try {
            // Actuator reads a write request's fields as text: the selection travels as a JSON string
            JsonNode requeued = json(post("/actuator/rmq/topics/ops-failing",
                    JSON.writeValueAsString(Map.of("action", "requeue-dead-selected", "messages", "[" + two + "]"))));
            assertThat(requeued.get("action").asString()).isEqualTo("requeue-dead-selected");
            assertThat(requeued.get("count").asLong()).isEqualTo(2);
            await().atMost(Duration.ofSeconds(30)).until(() -> handlers.handled.stream()
                    .filter(b -> b.startsWith("sel-a-")).count() == 2);
        }
        finally {
            handlers.failing = true;
        }
        StringBuilder rest = new StringBuilder();
        for (int i = 2; i < 4; i++) {
            JsonNode m = dashboardFound.get("messages").get(i);
            rest.append(i == 2 ? "" : ",").append("{\"slot\":").append(m.get("slot").asInt()).append(",\"handle\":\"")
                    .append(m.get("handle").asString()).append("\"}");
        }
        RmqDashboard writable = new RmqDashboard(operations, "/rmq", false, null);
        JsonNode deleted = json(writable.post("topics/ops-failing/dead/delete-selected", "{\"messages\":[" + rest
                + "]}"));
        assertThat(deleted.get("count").asLong()).isEqualTo(2);
        assertThat(json(get("/actuator/rmq/topics/ops-failing/dead?prefix=sel-")).get("total").asLong())
                .as("only the b messages are left").isEqualTo(2);
        assertThat(new RmqDashboard(operations, "/rmq", true, null).post("topics/ops-failing/dead/delete-selected",
                "{\"messages\":[" + rest + "]}").status()).as("read-only").isEqualTo(403);
    }

    @Test
    void badRequestsAreAnsweredWithTheFieldValueAndRule() throws Exception {
        RmqDashboard dashboard = new RmqDashboard(operations, "/rmq", false, null);
        RmqDashboard.Reply unknown = dashboard.get("topics/no-such-topic/retries", query());
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(RmqDashboard.json(unknown.body())).contains("no-such-topic");
        assertThat(get("/actuator/rmq/topics/no-such-topic/retries").statusCode()).isEqualTo(404);
        assertThat(get("/actuator/rmq/topics/ops-flaky/nothing-here").statusCode()).isEqualTo(404);

        RmqDashboard.Reply limit = dashboard.get("topics/ops-flaky/retries", query("limit", "500"));
        assertThat(limit.status()).isEqualTo(400);
        assertThat(RmqDashboard.json(limit.body())).contains("limit", "500", "between 1 and 200");
        HttpResponse<String> offset = get("/actuator/rmq/topics/ops-flaky/retries?offset=-1");
        assertThat(offset.statusCode()).isEqualTo(400);
        assertThat(dashboard.get("topics/ops-flaky/retries", query("offset", "-1")).body().toString())
                .contains("offset", "-1", "zero or positive");
        assertThat(dashboard.get("topics/ops-flaky/retries", query("offset", "x")).status()).isEqualTo(400);

        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 201; i++) {
            many.append(i == 0 ? "" : ",").append("{\"slot\":0,\"id\":\"m").append(i).append("\"}");
        }
        RmqDashboard.Reply tooMany = dashboard.post("topics/ops-failing/dead/requeue-selected",
                "{\"messages\":[" + many + "]}");
        assertThat(tooMany.status()).isEqualTo(400);
        assertThat(RmqDashboard.json(tooMany.body())).contains("messages", "201", "at most 200");
        RmqDashboard.Reply badHandle = dashboard.post("topics/ops-failing/dead/delete-selected",
                "{\"messages\":[{\"slot\":1,\"handle\":\"%%%\"}]}");
        assertThat(badHandle.status()).isEqualTo(400);
        assertThat(RmqDashboard.json(badHandle.body())).contains("messages[0].handle", "%%%", "base64");
        RmqDashboard.Reply badSlot = dashboard.post("topics/ops-failing/dead/delete-selected",
                "{\"messages\":[{\"slot\":9,\"id\":\"x\"}]}");
        assertThat(badSlot.status()).isEqualTo(400);
        assertThat(RmqDashboard.json(badSlot.body())).contains("slot", "9", "between 0 and 3");
        assertThat(dashboard.post("topics/ops-failing/dead/delete-selected", "{\"messages\":[{\"slot\":1}]}")
                .status()).isEqualTo(400);
        assertThat(dashboard.post("topics/ops-failing/dead/delete-selected", "{}").status()).isEqualTo(400);
        HttpResponse<String> endpointTooMany = post("/actuator/rmq/topics/ops-failing",
                JSON.writeValueAsString(Map.of("action", "delete-dead-selected", "messages", "[" + many + "]")));
        assertThat(endpointTooMany.statusCode()).isEqualTo(400);
    }

    @Test
    void redisFiguresNameTheModeAndTheClusterNodes() throws Exception {
        JsonNode redis = json(get("/actuator/rmq/redis"));
        assertThat(redis.get("version").asString()).matches("\\d+\\.\\d+.*");
        assertThat(redis.get("usedMemory").asLong()).isPositive();
        assertThat(redis.get("peakMemory").asLong()).isPositive();
        assertThat(redis.get("clients").asLong()).isPositive();
        assertThat(redis.get("rmqKeys").asLong()).isPositive();
        assertThat(redis.get("rmqKeysCapped").asBoolean()).isFalse();
        if (topology() == RedisTopology.CLUSTER) {
            assertThat(redis.get("mode").asString()).isEqualTo("cluster");
            assertThat(redis.get("nodes").findValuesAsString("role")).contains("master");
            for (JsonNode node : redis.get("nodes")) {
                assertThat(node.get("state").asString()).isEqualTo("ok");
                assertThat(node.get("address").asString()).contains(":");
                assertThat(node.has("slots") && node.has("id")).isTrue();
            }
        }
        else {
            assertThat(redis.get("mode").asString()).isEqualTo("standalone");
            assertThat(redis.get("nodes")).isEmpty();
        }
        assertThat(json(new RmqDashboard(operations, "/rmq", true, null).get("redis", query())).get("mode").asString())
                .isEqualTo(redis.get("mode").asString());
    }
}
