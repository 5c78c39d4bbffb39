package io.rmq.spring.operations;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;

import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@code /actuator/rmq} and the dashboard's API ({@code /rmq/api}) answer a request that fails, over HTTP on a
 * real port against a real Redis, with Boot's default {@code server.error.include-message=never} set explicitly: every
 * answer still carries its reason ({@code error}, and {@code field}, {@code value}, {@code rule}); an unknown topic is
 * one 404 on every route of both; an invalid topic name, a page size out of range and an id over
 * {@code rmq.max-id-size} are 400s naming field, value and rule; nothing is written by a refused request.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"rmq.topics.ops-backlog.type=FIXED_TIME", "rmq.topics.ops-backlog.slot-amount=4",
                "rmq.listeners.ops-orderly.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s",
                "management.endpoints.web.exposure.include=rmq", "management.endpoint.rmq.access=unrestricted",
                "rmq.dashboard.enabled=true", "rmq.dashboard.read-only=false",
                "server.error.include-message=never", "server.error.include-binding-errors=never"})
class ErrorAnswersTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** 300 bytes: over the default rmq.max-id-size of 256. */
    private static final String LONG_ID = "x".repeat(300);

    private static final String TOPIC_RULE = "must be defined here or registered in Redis";

    private final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RmqTemplate template;

    @Autowired
    io.rmq.Rmq rmq;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        RedisTopology.STANDALONE.springProperties("errors-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, String json) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The answer's JSON body, after checking its status. */
    private static JsonNode answer(HttpResponse<String> response, int status) {
        assertThat(response.statusCode()).as(response.request().method() + " " + response.request().uri() + ": "
                + response.body()).isEqualTo(status);
        return JSON.readTree(response.body());
    }

    /** A 400 or 404 body: the message, and field, value and rule apart. */
    private static void names(JsonNode body, String field, String value, String rule) {
        assertThat(body.get("field").asString()).as(body.toString()).isEqualTo(field);
        assertThat(body.get("value").asString()).as(body.toString()).isEqualTo(value);
        assertThat(body.get("rule").asString()).as(body.toString()).contains(rule);
        assertThat(body.get("error").asString()).as(body.toString()).contains(field).contains(value).contains(rule);
    }

    private static String enc(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @Test
    void theEndpointNamesWhatItDidNotFind() throws Exception {
        JsonNode topic = answer(get("/actuator/rmq/topics/nope"), 404);
        names(topic, "topic", "nope", TOPIC_RULE);
        assertThat(topic.get("error").asString()).isEqualTo("No topic 'nope': " + TOPIC_RULE);
        names(answer(get("/actuator/rmq/listeners/nope"), 404), "listener", "nope", "listener of this application");
        names(answer(get("/actuator/rmq/instances/nope"), 404), "instance", "nope", "live instance");
        names(answer(get("/actuator/rmq/schedules/nope"), 404), "schedule", "nope", "schedule of this application");
        names(answer(get("/actuator/rmq/widgets"), 404), "route", "widgets", "must be topics, listeners");
        names(answer(get("/actuator/rmq/widgets/nope"), 404), "route", "widgets/nope", "must be topics, listeners");
        names(answer(get("/actuator/rmq/topics/ops-work/nothing-here"), 404), "route", "topics/ops-work/nothing-here",
                "retries, in-flight, dead or history");

        // every route under the topic answers the same
        for (String part : new String[] {"dead", "retries", "in-flight", "history"}) {
            assertThat(answer(get("/actuator/rmq/topics/nope/" + part), 404)).as(part).isEqualTo(topic);
        }
        assertThat(answer(post("/actuator/rmq/topics/nope", "{\"action\":\"purge-dead\"}"), 404)).isEqualTo(topic);
        assertThat(answer(post("/actuator/rmq/topics/nope", "{\"action\":\"pause\"}"), 404)).isEqualTo(topic);
        names(answer(post("/actuator/rmq/listeners/nope", "{\"action\":\"pause\"}"), 404), "listener", "nope",
                "listener of this application");
        names(answer(post("/actuator/rmq/listeners/nope", "{\"action\":\"pause-cluster\"}"), 404), "listener",
                "nope", "here or on a live instance");
        names(answer(post("/actuator/rmq/schedules/nope", "{\"action\":\"pause\"}"), 404), "schedule", "nope",
                "schedule of this application");
        assertThat(answer(get("/actuator/rmq/pauses"), 200)).as("nothing was paused").isEmpty();
    }

    @Test
    void theEndpointNamesFieldValueAndRuleOfABadRequest() throws Exception {
        names(answer(post("/actuator/rmq/topics/ops-work", "{\"action\":\"explode\"}"), 400), "action", "explode",
                "must be pause, resume, requeue-dead, purge-dead");
        names(answer(post("/actuator/rmq/listeners/ops-worker", "{\"action\":\"explode\"}"), 400), "action",
                "explode", "must be pause, resume, pause-cluster or resume-cluster");
        JsonNode missing = answer(post("/actuator/rmq/topics/ops-work", "{}"), 400);
        assertThat(missing.get("field").asString()).isEqualTo("action");
        assertThat(missing.get("value").isNull()).isTrue();
        assertThat(missing.get("rule").asString()).contains("requeue-dead");

        names(answer(get("/actuator/rmq/topics/ops-work/dead?limit=4294967297"), 400), "limit", "4294967297",
                "must be a whole number between 1 and 200");
        names(answer(get("/actuator/rmq/topics/ops-work/retries?limit=0"), 400), "limit", "0", "between 1 and 200");
        names(answer(get("/actuator/rmq/topics/ops-work/in-flight?offset=-1"), 400), "offset", "-1",
                "zero or positive");
        names(answer(get("/actuator/rmq/topics/ops-work/dead?offset=first"), 400), "offset", "first",
                "whole number");
        names(answer(get("/actuator/rmq/topics/ops-work/history?resolution=second"), 400), "resolution", "second",
                "must be minute or hour");
        names(answer(get("/actuator/rmq/topics/" + enc("a:b")), 400), "topic name", "a:b",
                "letters, digits");
        names(answer(get("/actuator/rmq/topics/" + enc("a:b") + "/dead"), 400), "topic name", "a:b",
                "letters, digits");
        names(answer(post("/actuator/rmq/topics/ops-work", "{\"action\":\"delete-dead-selected\",\"messages\":"
                + "\"[{\\\"slot\\\":0,\\\"id\\\":\\\"" + LONG_ID + "\\\"}]\"}"), 400), "messages[0].id",
                LONG_ID.substring(0, ErrorReply.VALUE_CHARS) + "… (300 characters)", "at most 256 bytes");
    }

    @Test
    void theDashboardAnswersAnUnknownTopicOneWayOnEveryRoute() throws Exception {
        JsonNode topic = answer(get("/rmq/api/topics/nope"), 404);
        names(topic, "topic", "nope", TOPIC_RULE);
        assertThat(answer(get("/actuator/rmq/topics/nope"), 404)).as("as the endpoint answers").isEqualTo(topic);
        for (String route : new String[] {"dead", "dead?error=x", "retries", "waiting", "in-flight", "history",
                "find?body=x", "find?id=x"}) {
            assertThat(answer(get("/rmq/api/topics/nope/" + route), 404)).as(route).isEqualTo(topic);
        }
        for (String route : new String[] {"dead/purge", "dead/requeue-all", "pause", "resume", "cancel",
                "dead/requeue"}) {
            assertThat(answer(post("/rmq/api/topics/nope/" + route, "{\"id\":\"x\",\"slot\":0}"), 404)).as(route)
                    .isEqualTo(topic);
        }
        names(answer(get("/rmq/api/topics/" + enc("a:b") + "/dead"), 400), "topic name", "a:b", "letters, digits");
        names(answer(get("/rmq/api/listeners/nope"), 404), "listener", "nope", "listener of this application");
        names(answer(get("/rmq/api/instances/nope"), 404), "instance", "nope", "live instance");
        names(answer(post("/rmq/api/listeners/nope/pause", "{}"), 404), "listener", "nope",
                "listener of this application");
        names(answer(post("/rmq/api/schedules/nope/pause", "{}"), 404), "schedule", "nope",
                "schedule of this application");
        names(answer(get("/rmq/api/widgets"), 404), "route", "GET widgets", "route of the dashboard's API");
        names(answer(get("/rmq/api/topics/ops-work/nothing-here"), 404), "route", "GET topics/ops-work/nothing-here",
                "route of the dashboard's API");
    }

    @Test
    void theDashboardRefusesAPageSizeItCannotServeInsteadOfNarrowingIt() throws Exception {
        for (String route : new String[] {"dead", "dead?error=x&", "waiting", "retries", "in-flight"}) {
            String path = "/rmq/api/topics/ops-backlog/" + (route.endsWith("&") ? route : route + "?");
            names(answer(get(path + "limit=4294967297"), 400), "limit", "4294967297",
                    "must be a whole number between 1 and 200");
            names(answer(get(path + "limit=-1"), 400), "limit", "-1", "between 1 and 200");
            names(answer(get(path + "limit=many"), 400), "limit", "many", "whole number");
        }
        names(answer(get("/rmq/api/topics/ops-backlog/dead?offset=-5"), 400), "offset", "-5", "zero or positive");
        assertThat(answer(get("/rmq/api/topics/ops-backlog/dead?limit=200"), 200).get("limit").asInt())
                .isEqualTo(200);
    }

    @Test
    void theDashboardRefusesAnIdNoMessageCanHave() throws Exception {
        String shown = LONG_ID.substring(0, ErrorReply.VALUE_CHARS) + "… (300 characters)";
        Instant later = Instant.now().plusSeconds(3600);
        template.send(OutgoingMessage.fixedTime("ops-backlog", "payload", later).withId("kept"));
        long waiting = rmq.admin().stats("ops-backlog").waiting();

        names(answer(get("/rmq/api/topics/ops-backlog/find?id=" + LONG_ID), 400), "id", shown,
                "must be at most 256 bytes (rmq.max-id-size)");
        names(answer(post("/rmq/api/topics/ops-backlog/cancel", "{\"id\":\"" + LONG_ID + "\"}"), 400), "id", shown,
                "at most 256 bytes");
        names(answer(post("/rmq/api/topics/ops-backlog/reschedule", "{\"id\":\"" + LONG_ID + "\",\"when\":\"now\"}"),
                400), "id", shown, "at most 256 bytes");
        names(answer(post("/rmq/api/topics/ops-backlog/dead/requeue", "{\"slot\":0,\"id\":\"" + LONG_ID + "\"}"),
                400), "id", shown, "at most 256 bytes");
        names(answer(post("/rmq/api/topics/ops-backlog/dead/delete", "{\"slot\":0,\"id\":\"" + LONG_ID + "\"}"),
                400), "id", shown, "at most 256 bytes");
        names(answer(post("/rmq/api/topics/ops-backlog/dead/requeue-selected", "{\"messages\":[{\"slot\":0,"
                + "\"id\":\"kept\"},{\"slot\":1,\"id\":\"" + LONG_ID + "\"}]}"), 400), "messages[1].id", shown,
                "at most 256 bytes");

        // an empty id names the id, not the body
        names(answer(get("/rmq/api/topics/ops-backlog/find?id="), 400), "id", "", "must not be empty");
        names(answer(post("/rmq/api/topics/ops-backlog/cancel", "{\"id\":\"\"}"), 400), "id", "", "must be given");
        JsonNode neither = answer(get("/rmq/api/topics/ops-backlog/find"), 400);
        assertThat(neither.get("field").asString()).isEqualTo("body");
        assertThat(neither.get("value").isNull()).isTrue();
        assertThat(neither.get("rule").asString()).contains("must be given (or id");
        JsonNode both = answer(get("/rmq/api/topics/ops-backlog/find?id=kept&body=payload"), 400);
        assertThat(both.get("rule").asString()).contains("exactly one");

        assertThat(answer(get("/rmq/api/topics/ops-backlog/find?id=kept"), 200).get("waiting").asBoolean())
                .as("the refused requests changed nothing").isTrue();
        assertThat(rmq.admin().stats("ops-backlog").waiting()).isEqualTo(waiting);
    }
}
