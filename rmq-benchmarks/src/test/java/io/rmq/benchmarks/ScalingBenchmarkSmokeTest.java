package io.rmq.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.SlotHash;
import io.rmq.benchmarks.ScalingWorkloads.Topology;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Small runs of {@code --workload scaling} (every consumer JVM its own process, as in a real run): W1B and W1C on
 * standalone and on a 3-master cluster, and on a 6-master cluster with a topic of another slot count, with 2 consumer
 * JVMs (one JVM is the same path with one process) handle every message between them, and each figure has its Redis
 * CPU (per master too) and machine load. Real figures come from {@code rmq-benchmarks/run --workload scaling}.
 */
@ExtendWith(RedisServersExtension.class)
class ScalingBenchmarkSmokeTest {

    @Test
    void bothTopologiesWithTwoConsumerJvmsHandleEveryMessage(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("scaling.md");
        Map<String, String> options = new HashMap<>(Map.of("workload", "scaling", "runs", "1", "w1", "2000",
                "warmup-seconds", "0", "cap-seconds", "60", "topology", "standalone,cluster", "consumer-jvms", "2",
                "out", out.toString()));
        ScalingWorkloads scaling = new ScalingWorkloads(new BenchmarkMain(options));
        String table = scaling.run();
        assertThat(Files.readString(out)).isEqualTo(table);

        assertEveryFigureHandledEveryMessage(scaling, List.of(Topology.STANDALONE, Topology.cluster(3)), 2000);
        assertThat(table).contains("## RMQ on standalone Redis and on a Redis Cluster of 3 masters")
                .contains("| W1B consume | 2 | cluster | 3 | ").doesNotContain("Notes:");
        assertThat(scaling.spreads.get(Topology.STANDALONE).perMaster()).containsExactly(16);
        assertSpreadAsFormed(scaling.spreads.get(Topology.cluster(3)), 3);
    }

    @Test
    void sixMastersWithAnotherSlotCountHandleEveryMessage(@TempDir Path dir) throws Exception {
        Map<String, String> options = new HashMap<>(Map.of("workload", "scaling", "runs", "1", "w1", "600",
                "warmup-seconds", "0", "cap-seconds", "60", "topology", "cluster", "masters", "6", "slots", "8",
                "consumer-jvms", "2", "out", dir.resolve("scaling.md").toString()));
        ScalingWorkloads scaling = new ScalingWorkloads(new BenchmarkMain(options));
        String table = scaling.run();

        assertEveryFigureHandledEveryMessage(scaling, List.of(Topology.cluster(6)), 600);
        SlotSpread spread = scaling.spreads.get(Topology.cluster(6));
        assertSpreadAsFormed(spread, 6);
        assertThat(table).contains("a Redis Cluster of 6 masters").contains("8-slot RANGE_MERGE topic")
                .contains("6 masters " + spread.describe())
                .contains("| W1C produce + consume | 2 | cluster | 6 | " + spread.counts() + " of 8 |")
                .doesNotContain("standalone").doesNotContain("Notes:");
    }

    /**
     * With a warm-up, each consumer JVM warms up on a backlog of a topic of its own (the measured listener class), and
     * leaves none of its messages or definitions behind: the measured figure still handles every message.
     */
    @Test
    void theWarmUpOfEachConsumerJvmUsesATopicOfItsOwnAndLeavesNoMessageOrDefinitionBehind(@TempDir Path dir) throws Exception {
        Map<String, String> options = new HashMap<>(Map.of("workload", "scaling", "runs", "1", "w1", "2000",
                "warmup-seconds", "1", "jit-quiet-seconds", "1", "cap-seconds", "60", "topology", "standalone",
                "consumer-jvms", "2", "out", dir.resolve("scaling.md").toString()));
        ScalingWorkloads scaling = new ScalingWorkloads(new BenchmarkMain(options));
        String table = scaling.run();

        assertEveryFigureHandledEveryMessage(scaling, List.of(Topology.STANDALONE), 2000);
        assertThat(table).contains("after a 1 s warm-up").contains("of which JIT µs/msg");
        RedisEndpoint redis = TestRedisServers.standalone();
        RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        try (var connection = client.connect()) {
            // the engine's history of what the warm-up handled (a small hash that expires, flushed every 10 s) stays
            assertThat(connection.sync().keys("*warmup*")).as("warm-up keys left")
                    .allMatch(key -> key.startsWith("rmq:{rmq-history}:"));
            assertThat(connection.sync().hkeys("rmq:topics")).as("topics defined")
                    .noneMatch(topic -> topic.contains("warmup")).contains(RmqPeer.QUEUE);
        }
        finally {
            client.shutdown();
        }
    }

