package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the admin API's records show to people and to JSON. */
class AdminRecordsTest {

    @Test
    void aDeadMessageShowsItsBodyAsTextInJsonAndKeepsTheBytes() {
        JsonMapper json = JsonMapper.builder().build();
        DeadMessage dead = new DeadMessage("orders", 3, "{\"id\":7}".getBytes(StandardCharsets.UTF_8),
                Instant.ofEpochMilli(1_000), 4, null, "boom");
        assertThat(dead.bodyText()).isEqualTo("{\"id\":7}");

        JsonNode tree = json.readTree(json.writeValueAsString(dead));
        assertThat(tree.get("bodyText").asString()).isEqualTo("{\"id\":7}");
        assertThat(tree.get("body").asString()).as("the exact bytes, base64").isEqualTo("eyJpZCI6N30=");

        DeadMessage back = json.readValue(json.writeValueAsString(dead), DeadMessage.class);
        assertThat(back.body()).isEqualTo(dead.body());
        assertThat(back.lastError()).isEqualTo("boom");
    }

    @Test
    void aDeadMessageSentWithAnIdCarriesItsIdAndHeadersThroughJson() {
        JsonMapper json = JsonMapper.builder().build();
        DeadMessage dead = new DeadMessage("orders", 3, "{\"price\":7}".getBytes(StandardCharsets.UTF_8),
                Instant.ofEpochMilli(1_000), 4, null, "boom", "order-42",
                new java.util.LinkedHashMap<>(java.util.Map.of("tenant", "acme")));
        assertThat(dead.headers()).containsExactly(java.util.Map.entry("tenant", "acme"));
        assertThatThrownBy(() -> dead.headers().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);

        JsonNode tree = json.readTree(json.writeValueAsString(dead));
        assertThat(tree.get("id").asString()).isEqualTo("order-42");
        assertThat(tree.get("headers").get("tenant").asString()).isEqualTo("acme");
        DeadMessage back = json.readValue(json.writeValueAsString(dead), DeadMessage.class);
        assertThat(back.id()).isEqualTo("order-42");
        assertThat(back.headers()).isEqualTo(dead.headers());

        DeadMessage plain = new DeadMessage("orders", 3, new byte[] {1}, Instant.EPOCH, 1, null, "boom");
        assertThat(plain.id()).isNull();
        assertThat(plain.headers()).isEmpty();
    }

    @Test
    void topicStatsPrintAsASummaryNotEverySlot() {
        List<TopicStats.SlotStats> slots = IntStream.range(0, 256).mapToObj(s -> new TopicStats.SlotStats(s, 1, 0, 0, 0, null))
                .toList();
        TopicStats stats = new TopicStats("orders", 256, 0, 0, 0, null, slots);
        assertThat(stats).hasToString("TopicStats[topic=orders, waiting=256, inFlight=0, retrying=0, dead=0, slots=256]");
        assertThat(stats.slots()).hasSize(256);
    }
}
