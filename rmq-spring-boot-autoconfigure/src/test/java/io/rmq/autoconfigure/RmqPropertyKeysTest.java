package io.rmq.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** The keys rmq.* takes, as derived from RmqProperties, and the nearest key to one it does not take. */
class RmqPropertyKeysTest {

    private static final RmqPropertyKeys KEYS = RmqPropertyKeys.RMQ;

    private static boolean known(String name) {
        return KEYS.isKnown(ConfigurationPropertyName.adapt(name, '.'));
    }

    private static String nearest(String name) {
        return KEYS.nearest(ConfigurationPropertyName.adapt(name, '.'));
    }

    @Test
    void theKeysAreTheOnesTheConfigurationProcessorDocuments() throws IOException {
        List<String> documented = new ArrayList<>();
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            for (JsonNode property : JsonMapper.builder().build().readTree(in).get("properties")) {
                documented.add(property.get("name").asString());
            }
        }
        List<String> rmq = documented.stream().filter(name -> name.startsWith("rmq.")).toList();
        assertThat(rmq).isNotEmpty().allSatisfy(name -> assertThat(known(name)).as(name).isTrue());
        // map entries (rmq.topics.<name>.type) are documented as the map itself
        assertThat(KEYS.keys()).contains("rmq.consumer.max-retries", "rmq.topics.<name>.slot-amount",
                "rmq.listeners.<name>.mode", "rmq.coordination.zookeeper.connect-string");
        assertThat(KEYS.keys().stream().filter(key -> !key.contains("<name>"))).allSatisfy(key ->
                assertThat(documented).as(key).contains(key));
    }

    @Test
    void everySpellingRelaxedBindingAcceptsIsKnown() {
        assertThat(List.of("rmq.consumer.batch-size", "rmq.consumer.batchSize", "rmq.consumer.batch_size",
                "rmq.consumer.batchsize", "RMQ.CONSUMER.BATCH-SIZE", "rmq[consumer][batch-size]",
                "rmq.topics.orders.type", "rmq.topics.orders.dlt.slot-amount", "rmq.topics[orders.dlt].rateLimit",
                "rmq.topics.orders", "rmq.listeners[billing.handle].mode", "rmq.consumer", "rmq.consumer.backoff"))
                .allSatisfy(name -> assertThat(known(name)).as(name).isTrue());
    }

    @Test
    void misspeltMisplacedAndTooDeepKeysAreUnknown() {
        assertThat(List.of("rmq.consumer.max-retry", "rmq.dashbord.enabled", "rmq.kee-prefix",
                "rmq.topics.orders.slot-amont", "rmq.topics.orders.dlt.slot-amont", "rmq.topics.orders.type.x",
                "rmq.listeners.billing.handle.mode", "rmq.consumer.lease.seconds", "rmq.samples.live-traffic"))
                .allSatisfy(name -> assertThat(known(name)).as(name).isFalse());
    }

    @Test
    void theNearestKeyKeepsTheEntryNamesAsWritten() {
        assertThat(nearest("rmq.consumer.max-retry")).isEqualTo("rmq.consumer.max-retries");
        assertThat(nearest("rmq.consumer.maxRetry")).isEqualTo("rmq.consumer.max-retries");
        assertThat(nearest("rmq.dashbord.enabled")).isEqualTo("rmq.dashboard.enabled");
        assertThat(nearest("rmq.consumer.backof.initial")).isEqualTo("rmq.consumer.backoff.initial");
        assertThat(nearest("rmq.topics.orders.slot-amont")).isEqualTo("rmq.topics.orders.slot-amount");
        assertThat(nearest("rmq.topics.orders.dlt.slot-amont")).isEqualTo("rmq.topics.orders.dlt.slot-amount");
        assertThat(nearest("rmq.listeners.billing.handle.mode")).isEqualTo("rmq.listeners[billing.handle].mode");
        // the right key at the wrong level
        assertThat(nearest("rmq.batch-size")).isEqualTo("rmq.consumer.batch-size");
    }

    @Test
    void withNoKeyNearTheKeysOfTheDeepestGroupReachedAreListed() {
        ConfigurationPropertyName far = ConfigurationPropertyName.of("rmq.consumer.sleep-between-polls");
        assertThat(KEYS.nearest(far)).isNull();
        assertThat(KEYS.keysNear(far)).isEqualTo("rmq.consumer takes concurrency, batch-size, lease, max-retries,"
                + " backoff, max-idle, command-timeout, look-ahead, payload-mapping, dead-letter-max-count,"
                + " dead-letter-max-age, dead-letter-keep-expired");
        assertThat(KEYS.keysNear(ConfigurationPropertyName.of("rmq.queue")))
                .startsWith("rmq takes enabled, key-prefix,");
    }

    record Sample(List<String> hosts, Map<String, Integer> weights, Nested nested) {
        record Nested(String name) {
        }
    }

    @Test
    void listsAndMapsOfValuesTakeIndexesAndNamesAndNothingUnder() {
        RmqPropertyKeys keys = new RmqPropertyKeys(Sample.class, "sample", "");
        assertThat(keys.isKnown(ConfigurationPropertyName.of("sample.hosts[0]"))).isTrue();
        assertThat(keys.isKnown(ConfigurationPropertyName.of("sample.weights.a"))).isTrue();
        assertThat(keys.isKnown(ConfigurationPropertyName.of("sample.nested.name"))).isTrue();
        assertThat(keys.isKnown(ConfigurationPropertyName.of("sample.weights.a.b"))).isFalse();
        assertThat(keys.isKnown(ConfigurationPropertyName.of("sample.hosts[0].port"))).isFalse();
        assertThat(keys.keys()).containsExactly("sample.hosts.<name>", "sample.weights.<name>", "sample.nested.name");
    }
}
