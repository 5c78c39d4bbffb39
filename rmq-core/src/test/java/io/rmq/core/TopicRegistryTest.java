package io.rmq.core;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Definitions kept while Redis was unreachable. The registry's Redis side is two functions; here they are a map
 * standing in for {@code <prefix>:topics} (the Redis round trip itself is covered by LazyConnectionTest).
 */
class TopicRegistryTest {

    private final Map<String, TopicDefinition> redis = new ConcurrentHashMap<>();
    private final TopicRegistry registry = new TopicRegistry(d -> redis.computeIfAbsent(d.name(), n -> d), redis::get);

    @Test
    void aTopicDefinedWhileRedisIsDownIsUsableAtOnceAndRegisteredLater() {
        registry.defineLocally(new TopicDefinition("orders", TopicType.FIXED_TIME, 8));
        assertThat(registry.get("orders").slotAmount()).isEqualTo(8);
        assertThat(redis).isEmpty();

        assertThat(registry.registerPending()).isEmpty();
        assertThat(redis.get("orders")).isEqualTo(new TopicDefinition("orders", TopicType.FIXED_TIME, 8));
    }

    @Test
    void aLocalConflictFailsAtOnceEvenWhileRedisIsDown() {
        registry.defineLocally(new TopicDefinition("orders", TopicType.FIXED_TIME, 8));
        assertThatThrownBy(() -> registry.defineLocally(new TopicDefinition("orders", TopicType.PRIORITY, 8)))
                .isInstanceOf(TopicConflictException.class)
                .hasMessageContaining("topic 'orders' type=FIXED_TIME slotAmount=8 (defined earlier in this application)")
                .hasMessageContaining("topic 'orders' type=PRIORITY slotAmount=8 (requested)");
    }

    @Test
    void aDefinitionThatConflictsWithRedisWhenRegisteredLateIsWithdrawnAndItsUseFailsWithBothDefinitions() {
        redis.put("orders", new TopicDefinition("orders", TopicType.PRIORITY, 16));
        registry.defineLocally(new TopicDefinition("orders", TopicType.FIXED_TIME, 8));

        assertThat(registry.registerPending()).singleElement()
                .satisfies(c -> assertThat(c.getExisting().type()).isEqualTo(TopicType.PRIORITY));
        assertThatThrownBy(() -> registry.get("orders")).isInstanceOf(TopicConflictException.class)
                .hasMessageContaining("topic 'orders' type=PRIORITY slotAmount=16 (registered in Redis)")
                .hasMessageContaining("topic 'orders' type=FIXED_TIME slotAmount=8 (requested)");
    }

    @Test
    void aModeLearnedFromRedisFillsOnlyADefinitionWithoutOneOfTheSameShape() {
        registry.define(new TopicDefinition("orders", TopicType.FIXED_TIME, 8));
        registry.define(new TopicDefinition("ledger", TopicType.FIXED_TIME, 8, ConsumeMode.CONCURRENT));

        registry.modeLearned(new TopicDefinition("orders", TopicType.FIXED_TIME, 4, ConsumeMode.ORDERLY));
        assertThat(registry.get("orders").mode()).as("another shape: left to the conflict check").isNull();
        registry.modeLearned(new TopicDefinition("orders", TopicType.FIXED_TIME, 8));
        assertThat(registry.get("orders").mode()).isNull();
        registry.modeLearned(new TopicDefinition("orders", TopicType.FIXED_TIME, 8, ConsumeMode.ORDERLY));
        assertThat(registry.get("orders")).isEqualTo(
                new TopicDefinition("orders", TopicType.FIXED_TIME, 8, ConsumeMode.ORDERLY));

        registry.modeLearned(new TopicDefinition("ledger", TopicType.FIXED_TIME, 8, ConsumeMode.ORDERLY));
        assertThat(registry.get("ledger").mode()).as("a mode known here stays").isEqualTo(ConsumeMode.CONCURRENT);
        registry.modeLearned(new TopicDefinition("unknown", TopicType.FIXED_TIME, 8, ConsumeMode.ORDERLY));
        assertThat(registry.all()).doesNotContainKey("unknown");
    }
}
