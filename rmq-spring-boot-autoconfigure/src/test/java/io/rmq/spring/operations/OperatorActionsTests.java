package io.rmq.spring.operations;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.admin.MessageRef;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.dashboard.RmqDashboard;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operator's actions (issue 44, item 9) through {@link RmqOperations} and the dashboard's routes, against a real
 * Redis, standalone and cluster (the subclasses): "run now" and "delete" for retries and waiting messages (one and a
 * selection), requeue and delete of the dead messages matching a search (the answer counts what was acted on), dead
 * messages counted by error class, the read-only refusal, and one audit line per POST with who and what.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = {OpsTestApplication.class, OperatorActionsListeners.class},
        properties = {"rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.topics.ops-backlog.slot-amount=4",
                "rmq.topics.ops-queue.type=PRIORITY", "rmq.topics.ops-queue.slot-amount=2",
                "rmq.listeners.ops-orderly.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s"})
abstract class OperatorActionsTests {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String AUDIT = "io.rmq.spring.dashboard.audit";

    @Autowired
    RmqTemplate template;

    @Autowired
    Rmq rmq;

    @Autowired
    RmqOperations operations;

    abstract RedisTopology topology();

    static void redis(DynamicPropertyRegistry registry, RedisTopology topology) {
        topology.springProperties("actions-" + topology.name().toLowerCase() + "-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    static JsonNode json(RmqDashboard.Reply reply) {
        assertThat(reply.status()).as(RmqDashboard.json(reply.body())).isEqualTo(200);
        return JSON.readTree(RmqDashboard.json(reply.body()));
    }

    RmqDashboard writable() {
        return new RmqDashboard(operations, "/rmq", false, null);
    }

    static String selection(JsonNode... messages) {
        List<String> entries = new ArrayList<>();
        for (JsonNode m : messages) {
            entries.add("{\"slot\":" + m.get("slot").asInt() + ",\"handle\":\"" + m.get("handle").asString() + "\"}");
        }
        return "{\"messages\":[" + String.join(",", entries) + "]}";
    }

    static JsonNode byHandleText(JsonNode page, String body) {
        for (JsonNode m : page.get("messages")) {
            if (new String(Base64.getDecoder().decode(m.get("handle").asString()), StandardCharsets.UTF_8)
                    .equals(body)) {
                return m;
            }
        }
        throw new AssertionError("no message " + body + " in " + page);
    }

    @Test
    void retriesRunNowEndsTheBackoffKeepingTheAttemptCountAndDeleteRemovesThem() throws Exception {
        RmqDashboard dashboard = writable();
        try (LogCapture failures = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE);
                LogCapture audit = LogCapture.of(AUDIT)) {
            for (String body : List.of("rn-1", "rn-2", "rn-3")) {
                template.send(OutgoingMessage.fixedTime("ops-flaky", body, Instant.now()));
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(operations.retries("ops-flaky", 0,
                    50).messages()).extracting(RmqOperations.RetryView::handle).contains(handle("rn-1"),
                    handle("rn-2"), handle("rn-3")));
            JsonNode page = json(dashboard.get("topics/ops-flaky/retries", name -> name.equals("limit") ? "50" : null));
            JsonNode one = byHandleText(page, "rn-1");
            assertThat(one.get("attempt").asInt()).isEqualTo(1);

            // run now: due at once, handed out again (it fails again: attempt 2, a new 5-minute backoff)
            JsonNode ran = json(dashboard.post("topics/ops-flaky/retries/run-now", selection(one), "alice from 10.0.0.7"));
            assertThat(ran.get("action").asString()).isEqualTo("run-now");
            assertThat(ran.get("count").asLong()).isEqualTo(1);
            // (while it is in flight it is not among the retries)
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(operations.retries("ops-flaky", 0, 50)
                    .messages().stream().filter(m -> m.handle().equals(handle("rn-1")))
                    .map(RmqOperations.RetryView::attempt).toList()).containsExactly(2));
            assertThat(operations.retries("ops-flaky", 0, 50).messages().stream()
                    .filter(m -> m.handle().equals(handle("rn-2"))).findFirst().orElseThrow().attempt())
                    .as("the others keep waiting").isEqualTo(1);

            // delete a selection of two: gone from the retries and from the topic
            JsonNode two = json(dashboard.post("topics/ops-flaky/retries/delete",
                    selection(byHandleText(page, "rn-2"), byHandleText(page, "rn-3")), "alice from 10.0.0.7"));
            assertThat(two.get("count").asLong()).isEqualTo(2);
            assertThat(operations.find("ops-flaky", "rn-2").waiting()).isFalse();
            assertThat(operations.find("ops-flaky", "rn-3").retryAt()).isNull();
            assertThat(operations.retries("ops-flaky", 0, 50).messages()).extracting(RmqOperations.RetryView::handle)
                    .doesNotContain(handle("rn-2"), handle("rn-3")).contains(handle("rn-1"));
            // deleting again finds nothing: the answer counts what was acted on
            assertThat(json(dashboard.post("topics/ops-flaky/retries/delete",
                    selection(byHandleText(page, "rn-2")), "alice")).get("count").asLong()).isZero();

            assertThat(audit.messages()).hasSize(3);
            assertThat(audit.messages().get(0)).isEqualTo("RMQ dashboard: alice from 10.0.0.7 POST"
                    + " topics/ops-flaky/retries/run-now (messages=1: slot " + one.get("slot").asInt() + " body)"
                    + " -> 200 count 1");
            assertThat(audit.messages().get(1)).startsWith("RMQ dashboard: alice from 10.0.0.7 POST"
                    + " topics/ops-flaky/retries/delete (messages=2: ").endsWith("-> 200 count 2");
            assertThat(failures.warnings()).isNotEmpty();
        }
    }

    @Test
    void aPriorityRetryRunNowComesBackWithItsPriorityAndAWaitingPriorityMessageIsLeftAlone() throws Exception {
        try (LogCapture failures = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE);
                LogCapture audit = LogCapture.of(AUDIT)) {
            int before = OperatorActionsListeners.PRIORITY_ATTEMPTS.size();
            template.send(OutgoingMessage.priority("ops-prio-flaky", "prio-1", 7).withId("p-1"));
            await().atMost(Duration.ofSeconds(30)).until(() -> operations.retries("ops-prio-flaky", 0, 10).total() == 1);
            RmqOperations.RetryView retry = operations.retries("ops-prio-flaky", 0, 10).messages().get(0);
            assertThat(retry.id()).isEqualTo("p-1");
            assertThat(OperatorActionsListeners.PRIORITY_ATTEMPTS).hasSize(before + 1);

            JsonNode ran = json(writable().post("topics/ops-prio-flaky/retries/run-now",
                    "{\"messages\":[{\"slot\":" + retry.slot() + ",\"id\":\"p-1\"}]}", "bob"));
            assertThat(ran.get("count").asLong()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> OperatorActionsListeners.PRIORITY_ATTEMPTS.size() == before + 2);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(operations.retries("ops-prio-flaky",
                    0, 10).messages()).singleElement().extracting(RmqOperations.RetryView::attempt).isEqualTo(2));
            assertThat(audit.messages()).containsExactly("RMQ dashboard: bob POST topics/ops-prio-flaky/retries/run-now"
                    + " (messages=1: slot " + retry.slot() + " id p-1) -> 200 count 1");
            assertThat(failures.warnings()).isNotEmpty();
        }
        // a PRIORITY message waiting in the store is due already: run now leaves it (and its priority) alone
        template.send(OutgoingMessage.priority("ops-queue", "queued", 3));
        JsonNode waiting = json(writable().get("topics/ops-queue/waiting", name -> null));
        JsonNode queued = byHandleText(waiting, "queued");
        assertThat(json(writable().post("topics/ops-queue/waiting/run-now", selection(queued), "bob")).get("count")
                .asLong()).isZero();
        assertThat(operations.find("ops-queue", "queued").priority()).isEqualTo(3);
    }

    @Test
    void aWaitingMessageRunNowIsDueAtOnceAndDeleteRemovesIt() throws Exception {
        Instant later = Instant.now().plus(Duration.ofHours(2));
        template.send(OutgoingMessage.fixedTime("ops-backlog", "w-1", later));
        template.send(OutgoingMessage.fixedTime("ops-backlog", "w-2", later).withId("w-id-2").withGroup("g-7"));
        RmqDashboard dashboard = writable();
        JsonNode page = json(dashboard.get("topics/ops-backlog/waiting", name -> name.equals("limit") ? "50" : null));
        JsonNode first = byHandleText(page, "w-1");
        JsonNode second = null;
        for (JsonNode m : page.get("messages")) {
            if ("w-id-2".equals(m.get("id").asString())) {
                second = m;
            }
        }
        assertThat(Instant.parse(first.get("dueAt").asString())).isAfter(Instant.now().plus(Duration.ofHours(1)));

        try (LogCapture audit = LogCapture.of(AUDIT)) {
            JsonNode ran = json(dashboard.post("topics/ops-backlog/waiting/run-now", selection(first, second), "carol"));
            assertThat(ran.get("count").asLong()).isEqualTo(2);
            assertThat(operations.find("ops-backlog", "w-1").dueAt()).isBefore(Instant.now().plusSeconds(1));
            // the message sent with a group is found in its group's slot, where the view listed it
            assertThat(rmq.admin().find(MessageRef.id("ops-backlog", "w-id-2").inGroup("g-7")).waitingScore())
                    .isLessThanOrEqualTo((double) Instant.now().plusSeconds(1).toEpochMilli());

            JsonNode deleted = json(dashboard.post("topics/ops-backlog/waiting/delete", selection(first), "carol"));
            assertThat(deleted.get("action").asString()).isEqualTo("delete");
            assertThat(deleted.get("count").asLong()).isEqualTo(1);
            assertThat(operations.find("ops-backlog", "w-1").waiting()).isFalse();
            assertThat(audit.messages()).hasSize(2);
            assertThat(audit.messages().get(1)).isEqualTo("RMQ dashboard: carol POST topics/ops-backlog/waiting/delete"
                    + " (messages=1: slot " + first.get("slot").asInt() + " body) -> 200 count 1");
        }
    }

    @Test
    void deadMessagesAreGroupedByErrorClassAndWhatMatchesASearchIsRequeuedOrDeleted() throws Exception {
        try (LogCapture failures = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            for (int i = 0; i < 5; i++) {
                template.send(OutgoingMessage.fixedTime("ops-mixed", "state-" + i, Instant.now()));
            }
            for (int i = 0; i < 3; i++) {
                template.send(OutgoingMessage.fixedTime("ops-mixed", "arg-" + i, Instant.now()));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("ops-mixed") == 8);
            assertThat(failures.warnings()).hasSize(8);
        }
        RmqDashboard dashboard = writable();
        JsonNode groups = json(dashboard.get("topics/ops-mixed/dead-groups", name -> null));
        assertThat(groups.get("scanned").asLong()).isEqualTo(8);
        assertThat(groups.get("capped").asBoolean()).isFalse();
        assertThat(groups.get("groups").get(0).get("errorClass").asString())
                .isEqualTo("java.lang.IllegalStateException");
        assertThat(groups.get("groups").get(0).get("count").asLong()).isEqualTo(5);
        assertThat(groups.get("groups").get(1).get("errorClass").asString())
                .isEqualTo("java.lang.IllegalArgumentException");
        assertThat(groups.get("groups").get(1).get("count").asLong()).isEqualTo(3);

        // the operator confirms the count the search showed (3); meanwhile someone deletes one of them
        JsonNode search = json(dashboard.get("topics/ops-mixed/dead",
                name -> name.equals("error") ? "IllegalArgumentException" : null));
        assertThat(search.get("total").asLong()).isEqualTo(3);
        assertThat(json(dashboard.post("topics/ops-mixed/dead/delete-selected", selection(search.get("messages").get(0)),
                "someone-else")).get("count").asLong()).isEqualTo(1);
        int attemptsBefore = OperatorActionsListeners.MIXED_ATTEMPTS.size();
        try (LogCapture failures = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE);
                LogCapture audit = LogCapture.of(AUDIT)) {
            JsonNode requeued = json(dashboard.post("topics/ops-mixed/dead/requeue-matching",
                    "{\"error\":\"IllegalArgumentException\"}", "dave"));
            assertThat(requeued.get("action").asString()).isEqualTo("requeue-dead-matching");
            assertThat(requeued.get("count").asLong()).as("the answer says how many were acted on").isEqualTo(2);
            assertThat(requeued.get("matched").asLong()).isEqualTo(2);
            assertThat(requeued.get("more").asBoolean()).isFalse();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> OperatorActionsListeners.MIXED_ATTEMPTS.size() == attemptsBefore + 2);
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("ops-mixed") == 7);
            assertThat(audit.messages()).containsExactly("RMQ dashboard: dave POST topics/ops-mixed/dead/requeue-matching"
                    + " (error=IllegalArgumentException) -> 200 count 2 of 2 matched");
        }

        // delete what matches error and prefix together: the five states (the arg ones died again, they stay)
        try (LogCapture audit = LogCapture.of(AUDIT)) {
            JsonNode deleted = json(dashboard.post("topics/ops-mixed/dead/delete-matching",
                    "{\"error\":\"illegalstate\",\"prefix\":\"state-\"}", "dave"));
            assertThat(deleted.get("count").asLong()).isEqualTo(5);
            assertThat(json(dashboard.get("topics/ops-mixed/dead-groups", name -> null)).get("groups")).singleElement()
                    .satisfies(g -> assertThat(g.get("count").asLong()).isEqualTo(2));
            assertThat(audit.messages()).singleElement().asString().contains("dave", "delete-matching",
                    "error=illegalstate", "prefix=state-", "count 5 of 5 matched");
        }
    }

    @Test
    void oneRequestActsOnAtMostAThousandMatchesAndSaysWhenMoreAreLeft() throws Exception {
        try (LogCapture failures = LogCapture.rmq().expecting(OpsTestApplication.ON_PURPOSE)) {
            for (int i = 0; i < 1005; i++) {
                template.send(OutgoingMessage.fixedTime("ops-mixed", "bulk-" + i, Instant.now()));
            }
            await().atMost(Duration.ofSeconds(120)).until(() -> operations.dead("ops-mixed", 0, 1, null, "bulk-")
                    .total() == 1005);
            assertThat(failures.warnings()).isNotEmpty();
        }
        RmqDashboard dashboard = writable();
        JsonNode first = json(dashboard.post("topics/ops-mixed/dead/delete-matching", "{\"prefix\":\"bulk-\"}",
                "dave"));
        assertThat(first.get("count").asLong()).isEqualTo(1000);
        assertThat(first.get("matched").asLong()).isEqualTo(1005);
        assertThat(first.get("more").asBoolean()).as("matches were left for another request").isTrue();
        JsonNode second = json(dashboard.post("topics/ops-mixed/dead/delete-matching", "{\"prefix\":\"bulk-\"}",
                "dave"));
        assertThat(second.get("count").asLong()).isEqualTo(5);
        assertThat(second.get("more").asBoolean()).isFalse();
        assertThat(operations.dead("ops-mixed", 0, 1, null, "bulk-").total()).isZero();
    }

    @Test
    void theActionsAreRefusedWhileReadOnlyAndTheRefusalIsAudited() throws Exception {
        template.send(OutgoingMessage.fixedTime("ops-backlog", "ro-1", Instant.now().plus(Duration.ofHours(2))));
        RmqDashboard readOnly = new RmqDashboard(operations, "/rmq", true, null);
        JsonNode page = json(readOnly.get("topics/ops-backlog/waiting", name -> name.equals("limit") ? "50" : null));
        String one = selection(byHandleText(page, "ro-1"));
        try (LogCapture audit = LogCapture.of(AUDIT)) {
            for (String route : List.of("topics/ops-backlog/waiting/run-now", "topics/ops-backlog/waiting/delete",
                    "topics/ops-backlog/retries/run-now", "topics/ops-backlog/retries/delete")) {
                assertThat(readOnly.post(route, one, "eve").status()).as(route).isEqualTo(403);
            }
            for (String route : List.of("topics/ops-backlog/dead/requeue-matching",
                    "topics/ops-backlog/dead/delete-matching")) {
                assertThat(readOnly.post(route, "{\"error\":\"x\"}", "eve").status()).as(route).isEqualTo(403);
            }
            assertThat(audit.messages()).hasSize(6).allSatisfy(line -> assertThat(line).startsWith("RMQ dashboard:"
                    + " eve POST topics/ops-backlog/").endsWith("-> 403 The RMQ dashboard is read-only"
                    + " (rmq.dashboard.read-only=true)"));
        }
        assertThat(operations.find("ops-backlog", "ro-1").dueAt()).isAfter(Instant.now().plus(Duration.ofHours(1)));
        // a bad selection is refused naming the entry, nothing done
        RmqDashboard.Reply bad = writable().post("topics/ops-backlog/waiting/run-now",
                "{\"messages\":[{\"slot\":1,\"handle\":\"%%%\"}]}", "eve");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(RmqDashboard.json(bad.body())).contains("messages[0].handle", "%%%", "base64");
    }

    private static String handle(String body) {
        return Base64.getEncoder().encodeToString(body.getBytes(StandardCharsets.UTF_8));
    }
}
