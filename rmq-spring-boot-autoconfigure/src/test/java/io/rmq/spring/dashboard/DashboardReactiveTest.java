package io.rmq.spring.dashboard;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.admin.MessageRef;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.operations.OpsTestApplication;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboard in a Reactive (WebFlux) application on a real Redis: the page and its JSON routes, waiting messages
 * paged through the browse cursor, find / reschedule / cancel by body and by id, ids and headers in the views, dead
 * messages, pause and resume.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, properties = {"spring.main.web-application-type=reactive",
        "rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.topics.ops-backlog.slot-amount=4",
        "rmq.listeners.ops-orderly.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s",
        "rmq.dashboard.enabled=true", "rmq.dashboard.read-only=false", "rmq.dashboard.path=/ops/rmq"})
class DashboardReactiveTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    ApplicationContext context;

    @Autowired
    RmqTemplate template;

    @Autowired
    Rmq rmq;

    @Autowired
    OpsTestApplication.Handlers handlers;

    WebTestClient client;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        RedisTopology.STANDALONE.springProperties("reactive-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    @BeforeEach
    void client() {
        client = WebTestClient.bindToApplicationContext(context).configureClient()
                .responseTimeout(Duration.ofSeconds(30)).build();
    }

    JsonNode get(String uri) {
        byte[] body = client.get().uri(uri).exchange().expectStatus().isOk().expectBody().returnResult()
                .getResponseBody();
        return JSON.readTree(body);
    }

    JsonNode post(String uri, String json) {
        byte[] body = client.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(json).exchange()
                .expectStatus().isOk().expectBody().returnResult().getResponseBody();
        return JSON.readTree(body);
    }

    @Test
    void thePageAndItsFilesAreServedAtThePath() {
        client.get().uri("/ops/rmq").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_HTML)
                .expectHeader().valueEquals("Content-Security-Policy", RmqDashboard.CONTENT_SECURITY_POLICY)
                .expectBody(String.class).value(page -> assertThat(page)
                        .contains("<meta name=\"rmq-base\" content=\"/ops/rmq\">")
                        .contains("<meta name=\"rmq-read-only\" content=\"false\">"));
        client.get().uri("/ops/rmq/dashboard.js").exchange().expectStatus().isOk().expectBody(String.class)
                .value(script -> assertThat(script).contains("createTextNode"));
        client.get().uri("/ops/rmq/dashboard.css").exchange().expectStatus().isOk();
        client.get().uri("/ops/rmq/api/csrf").exchange().expectStatus().isOk().expectBody(String.class)
                .isEqualTo("{}");
        client.get().uri("/rmq").exchange().expectStatus().isNotFound();
        client.get().uri("/ops/rmq/api/topics/no-such-topic").exchange().expectStatus().isNotFound()
                .expectBody(String.class).value(body -> assertThat(body).contains("\"field\":\"topic\"",
                        "\"value\":\"no-such-topic\"", "No topic 'no-such-topic'"));
        client.get().uri("/ops/rmq/api/topics/ops-backlog/dead?limit=0").exchange().expectStatus().isBadRequest()
                .expectBody(String.class).value(body -> assertThat(body).contains("\"field\":\"limit\"",
                        "between 1 and 200"));
    }

    @Test
    void theOverviewAndATopicShowTheirCounts() {
        JsonNode overview = get("/ops/rmq/api/overview");
        assertThat(overview.get("readOnly").asBoolean()).isFalse();
        List<String> topics = new ArrayList<>();
        overview.get("topics").forEach(row -> topics.add(row.get("topic").get("name").asString()));
        assertThat(topics).containsExactly("ops-backlog", "ops-failing", "ops-flaky", "ops-ordered", "ops-work");
        List<String> listeners = new ArrayList<>();
        overview.get("listeners").forEach(l -> listeners.add(l.get("id").asString()));
        assertThat(listeners).containsExactly("ops-failing", "ops-flaky", "ops-orderly", "ops-worker");

        JsonNode work = get("/ops/rmq/api/topics/ops-work");
        assertThat(work.get("type").asString()).isEqualTo("PRIORITY");
        assertThat(work.get("perSlot")).hasSize(2);
    }

    @Test
    void waitingMessagesArePagedInTakingOrderAndFoundRescheduledAndCancelledByBody() {
        Instant due = Instant.now().plusSeconds(3600);
        for (int i = 0; i < 7; i++) {
            template.send(OutgoingMessage.fixedTime("ops-backlog", "reactive-" + i, due.plusSeconds(i)));
        }
        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            JsonNode page = get("/ops/rmq/api/topics/ops-backlog/waiting?limit=3"
                    + (cursor == null ? "" : "&cursor=" + cursor));
            page.get("messages").forEach(m -> seen.add(m.get("body").asString()));
            cursor = page.get("next").isNull() ? null : page.get("next").asString();
            pages++;
        } while (cursor != null && pages < 10);
        assertThat(seen).containsExactly("reactive-0", "reactive-1", "reactive-2", "reactive-3", "reactive-4",
                "reactive-5", "reactive-6");

        JsonNode found = get("/ops/rmq/api/topics/ops-backlog/find?body=reactive-5");
        assertThat(found.get("waiting").asBoolean()).isTrue();
        assertThat(Instant.parse(found.get("dueAt").asString())).isEqualTo(due.plusSeconds(5).truncatedTo(
                java.time.temporal.ChronoUnit.MILLIS));

        assertThat(post("/ops/rmq/api/topics/ops-backlog/reschedule", "{\"body\":\"reactive-5\",\"when\":\"10m\"}")
                .get("result").asString()).isEqualTo("RESCHEDULED");
        assertThat(get("/ops/rmq/api/topics/ops-backlog/waiting?limit=1").get("messages").get(0).get("body")
                .asString()).as("now first in taking order").isEqualTo("reactive-5");

        assertThat(post("/ops/rmq/api/topics/ops-backlog/cancel", "{\"body\":\"reactive-5\"}").get("removedWaiting")
                .asBoolean()).isTrue();
        assertThat(get("/ops/rmq/api/topics/ops-backlog/find?body=reactive-5").get("waiting").asBoolean()).isFalse();
        assertThat(get("/ops/rmq/api/topics/ops-backlog").get("waiting").asLong()).isEqualTo(6);
        client.post().uri("/ops/rmq/api/topics/ops-backlog/reschedule").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"body\":\"reactive-1\",\"when\":\"tomorrowish\"}").exchange().expectStatus().isBadRequest();
    }

    @Test
    void deadMessagesArePagedRequeuedAndDeletedAndListenersPausedAndResumed() {
        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            for (int i = 0; i < 3; i++) {
                template.send(OutgoingMessage.fixedTime("ops-failing", "reactive-dead-" + i, Instant.now()));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("ops-failing") == 3);
            JsonNode first = get("/ops/rmq/api/topics/ops-failing/dead?offset=0&limit=2");
            assertThat(first.get("total").asLong()).isEqualTo(3);
            assertThat(first.get("messages")).hasSize(2);
            assertThat(get("/ops/rmq/api/topics/ops-failing/dead?offset=2&limit=2").get("messages")).hasSize(1);
            JsonNode dead = first.get("messages").get(0);
            assertThat(dead.get("error").asString()).contains(OpsTestApplication.ON_PURPOSE);
            assertThat(dead.get("attempts").asInt()).isEqualTo(1);

            JsonNode deleted = post("/ops/rmq/api/topics/ops-failing/dead/delete", "{\"slot\":"
                    + dead.get("slot").asInt() + ",\"body\":\"" + dead.get("bodyBase64").asString() + "\"}");
            assertThat(deleted.get("count").asLong()).isEqualTo(1);
            handlers.failing = false;
            assertThat(post("/ops/rmq/api/topics/ops-failing/dead/requeue-all", "").get("count").asLong())
                    .isEqualTo(2);
            await().atMost(Duration.ofSeconds(30)).until(() -> handlers.handled.size() >= 2);
            assertThat(handlers.handled).doesNotContain(dead.get("body").asString());
            assertThat(log.warnings()).hasSize(3);
        }
        finally {
            handlers.failing = true;
        }

        assertThat(post("/ops/rmq/api/listeners/ops-worker/pause", "").get("state").asString()).isEqualTo("paused");
        try {
            template.send(OutgoingMessage.priority("ops-work", "reactive-paused", 1));
            await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> true);
            assertThat(handlers.worked).doesNotContain("reactive-paused");
        }
        finally {
            assertThat(post("/ops/rmq/api/listeners/ops-worker/resume", "").get("state").asString())
                    .isEqualTo("running");
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> handlers.worked.contains("reactive-paused"));
        client.post().uri("/ops/rmq/api/listeners/no-such/pause").exchange().expectStatus().isNotFound();
    }

    private static String idOf(JsonNode message) {
        return message.get("id").isNull() ? null : message.get("id").asString();
    }

    /** Every waiting message of a topic, page by page. */
    private List<JsonNode> allWaiting(String topic) {
        List<JsonNode> all = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            JsonNode page = get("/ops/rmq/api/topics/" + topic + "/waiting?limit=50"
                    + (cursor == null ? "" : "&cursor=" + cursor));
            page.get("messages").forEach(all::add);
            cursor = page.get("next").isNull() ? null : page.get("next").asString();
            pages++;
        } while (cursor != null && pages < 20);
        return all;
    }

    @Test
    void messagesShowTheirIdsAndHeadersAndAreFoundRescheduledCancelledAndRequeuedById() {
        Instant due = Instant.now().plusSeconds(7200);
        String longValue = "v".repeat(300);
        template.send(OutgoingMessage.fixedTime("ops-backlog", "price 120", due).withId("reactive-product-42")
                .withHeader("tenant", "<b>acme</b>").withHeader("note", longValue));
        template.send(OutgoingMessage.fixedTime("ops-backlog", "reactive-plain-with-headers", due.plusSeconds(1))
                .withHeader("tenant", "globex"));
        try {
            List<JsonNode> waiting = allWaiting("ops-backlog");
            JsonNode byId = waiting.stream().filter(m -> "reactive-product-42".equals(idOf(m)))
                    .findFirst().orElseThrow();
            assertThat(byId.get("body").asString()).as("the payload").isEqualTo("price 120");
            assertThat(byId.get("headers").get("tenant").asString()).as("as sent; the page inserts it as text")
                    .isEqualTo("<b>acme</b>");
            assertThat(byId.get("headers").get("note").asString()).as("a long value is cut")
                    .isEqualTo("v".repeat(200) + "…");
            JsonNode plain = waiting.stream().filter(m -> m.get("body").asString().equals("reactive-plain-with-headers"))
                    .findFirst().orElseThrow();
            assertThat(plain.get("id").isNull()).isTrue();
            assertThat(plain.get("headers").get("tenant").asString()).isEqualTo("globex");

            JsonNode found = get("/ops/rmq/api/topics/ops-backlog/find?id=reactive-product-42");
            assertThat(found.get("waiting").asBoolean()).isTrue();
            assertThat(found.get("id").asString()).isEqualTo("reactive-product-42");
            assertThat(found.get("body").asString()).isEqualTo("price 120");
            assertThat(found.get("headers").get("tenant").asString()).isEqualTo("<b>acme</b>");
            assertThat(get("/ops/rmq/api/topics/ops-backlog/find?body=reactive-plain-with-headers").get("headers")
                    .get("tenant").asString()).isEqualTo("globex");

            assertThat(post("/ops/rmq/api/topics/ops-backlog/reschedule",
                    "{\"id\":\"reactive-product-42\",\"when\":\"3h\"}").get("result").asString())
                    .isEqualTo("RESCHEDULED");
            assertThat(Instant.parse(get("/ops/rmq/api/topics/ops-backlog/find?id=reactive-product-42").get("dueAt")
                    .asString())).isAfter(due);
            assertThat(post("/ops/rmq/api/topics/ops-backlog/cancel", "{\"id\":\"reactive-product-42\"}")
                    .get("removedWaiting").asBoolean()).isTrue();
            assertThat(get("/ops/rmq/api/topics/ops-backlog/find?id=reactive-product-42").get("waiting").asBoolean())
                    .isFalse();
        }
        finally {
            rmq.admin().cancel(MessageRef.id("ops-backlog", "reactive-product-42"));
            rmq.admin().cancel(MessageRef.body("ops-backlog", "reactive-plain-with-headers"));
        }

        try (LogCapture log = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            template.send(OutgoingMessage.fixedTime("ops-failing", "reactive dead payload", Instant.now())
                    .withId("reactive-dead-id").withHeader("tenant", "acme"));
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> rmq.admin().find(MessageRef.id("ops-failing", "reactive-dead-id"))
                    .isDead());
            JsonNode dead = null;
            for (JsonNode m : get("/ops/rmq/api/topics/ops-failing/dead?limit=200").get("messages")) {
                if ("reactive-dead-id".equals(idOf(m))) {
                    dead = m;
                }
            }
            assertThat(dead).isNotNull();
            assertThat(dead.get("body").asString()).isEqualTo("reactive dead payload");
            assertThat(dead.get("headers").get("tenant").asString()).isEqualTo("acme");

            handlers.failing = false;
            assertThat(post("/ops/rmq/api/topics/ops-failing/dead/requeue", "{\"slot\":" + dead.get("slot").asInt()
                    + ",\"id\":\"reactive-dead-id\"}").get("count").asLong()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(30)).until(() -> handlers.handled.contains("reactive dead payload"));
            assertThat(log.warnings()).hasSize(1);
        }
        finally {
            handlers.failing = true;
        }
    }
}
