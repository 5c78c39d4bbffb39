package io.rmq.spring.operations;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import io.rmq.spring.listener.RmqListenerEndpointRegistry;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exposing {@code rmq} over HTTP without {@code management.endpoint.rmq.access} gives its reads only: Boot maps no
 * write operation, so a POST answers 405 and changes nothing. ({@link RmqEndpointIntegrationTests} runs the writes
 * with the property.)
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = OpsTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "management.endpoints.web.exposure.include=rmq")
class RmqEndpointReadOnlyByDefaultTest {

    private final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RmqListenerEndpointRegistry registry;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        RedisTopology.STANDALONE.springProperties("ops-read-only-" + UUID.randomUUID())
                .forEach((k, v) -> properties.add(k, () -> v));
    }

    @Test
    void readsAnswerAndWritesAreRefusedWithoutChangingAnything() throws Exception {
        assertThat(send("GET", "/actuator/rmq", null).statusCode()).isEqualTo(200);
        HttpResponse<String> worker = send("GET", "/actuator/rmq/listeners/ops-worker", null);
        assertThat(worker.statusCode()).isEqualTo(200);
        assertThat(worker.body()).contains("\"state\":\"running\"");
        assertThat(send("GET", "/actuator/rmq/topics/ops-work", null).statusCode()).isEqualTo(200);

        assertThat(send("POST", "/actuator/rmq/listeners/ops-worker", "{\"action\":\"pause\"}").statusCode())
                .as("no write operation is mapped").isEqualTo(405);
        assertThat(send("POST", "/actuator/rmq/topics/ops-failing", "{\"action\":\"purge-dead\"}").statusCode())
                .isEqualTo(405);
        assertThat(send("POST", "/actuator/rmq/topics/ops-failing", "{\"action\":\"requeue-dead\"}").statusCode())
                .isEqualTo(405);

        assertThat(registry.getListenerState("ops-worker").status().name()).as("the pause did not happen")
                .isEqualTo("RUNNING");
        assertThat(send("GET", "/actuator/rmq/listeners/ops-worker", null).body()).contains("\"state\":\"running\"");
    }

    private HttpResponse<String> send(String method, String path, String json) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path));
        request = json == null ? request.GET()
                : request.header("Content-Type", "application/json")
                        .method(method, HttpRequest.BodyPublishers.ofString(json));
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
