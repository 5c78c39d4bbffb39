package io.rmq.spring.operations;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
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
 * {@code /actuator/rmq} over HTTP on a real port against a real Redis, standalone and cluster (the subclasses):
 * the overview's counts, one topic with its slots, one listener, and the write operations (switched on with
 * {@code management.endpoint.rmq.access=unrestricted}; {@link RmqEndpointReadOnlyByDefaultTest} shows them refused
 * without it).
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.topics.ops-backlog.slot-amount=4",
                "rmq.listeners.ops-orderly.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s",
                "management.endpoints.web.exposure.include=rmq", "management.endpoint.rmq.access=unrestricted",
                "spring.application.name=ops-app", "rmq.history.flush-interval=200ms"})
abstract class RmqEndpointIntegrationTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RmqTemplate template;

    @Autowired
    Rmq rmq;

    @Autowired
    OpsTestApplication.Handlers handlers;

    @Autowired
    RmqOperations operations;

    static void redis(DynamicPropertyRegistry registry, RedisTopology topology) {
        topology.springProperties("ops-" + topology.name().toLowerCase() + "-" + UUID.randomUUID())
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

    JsonNode json(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    static JsonNode named(JsonNode array, String field, String value) {
        for (JsonNode node : array) {
            if (node.get(field).asString().equals(value)) {
                return node;
            }
        }
        throw new AssertionError("no " + field + "=" + value + " in " + array);
    }

    @Test
    void theOverviewShowsEveryTopicWithItsCountsAndEveryListener() throws Exception {
        long before = rmq.admin().stats("ops-backlog").waiting(); // the other tests of the class may have sent some
        Instant later = Instant.now().plusSeconds(3600);
        for (int i = 0; i < 7; i++) {
            template.send(OutgoingMessage.fixedTime("ops-backlog", "{\"order\":" + i + "}", later.plusSeconds(i)));
        }
        JsonNode overview = json(get("/actuator/rmq"));
        JsonNode backlog = named(overview.get("topics"), "name", "ops-backlog");
        assertThat(backlog.get("type").asString()).isEqualTo("FIXED_TIME");
        assertThat(backlog.get("slots").asInt()).isEqualTo(4);
        assertThat(backlog.get("mode").isNull()).as("no listener has registered a consume mode").isTrue();
        assertThat(backlog.get("waiting").asLong()).isEqualTo(before + 7);
        assertThat(backlog.get("inFlight").asLong()).isZero();
        assertThat(backlog.get("dead").asLong()).isZero();
        assertThat(backlog.has("perSlot")).as("the overview leaves per-slot sizes to the one-topic read").isFalse();
        assertThat(Instant.parse(backlog.get("oldestDue").asString())).as("the first in taking order")
                .isBetween(later.minusSeconds(60), later.plusSeconds(60));
        assertThat(named(overview.get("topics"), "name", "ops-work").get("oldestDue").isNull())
                .as("a PRIORITY topic has no due times").isTrue();
        assertThat(overview.get("topics").findValuesAsString("name")).contains("ops-failing", "ops-work",
                "ops-ordered", "ops-flaky");

        JsonNode worker = named(overview.get("listeners"), "id", "ops-worker");
        assertThat(worker.get("topic").asString()).isEqualTo("ops-work");
        assertThat(worker.get("mode").asString()).isEqualTo("CONCURRENT");
        assertThat(worker.get("state").asString()).isEqualTo("running");
        assertThat(worker.get("watchdogRepairs").asLong()).isZero();
        JsonNode orderly = named(overview.get("listeners"), "id", "ops-orderly");
        assertThat(orderly.get("mode").asString()).isEqualTo("ORDERLY");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(named(json(get("/actuator/rmq"))
                .get("listeners"), "id", "ops-orderly").get("ownedSlots")).as("a single instance owns every slot")
                .hasSize(4));
    }

    @Test
    void oneTopicHasItsSizesPerSlotAndAnUnknownNameIsNotFound() throws Exception {
        Instant later = Instant.now().plusSeconds(3600);
        for (int i = 0; i < 20; i++) {
            template.send(OutgoingMessage.fixedTime("ops-backlog", "slot-spread-" + i, later));
        }
        JsonNode topic = json(get("/actuator/rmq/topics/ops-backlog"));
        assertThat(topic.get("perSlot")).hasSize(4);
        long sum = 0;
        for (JsonNode slot : topic.get("perSlot")) {
            sum += slot.get("waiting").asLong();
        }
        assertThat(sum).isEqualTo(topic.get("waiting").asLong()).isGreaterThanOrEqualTo(20);

        assertThat(get("/actuator/rmq/topics/no-such-topic").statusCode()).isEqualTo(404);
        assertThat(get("/actuator/rmq/listeners/no-such-listener").statusCode()).isEqualTo(404);
        assertThat(json(get("/actuator/rmq/listeners/ops-worker")).get("concurrency").asInt()).isEqualTo(2);
    }

    @Test
    void deadMessagesAreRequeuedAndPurgedThroughWriteOperations() throws Exception {
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            for (int i = 0; i < 3; i++) {
                template.send(OutgoingMessage.fixedTime("ops-failing", "endpoint-dead-" + i, Instant.now()));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("ops-failing") >= 3);
            JsonNode failing = named(json(get("/actuator/rmq")).get("topics"), "name", "ops-failing");
            assertThat(failing.get("dead").asLong()).isEqualTo(3);

            handlers.failing = false;
            JsonNode requeued = json(post("/actuator/rmq/topics/ops-failing", "{\"action\":\"requeue-dead\"}"));
            assertThat(requeued.get("count").asLong()).isEqualTo(3);
            await().atMost(Duration.ofSeconds(30)).until(() -> handlers.handled.size() >= 3);
            assertThat(handlers.handled).contains("endpoint-dead-0", "endpoint-dead-1", "endpoint-dead-2");

            handlers.failing = true;
            template.send(OutgoingMessage.fixedTime("ops-failing", "endpoint-dead-again", Instant.now()));
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("ops-failing") == 1);
            assertThat(json(post("/actuator/rmq/topics/ops-failing", "{\"action\":\"purge-dead\"}")).get("count")
                    .asLong()).isEqualTo(1);
            assertThat(rmq.admin().deadCount("ops-failing")).isZero();
            assertThat(log.warnings()).as("one line per message that died").hasSize(4);
        }
        finally {
            handlers.failing = true;
        }
        assertThat(post("/actuator/rmq/topics/ops-failing", "{\"action\":\"explode\"}").statusCode()).isEqualTo(400);
        assertThat(post("/actuator/rmq/topics/no-such-topic", "{\"action\":\"purge-dead\"}").statusCode())
                .as("what is not there is not found, read or written (ErrorAnswersTest: the bodies)").isEqualTo(404);
    }

    @Test
    void aFailedMessageWaitingForItsRetryCountsAsRetrying() throws Exception {
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            template.send(OutgoingMessage.fixedTime("ops-flaky", "endpoint-flaky", Instant.now()));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(named(json(get("/actuator/rmq"))
                    .get("topics"), "name", "ops-flaky").get("retrying").asLong()).isEqualTo(1));
            JsonNode flaky = json(get("/actuator/rmq/topics/ops-flaky"));
            assertThat(flaky.get("waiting").asLong()).as("counted once, as retrying").isZero();
            assertThat(flaky.get("inFlight").asLong()).isZero();
            long perSlot = 0;
            for (JsonNode slot : flaky.get("perSlot")) {
                perSlot += slot.get("retrying").asLong();
            }
            assertThat(perSlot).isEqualTo(1);
            assertThat(Instant.parse(flaky.get("oldestDue").asString())).as("its retry, five minutes away")
                    .isAfter(Instant.now().plusSeconds(200));
            assertThat(log.warnings()).hasSize(1);
        }
    }

    @Test
    void aListenerIsPausedAndResumedThroughWriteOperations() throws Exception {
        JsonNode paused = json(post("/actuator/rmq/listeners/ops-worker", "{\"action\":\"pause\"}"));
        assertThat(paused.get("state").asString()).isEqualTo("paused");
        try {
            template.send(OutgoingMessage.priority("ops-work", "sent-while-paused", 5));
            await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).until(() -> true);
            assertThat(handlers.worked).as("a paused listener takes nothing").doesNotContain("sent-while-paused");
            assertThat(named(json(get("/actuator/rmq")).get("topics"), "name", "ops-work").get("waiting").asLong())
                    .isEqualTo(1);
        }
        finally {
            JsonNode resumed = json(post("/actuator/rmq/listeners/ops-worker", "{\"action\":\"resume\"}"));
            assertThat(resumed.get("state").asString()).isEqualTo("running");
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> handlers.worked.contains("sent-while-paused"));
        assertThat(post("/actuator/rmq/listeners/no-such-listener", "{\"action\":\"pause\"}").statusCode())
                .isEqualTo(404);
    }

    @Test
    void theInstanceIsListedAndATopicIsPausedClusterWideApartFromTheListenersOwnPause() throws Exception {
        // the listeners show from the first beat after they were made (at most one heartbeat, 5 s, after start-up)
        await().atMost(Duration.ofSeconds(30)).until(() -> json(get("/actuator/rmq/instances")).size() == 1
                && !json(get("/actuator/rmq/instances")).get(0).get("listeners").isEmpty());
        JsonNode instance = json(get("/actuator/rmq/instances")).get(0);
        assertThat(instance.get("application").asString()).isEqualTo("ops-app");
        assertThat(instance.get("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
        assertThat(instance.get("version").asString()).isNotBlank();
        Instant.parse(instance.get("startedAt").asString());
        Instant.parse(instance.get("lastSeenAt").asString());
        JsonNode worker = named(instance.get("listeners"), "id", "ops-worker");
        assertThat(worker.get("concurrency").asInt()).isEqualTo(2);
        assertThat(worker.get("pausedCluster").asBoolean()).isFalse();
        String id = instance.get("id").asString();
        JsonNode one = json(get("/actuator/rmq/instances/" + id));
        assertThat(one.get("inFlight").isArray()).isTrue();
        assertThat(get("/actuator/rmq/instances/no-such-instance").statusCode()).isEqualTo(404);

        JsonNode paused = json(post("/actuator/rmq/topics/ops-work", "{\"action\":\"pause\"}"));
        assertThat(paused.get("count").asLong()).isEqualTo(1);
        try {
            JsonNode pause = json(get("/actuator/rmq/pauses")).get(0);
            assertThat(pause.get("kind").asString()).isEqualTo("topic");
            assertThat(pause.get("name").asString()).isEqualTo("ops-work");
            assertThat(pause.get("by").asString()).isEqualTo("endpoint");
            JsonNode listener = json(get("/actuator/rmq/listeners/ops-worker"));
            assertThat(listener.get("pausedCluster").asBoolean()).as("applied here at once").isTrue();
            assertThat(listener.get("pausedHere").asBoolean()).isFalse();
            assertThat(listener.get("state").asString()).isEqualTo("paused");
            template.send(OutgoingMessage.priority("ops-work", "sent-while-paused-cluster-wide", 5));
            await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).until(() -> true);
            assertThat(handlers.worked).doesNotContain("sent-while-paused-cluster-wide");
            JsonNode inFlight = json(get("/actuator/rmq/topics/ops-work/in-flight?limit=5"));
            assertThat(inFlight.get("total").asLong()).isZero();
            assertThat(inFlight.get("limit").asInt()).isEqualTo(5);
            assertThat(get("/actuator/rmq/topics/ops-work/in-flight?limit=0").statusCode()).isEqualTo(400);
            assertThat(get("/actuator/rmq/topics/no-such-topic/in-flight").statusCode()).isEqualTo(404);
        }
        finally {
            json(post("/actuator/rmq/topics/ops-work", "{\"action\":\"resume\"}"));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> handlers.worked.contains("sent-while-paused-cluster-wide"));
        assertThat(json(get("/actuator/rmq/pauses"))).isEmpty();
        assertThat(post("/actuator/rmq/listeners/no-such-listener", "{\"action\":\"pause-cluster\"}").statusCode())
                .isEqualTo(404);
    }

    /** Sums of sent, handled, failed and dead over the points of a history as the endpoint shows it. */
    private long[] totals(String topic, String resolution) throws Exception {
        JsonNode history = json(get("/actuator/rmq/topics/" + topic + "/history?resolution=" + resolution));
        long[] out = new long[4];
        for (JsonNode point : history.get("points")) {
            out[0] += point.get("sent").asLong();
            out[1] += point.get("handled").asLong();
            out[2] += point.get("failed").asLong();
            out[3] += point.get("dead").asLong();
        }
        return out;
    }

    @Test
    void aTopicsHistoryCountsWhatWasSentHandledFailedAndBuried() throws Exception {
        long[] workBefore = totals("ops-work", "minute");
        long[] failingBefore = totals("ops-failing", "hour");
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            for (int i = 0; i < 3; i++) {
                template.send(OutgoingMessage.priority("ops-work", "history-work-" + i, 1));
            }
            for (int i = 0; i < 2; i++) {
                template.send(OutgoingMessage.fixedTime("ops-failing", "history-dead-" + i, Instant.now()));
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                long[] work = totals("ops-work", "minute");
                assertThat(work[0] - workBefore[0]).as("sent").isGreaterThanOrEqualTo(3);
                assertThat(work[1] - workBefore[1]).as("handled").isGreaterThanOrEqualTo(3);
                long[] failing = totals("ops-failing", "hour");
                assertThat(failing[0] - failingBefore[0]).as("sent").isGreaterThanOrEqualTo(2);
                assertThat(failing[2] - failingBefore[2]).as("failed").isGreaterThanOrEqualTo(2);
                assertThat(failing[3] - failingBefore[3]).as("dead (max retries 0: every failure)")
                        .isEqualTo(failing[2] - failingBefore[2]);
            });
            assertThat(log.warnings()).hasSizeGreaterThanOrEqualTo(2);
        }
        JsonNode minutes = json(get("/actuator/rmq/topics/ops-work/history"));
        assertThat(minutes.get("topic").asString()).isEqualTo("ops-work");
        assertThat(minutes.get("resolution").asString()).as("the default").isEqualTo("minute");
        assertThat(minutes.get("points")).hasSize(60);
        assertThat(Duration.between(Instant.parse(minutes.get("from").asString()),
                Instant.parse(minutes.get("to").asString()))).isEqualTo(Duration.ofHours(1));
        assertThat(Instant.parse(minutes.get("points").get(0).get("at").asString()))
                .isEqualTo(Instant.parse(minutes.get("from").asString()));
        assertThat(json(get("/actuator/rmq/topics/ops-work/history?resolution=hour")).get("points")).hasSize(24);

        // the bodies that name the reason: ErrorAnswersTest
        assertThat(get("/actuator/rmq/topics/ops-work/history?resolution=second").statusCode()).isEqualTo(400);
        assertThat(get("/actuator/rmq/topics/no-such-topic/history").statusCode()).isEqualTo(404);
        assertThat(get("/actuator/rmq/topics/ops-work/no-such-part").statusCode()).isEqualTo(404);

        // the dashboard's route answers the same through the same operations
        io.rmq.spring.dashboard.RmqDashboard dashboard = new io.rmq.spring.dashboard.RmqDashboard(operations, "/rmq",
                true, null);
        io.rmq.spring.dashboard.RmqDashboard.Reply reply = dashboard.get("topics/ops-work/history",
                name -> name.equals("resolution") ? "hour" : null);
        assertThat(reply.status()).isEqualTo(200);
        assertThat(((RmqOperations.HistoryView) reply.body()).points()).hasSize(24);
        io.rmq.spring.dashboard.RmqDashboard.Reply bad = dashboard.get("topics/ops-work/history", name -> "weekly");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.body().toString()).contains("resolution").contains("weekly").contains("minute or hour");
        assertThat(dashboard.get("topics/no-such-topic/history", name -> null).status()).isEqualTo(404);
    }
}
