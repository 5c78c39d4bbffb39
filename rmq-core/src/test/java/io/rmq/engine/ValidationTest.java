package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicConflictException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ParameterizedClass
@EnumSource(RedisTopology.class)
class ValidationTest extends EngineTestSupport {

    ValidationTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void badTopicNamesAreRejectedWithTheRule() {
        for (String bad : new String[] {"", "a{b}", "orders:eu", "with space", "x".repeat(101)}) {
            assertThatThrownBy(() -> new TopicDefinition(bad, TopicType.PRIORITY, 4))
                    .isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessageContaining("topic name")
                    .hasMessageContaining("'" + bad + "'")
                    .hasMessageContaining("letters, digits");
        }
        assertThatThrownBy(() -> new TopicDefinition(null, TopicType.PRIORITY, 4)).hasMessageContaining("topic name 'null'");
        assertThat(new TopicDefinition("orders.v2_eu-1", TopicType.PRIORITY, 4).name()).isEqualTo("orders.v2_eu-1");
    }

    @Test
    void slotAmountMustBeAPowerOfTwo() {
        for (int bad : new int[] {0, -4, 3, 12, 32768}) {
            assertThatThrownBy(() -> new TopicDefinition("t", TopicType.FIXED_TIME, bad))
                    .isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessage("Invalid slotAmount '" + bad + "': must be a power of two between 1 and 16384 (topic 't')");
        }
        assertThatThrownBy(() -> new TopicDefinition("t", null, 4)).hasMessageContaining("topic type");
    }

