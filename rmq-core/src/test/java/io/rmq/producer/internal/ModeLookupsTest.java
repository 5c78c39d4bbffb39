package io.rmq.producer.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.core.ConsumeMode;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The rate of the mode lookups and what their answers do; the lookup against Redis itself is covered by
 * GroupStorageTest. Redis here is a map and a list of the lookups asked for (answered by the test).
 */
class ModeLookupsTest {

    private final Map<String, TopicDefinition> redis = new ConcurrentHashMap<>();
    private final TopicRegistry registry = new TopicRegistry(d -> redis.computeIfAbsent(d.name(), n -> d), redis::get);
    private final List<CompletableFuture<TopicDefinition>> asked = new CopyOnWriteArrayList<>();

    private ModeLookups lookups(Duration period) {
        return new ModeLookups(name -> {
            CompletableFuture<TopicDefinition> answer = new CompletableFuture<>();
            asked.add(answer);
            return answer;
        }, registry, period);
    }

    @Test
    void oneLookupPerTopicPerPeriodAndTheAnswerUpdatesTheRegistryWithoutTheSenderWaiting() {
        registry.define(new TopicDefinition("orders", TopicType.FIXED_TIME, 4));
        registry.define(new TopicDefinition("ledger", TopicType.FIXED_TIME, 4));
        ModeLookups lookups = lookups(Duration.ofMinutes(10));

        for (int i = 0; i < 100; i++) {
            lookups.lookUp("orders"); // returns at once: nothing answered yet
        }
        lookups.lookUp("ledger");
        assertThat(asked).as("one per topic").hasSize(2);

        asked.get(0).complete(new TopicDefinition("orders", TopicType.FIXED_TIME, 4, ConsumeMode.ORDERLY));
        assertThat(registry.get("orders").mode()).isEqualTo(ConsumeMode.ORDERLY);
        asked.get(1).complete(null);
        assertThat(registry.get("ledger").mode()).isNull();
    }

    @Test
    void aFailedLookupIsTriedAgainAfterThePeriod() {
        registry.define(new TopicDefinition("orders", TopicType.FIXED_TIME, 4));
        ModeLookups lookups = lookups(Duration.ofMillis(50));
        lookups.lookUp("orders");
        asked.get(0).completeExceptionally(new IllegalStateException("Redis gone on purpose")); // logged at debug
        assertThat(registry.get("orders").mode()).isNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            lookups.lookUp("orders");
            return asked.size() == 2;
        });
        asked.get(1).complete(new TopicDefinition("orders", TopicType.FIXED_TIME, 4, ConsumeMode.ORDERLY));
        assertThat(registry.get("orders").mode()).isEqualTo(ConsumeMode.ORDERLY);
    }

    @Test
    void aLookupThatThrowsAtOnceDoesNotReachTheSender() {
        registry.define(new TopicDefinition("orders", TopicType.FIXED_TIME, 4));
        ModeLookups lookups = new ModeLookups(name -> {
            throw new IllegalStateException("not connected, on purpose");
        }, registry, ModeLookups.PERIOD);
        lookups.lookUp("orders");
        assertThat(registry.get("orders").mode()).isNull();
    }
}