    /**
     * Each consumer JVM's warm-up topic is its own, and its clean-up pattern (Redis's KEYS, on a real server) names its
     * keys and no other's.
     */
    @Test
    void aWarmUpTopicAndItsKeyPatternAreThisProcesssOwn() {
        String topic = RmqPeer.sharedWarmUpTopic(12, 35);
        assertThat(topic).isEqualTo("bench-12-z-warmup").isNotEqualTo(RmqPeer.sharedWarmUpTopic(12, 36))
                .isNotEqualTo(RmqPeer.sharedWarmUpTopic(123, 35));
        List<String> ours = List.of("kp:{bench-12-z-warmup:0}", "kp:{bench-12-z-warmup:15}:prepare",
                "kp:{bench-12-z-warmup}:consumers");
        List<String> others = List.of("kp:{bench-12-z-warmup2:0}", "kp:{bench-12-zz-warmup:0}", "kp:{bench:0}",
                "kp:{bench-123-z-warmup:0}", "other:{bench-12-z-warmup:0}", "kp:{bench-warmup:0}");
        RedisEndpoint redis = TestRedisServers.standalone();
        RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
        try (var connection = client.connect()) {
            var commands = connection.sync();
            for (String key : ours) {
                commands.set(key, "1");
            }
            for (String key : others) {
                commands.set(key, "1");
            }
            try {
                assertThat(commands.keys(RmqPeer.sharedWarmUpKeys("kp", topic))).containsExactlyInAnyOrderElementsOf(ours);
            }
            finally {
                commands.del(ours.toArray(String[]::new));
                commands.del(others.toArray(String[]::new));
            }
        }
        finally {
            client.shutdown();
        }
    }

    @Test
    void eachMasterCountIsATopologyOfItsOwnStandaloneStaysSelectableAndSlotsArePowersOfTwo() {
        assertThat(ScalingWorkloads.topologies(Map.of())).containsExactly(Topology.STANDALONE, Topology.cluster(3));
        assertThat(ScalingWorkloads.topologies(Map.of("masters", "3,6")))
                .containsExactly(Topology.STANDALONE, Topology.cluster(3), Topology.cluster(6));
        assertThat(ScalingWorkloads.topologies(Map.of("topology", "cluster", "masters", "6,3,6")))
                .containsExactly(Topology.cluster(6), Topology.cluster(3));
        assertThatThrownBy(() -> ScalingWorkloads.topologies(Map.of("topology", "standalone", "masters", "6")))
                .hasMessageContaining("add cluster to --topology");
        assertThatThrownBy(() -> ScalingWorkloads.topologies(Map.of("masters", "0")))
                .hasMessageContaining("at least 1");
        assertThatThrownBy(() -> new ScalingWorkloads(new BenchmarkMain(Map.of("slots", "12"))))
                .hasMessageContaining("power of two");
    }

    private static void assertEveryFigureHandledEveryMessage(ScalingWorkloads scaling, List<Topology> topologies,
            int messages) {
        assertThat(scaling.samples).hasSize(2 * topologies.size());
        for (Topology topology : topologies) {
            for (String workload : List.of(ScalingWorkloads.W1B, ScalingWorkloads.W1C)) {
                ScalingWorkloads.Sample sample = scaling.samples
                        .get(new ScalingWorkloads.Figure(workload, 2, topology)).get(0);
                String figure = workload + ", " + topology.label() + ", 2 JVMs";
                assertThat(sample.count()).as(figure).isGreaterThanOrEqualTo(messages);
                assertThat(sample.rate()).as(figure).isPositive();
                assertThat(sample.redisMicrosPerMessage()).as(figure).isPositive();
                assertThat(sample.masterCores()).as(figure).hasSize(topology.masters());
                assertThat(sample.clientMicrosPerMessage()).as(figure).isGreaterThanOrEqualTo(0);
                assertThat(sample.jitMicrosPerMessage()).as(figure + ": JIT compiler threads' CPU after GO").isNotNaN()
                        .isGreaterThanOrEqualTo(0);
            }
        }
    }

    /** The spread read from the running cluster equals CRC16 of each slot's hash tag over the split it was formed with. */
    private static void assertSpreadAsFormed(SlotSpread spread, int masters) {
        int[] expected = new int[masters];
        for (int i = 0; i < spread.slots(); i++) {
            int hashSlot = SlotHash.getSlot("{" + RmqPeer.QUEUE + ":" + i + "}");
            for (int m = 0; m < masters; m++) {
                // redis-cli's split, as PrivateCluster forms it: master m serves [round(m * 16384 / n), next first)
                if (hashSlot >= Math.round(m * 16384.0 / masters) && hashSlot < Math.round((m + 1) * 16384.0 / masters)) {
                    expected[m]++;
                }
            }
        }
        assertThat(spread.perMaster()).as("slots per master").containsExactly(expected);
        assertThat(Arrays.stream(spread.perMaster()).sum()).isEqualTo(spread.slots());
    }
}