    @Test
    void sendParametersAreChecked() {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 4);
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        assertThatThrownBy(() -> rmq.producer().sendRangeMerge("rm", "x", Duration.ZERO))
                .hasMessage("Invalid timeRange '0ms': must be greater than 0 ms (topic 'rm')");
        assertThatThrownBy(() -> rmq.producer().sendRangeMerge("rm", "x", Duration.ofMillis(-5)))
                .hasMessageContaining("timeRange '-5ms'");
        assertThatThrownBy(() -> rmq.producer().sendFixedTime("ft", "x", null))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("fixedTime 'null'");
        assertThatThrownBy(() -> rmq.producer().sendPriority("rm", "x", 1))
                .hasMessageContaining("Invalid type 'PRIORITY'").hasMessageContaining("topic 'rm' type=RANGE_MERGE");
        assertThatThrownBy(() -> rmq.producer().sendPriority("nope", "x", 1))
                .hasMessageContaining("Invalid topic 'nope': is not defined here nor registered in Redis");
        assertThatThrownBy(() -> rmq.producer().sendPriority("bad:name", "x", 1)).hasMessageContaining("topic name");
        assertThatThrownBy(() -> rmq.producer().sendRangeMerge("rm", null, Duration.ofSeconds(1)))
                .hasMessageContaining("Invalid body 'null'");
        assertThatThrownBy(() -> OutgoingMessage.priority("rm", "x", 1L << 60)).hasMessageContaining("priority");
        assertThatThrownBy(() -> OutgoingMessage.priority("rm", "x", 1).withGroup(""))
                .hasMessage("Invalid group '': must be null or non-empty (topic 'rm')");
    }

    @Test
    void farTimesAndLongRangesFailNamingTheFieldValueAndRule() {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 4);
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        assertThatThrownBy(() -> rmq.producer().sendFixedTime("ft", "x", Instant.MAX))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid fixedTime '" + Instant.MAX + "': must be within ±2^53 ms of the epoch (topic 'ft')");
        assertThatThrownBy(() -> rmq.producer().sendFixedTime("ft", "x", Instant.MIN))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("Invalid fixedTime '" + Instant.MIN);
        assertThatThrownBy(() -> rmq.producer().sendRangeMerge("rm", "x", Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid timeRange '" + Duration.ofSeconds(Long.MAX_VALUE) + "': must be at most 2^52 ms"
                        + " (about 142,000 years), so that its due time is a score Redis holds exactly (topic 'rm')");
        // no overflow, but a due time beyond what a score holds exactly (the other types refuse beyond ±2^53)
        assertThatThrownBy(() -> rmq.producer().sendRangeMerge("rm", "x", Duration.ofMillis(1L << 60)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("must be at most 2^52 ms");
        assertThatThrownBy(() -> rmq.producer().send(new OutgoingMessage("rm", "x", TopicType.RANGE_MERGE, 1L << 60,
                null))).isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageStartingWith("Invalid timeRange '" + (1L << 60) + "ms': must be at most 2^52 ms");
        assertThat(rmq.admin().stats("rm").waiting()).as("nothing was written").isZero();
        // the longest range and the farthest time still go
        assertThat(rmq.producer().sendRangeMerge("rm", "far", Duration.ofMillis(1L << 52)).merged()).isFalse();
        assertThat(rmq.producer().sendFixedTime("ft", "far", Instant.ofEpochMilli(1L << 53)).merged()).isFalse();
    }

    @Test
    void bodyOverTheSizeLimitIsRejected() {
        try (Rmq small = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix).withMaxBodyBytes(100))) {
            small.defineTopic("rm", TopicType.RANGE_MERGE, 4);
            assertThat(small.producer().sendRangeMerge("rm", "x".repeat(100), Duration.ofSeconds(1)).merged()).isFalse();
            assertThatThrownBy(() -> small.producer().sendRangeMerge("rm", "x".repeat(101), Duration.ofSeconds(1)))
                    .isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessage("Invalid body '101 bytes': must be at most 100 bytes after serialization"
                            + " (rmq.max-body-size; topic 'rm')");
            // a batch is validated whole before anything is written
            assertThatThrownBy(() -> small.producer().sendBatch(List.of(
                    OutgoingMessage.rangeMerge("rm", "ok", Duration.ofSeconds(1)),
                    OutgoingMessage.rangeMerge("rm", "y".repeat(500), Duration.ofSeconds(1)))))
                    .hasMessageContaining("500 bytes");
            assertThat(small.admin().stats("rm").waiting()).isEqualTo(1);
        }
    }

    @Test
    void conflictingTopicDefinitionsFailNamingBoth() {
        rmq.defineTopic("orders", TopicType.FIXED_TIME, 16);
        assertThat(rmq.defineTopic("orders", TopicType.FIXED_TIME, 16).slotAmount()).isEqualTo(16);
        assertThatThrownBy(() -> rmq.defineTopic("orders", TopicType.PRIORITY, 16))
                .isInstanceOf(TopicConflictException.class)
                .hasMessageContaining("topic 'orders' type=FIXED_TIME slotAmount=16")
                .hasMessageContaining("topic 'orders' type=PRIORITY slotAmount=16");
        // Another process with a different definition: caught through the registry in Redis.
        try (Rmq otherProcess = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
            assertThatThrownBy(() -> otherProcess.defineTopic("orders", TopicType.FIXED_TIME, 8))
                    .isInstanceOf(TopicConflictException.class)
                    .hasMessageContaining("slotAmount=16 (registered in Redis)")
                    .hasMessageContaining("slotAmount=8 (requested)");
            assertThat(otherProcess.defineTopic("orders", TopicType.FIXED_TIME, 16)).isNotNull();
        }
    }

    @Test
    void consumerAndRetrySettingsAreChecked() {
        assertThatThrownBy(() -> new ConsumerSettings(0, Duration.ofSeconds(1), RetryPolicy.DEFAULT))
                .hasMessageContaining("batchSize '0'");
        assertThatThrownBy(() -> new ConsumerSettings(1, Duration.ofMillis(10), RetryPolicy.DEFAULT))
                .hasMessageContaining("lease 'PT0.01S'");
        assertThatThrownBy(() -> new RetryPolicy(-1, BackoffPolicy.DEFAULT)).hasMessageContaining("maxRetries '-1'");
        assertThatThrownBy(() -> BackoffPolicy.exponential(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(5), 0))
                .hasMessageContaining("backoff multiplier '0.5'");
        assertThatThrownBy(() -> BackoffPolicy.exponential(Duration.ofSeconds(10), 2, Duration.ofSeconds(5), 0))
                .hasMessageContaining("backoff max 'PT5S'");
        assertThatThrownBy(() -> BackoffPolicy.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(5), 2))
                .hasMessageContaining("backoff jitter '2.0'");
    }
}
