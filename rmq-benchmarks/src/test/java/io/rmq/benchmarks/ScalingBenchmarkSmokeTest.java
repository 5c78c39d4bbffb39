package io.rmq.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.rmq.test.RedisServersExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A small run of {@code --workload scaling} (every consumer JVM its own process, as in a real run): W1B and W1C on
 * standalone and on the 3-master cluster with 2 consumer JVMs (one JVM is the same path with one process) handle
 * every message between them, and each figure has its Redis CPU and machine load. Real figures come from {@code rmq-benchmarks/run --workload scaling}.
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

        assertThat(scaling.samples).hasSize(4);
        for (String topology : List.of("standalone", "cluster")) {
            for (int jvms : List.of(2)) {
                for (String workload : List.of(ScalingWorkloads.W1B, ScalingWorkloads.W1C)) {
                    ScalingWorkloads.Sample sample = scaling.samples
                            .get(new ScalingWorkloads.Figure(workload, jvms, topology)).get(0);
                    String figure = workload + ", " + topology + ", " + jvms + " JVM(s)";
                    assertThat(sample.count()).as(figure).isGreaterThanOrEqualTo(2000);
                    assertThat(sample.rate()).as(figure).isPositive();
                    assertThat(sample.redisMicrosPerMessage()).as(figure).isPositive();
                    assertThat(sample.clientMicrosPerMessage()).as(figure).isGreaterThanOrEqualTo(0);
                }
            }
        }
        assertThat(table).contains("| W1B consume | 2 | cluster |").doesNotContain("Notes:");
    }
}
