package io.rmq.autoconfigure;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The metadata the configuration processor generates, which IDEs use to complete rmq.* properties. */
class ConfigurationMetadataTest {

    private final JsonNode metadata = read();

    private static JsonNode read() {
        try (InputStream in = ConfigurationMetadataTest.class.getResourceAsStream(
                "/META-INF/spring-configuration-metadata.json")) {
            return JsonMapper.builder().build().readTree(in);
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private List<String> hintValues(String name) {
        List<String> values = new ArrayList<>();
        for (JsonNode hint : metadata.get("hints")) {
            if (hint.get("name").asString().equals(name)) {
                for (JsonNode value : hint.get("values")) {
                    assertThat(value.path("description").asString()).as(name + " " + value).isNotBlank();
                    values.add(value.get("value").asString());
                }
            }
        }
        return values;
    }

    @Test
    void topicTypesAndListenerModesAreOfferedWithADescriptionEach() {
        assertThat(hintValues("rmq.topics.values.type")).containsExactly("RANGE_MERGE", "PRIORITY", "FIXED_TIME");
        assertThat(hintValues("rmq.listeners.values.mode")).containsExactly("CONCURRENT", "ORDERLY");
        assertThat(hintValues("rmq.topics.values.rate-limit")).contains("500/s");
    }

    @Test
    void theRedisConnectionPropertiesAreDocumentedWithTheirDefaultsAndChoices() {
        assertThat(hintValues("rmq.redis.connection")).containsExactly("own", "application");
        assertThat(hintValues("rmq.redis.disconnected-behavior")).containsExactly("reject-commands", "accept-commands");
        List<String> names = new ArrayList<>();
        for (JsonNode property : metadata.get("properties")) {
            String name = property.get("name").asString();
            if (name.startsWith("rmq.redis.")) {
                names.add(name);
                assertThat(property.path("description").asString()).as(name).isNotBlank();
            }
            if (name.equals("rmq.redis.connection")) {
                assertThat(property.get("defaultValue").asString()).isEqualTo("own");
            }
        }
        assertThat(names).contains("rmq.redis.connection", "rmq.redis.connect-timeout", "rmq.redis.command-timeout",
                "rmq.redis.reconnect-delay-max", "rmq.redis.disconnected-behavior",
                "rmq.redis.topology-refresh-period");
    }

    @Test
    void theFailFastPropertyIsDocumentedWithItsDefault() {
        JsonNode failFast = null;
        for (JsonNode property : metadata.get("properties")) {
            if (property.get("name").asString().equals("rmq.startup.fail-fast")) {
                failFast = property;
            }
        }
        assertThat(failFast).isNotNull();
        assertThat(failFast.get("type").asString()).isEqualTo("java.lang.Boolean");
        assertThat(failFast.get("defaultValue").asBoolean()).isFalse();
        assertThat(failFast.get("description").asString()).contains("Whether start-up fails when Redis cannot be reached");
    }

    @Test
    void theIdAndHeaderLimitsAreDocumentedWithTheirDefaults() {
        java.util.Map<String, JsonNode> byName = new java.util.HashMap<>();
        for (JsonNode property : metadata.get("properties")) {
            byName.put(property.get("name").asString(), property);
        }
        assertThat(byName.get("rmq.max-id-size").get("defaultValue").asString()).isEqualTo("256B");
        assertThat(byName.get("rmq.max-header-value-size").get("defaultValue").asString()).isEqualTo("1KB");
        assertThat(byName.get("rmq.max-headers-size").get("defaultValue").asString()).isEqualTo("8KB");
        assertThat(byName.get("rmq.max-headers").get("defaultValue").asInt()).isEqualTo(32);
        assertThat(byName.get("rmq.max-headers").get("description").asString())
                .isEqualTo("Most headers one message may carry (the sender's own: RMQ's rmq_dlt_* headers, the stored"
                        + " group and the trace context do not count).");
        assertThat(byName.get("rmq.producer.type-header").get("defaultValue").asBoolean()).isFalse();
        assertThat(byName.get("rmq.producer.type-header").get("description").asString()).contains("__TypeId__");
    }

    @Test
    void theTransactionModeIsDocumentedWithItsDefaultAndChoices() {
        assertThat(hintValues("rmq.template.transaction-mode")).containsExactly("after-commit", "immediate");
        JsonNode mode = null;
        for (JsonNode property : metadata.get("properties")) {
            if (property.get("name").asString().equals("rmq.template.transaction-mode")) {
                mode = property;
            }
        }
        assertThat(mode).isNotNull();
        assertThat(mode.get("defaultValue").asString()).isEqualTo("after-commit");
        assertThat(mode.get("description").asString()).contains("after-commit holds it until the transaction commits");
    }

    @Test
    void theTracePropagationPropertiesAreDocumentedWithTheirDefaults() {
        java.util.Map<String, JsonNode> byName = new java.util.HashMap<>();
        for (JsonNode property : metadata.get("properties")) {
            byName.put(property.get("name").asString(), property);
        }
        assertThat(byName.get("rmq.observation.propagate-context").get("defaultValue").asBoolean()).isFalse();
        assertThat(byName.get("rmq.observation.propagate-context").get("description").asString())
                .contains("sampled trace").contains("An unsampled send stores nothing");
        JsonNode unsampled = byName.get("rmq.observation.propagate-unsampled");
        assertThat(unsampled).isNotNull();
        assertThat(unsampled.get("type").asString()).isEqualTo("java.lang.Boolean");
        assertThat(unsampled.get("defaultValue").asBoolean()).isFalse();
        assertThat(unsampled.get("description").asString())
                .startsWith("Whether sends of unsampled traces store their trace context too");
    }
}
