package io.rmq.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An application with an ORDERLY listener that shuts down while it handles: no owner key stays behind (they kept
 * the sample's topic refusing CONCURRENT consumers), and the next start goes on where it stopped, in order.
 */
@ExtendWith(RedisServersExtension.class)
class OrderlyShutdownTest {

    static final int ACCOUNTS = 16;
    static final int PER_ACCOUNT = 25;
    /** Sequence numbers handled per account, across both application runs. */
    static final Map<String, List<Integer>> applied = new ConcurrentHashMap<>();

    static class Ledger {
        @RmqListener(topic = "ledger", type = "FIXED_TIME", slotAmount = "8", mode = "ORDERLY", concurrency = "2")
        void apply(String entry) throws InterruptedException {
            Thread.sleep(5);
            String[] parts = entry.split(":");
            applied.computeIfAbsent(parts[0], a -> new java.util.concurrent.CopyOnWriteArrayList<>())
                    .add(Integer.parseInt(parts[1]));
        }
    }

    @Test
    void aStoppedOrderlyApplicationLeavesNoOwnerKeyAndTheNextGoesOnInOrder() {
        String prefix = "os-" + UUID.randomUUID().toString().substring(0, 8);
        ApplicationContextRunner app = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                .withPropertyValues(RedisTopology.STANDALONE.propertyValues(prefix)).withBean(Ledger.class);
        app.run(first -> {
            List<OutgoingMessage> entries = new ArrayList<>();
            Instant base = Instant.now().minusSeconds(60);
            for (int seq = 0; seq < PER_ACCOUNT; seq++) {
                for (int a = 0; a < ACCOUNTS; a++) {
                    entries.add(OutgoingMessage.fixedTime("ledger", "acct-" + a + ":" + seq, base.plusMillis(seq))
                            .withSlotBasis("acct-" + a));
                }
            }
            first.getBean(RmqTemplate.class).sendBatch(entries);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> applied.values().stream().mapToInt(List::size).sum() >= 40);
        });
        assertThat(applied.values().stream().mapToInt(List::size).sum()).as("closed while entries were waiting")
                .isLessThan(ACCOUNTS * PER_ACCOUNT);
        RedisClient client = (RedisClient) RedisTopology.STANDALONE.newClient();
        try (StatefulRedisConnection<String, String> redis = client.connect()) {
            assertThat(redis.sync().keys(prefix + ":*:owner")).as("owner keys after a graceful shutdown").isEmpty();
            assertThat(redis.sync().hget(prefix + ":topics", "ledger")).isEqualTo("FIXED_TIME:8:ORDERLY");
        }
        finally {
            client.shutdown();
        }

        app.run(second -> await().atMost(Duration.ofSeconds(60))
                .until(() -> applied.values().stream().mapToInt(List::size).sum() >= ACCOUNTS * PER_ACCOUNT));
        assertThat(applied).hasSize(ACCOUNTS);
        applied.forEach((account, seqs) -> assertThat(seqs).as(account).isSorted().doesNotHaveDuplicates()
                .hasSize(PER_ACCOUNT));
    }
}
