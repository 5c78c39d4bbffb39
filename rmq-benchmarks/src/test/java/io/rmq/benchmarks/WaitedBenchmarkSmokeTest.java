package io.rmq.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.rmq.benchmarks.WaitedWorkloads.Figure;
import io.rmq.benchmarks.WaitedWorkloads.Sample;
import io.rmq.test.RedisServersExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A small run of {@code --workload waited} for RMQ alone (its peer process on standalone Redis and, with
 * {@code --cluster}, on a 3-master cluster started for the run): every figure sends every message and reports the
 * Redis CPU of all masters, the busiest apart. The Redisson side needs its peer jar (rmq-benchmarks/waited-run builds
 * it); real figures come from that script.
 */
@ExtendWith(RedisServersExtension.class)
class WaitedBenchmarkSmokeTest {

    @Test
    void rmqSendsItsWaitedBatchesOnStandaloneAndOnACluster(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("waited.md");
        Map<String, String> options = new HashMap<>(Map.of("workload", "waited", "runs", "1", "w1", "3000",
                "batch", "500", "warmup-seconds", "0", "cap-seconds", "60", "peers", "rmq", "out", out.toString()));
        WaitedWorkloads waited = new WaitedWorkloads(new BenchmarkMain(options));
        String table = waited.run();
        assertThat(Files.readString(out)).isEqualTo(table);

        for (String topology : List.of("standalone", "3-master cluster")) {
            List<Sample> samples = waited.samples.get(new Figure(topology, 500, "RMQ"));
            assertThat(samples).as(topology).hasSize(1);
            Sample sample = samples.get(0);
            assertThat(sample.rate()).as(topology).isPositive();
            assertThat(sample.redisMicros()).as(topology).isPositive();
            assertThat(sample.busiestRedisMicros()).as(topology).isPositive().isLessThanOrEqualTo(sample.redisMicros());
        }
        // on the cluster the topic's work is shared: the busiest master did less than all of them together
        Sample cluster = waited.samples.get(new Figure("3-master cluster", 500, "RMQ")).get(0);
        assertThat(cluster.busiestRedisMicros()).isLessThan(cluster.redisMicros());
        assertThat(table).contains("| standalone | 500 |").contains("| 3-master cluster | 500 |")
                .contains("RMQ's topic 16 slots");
    }
}
