package io.rmq.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.rmq.test.RedisServersExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A small run of the benchmark command for RMQ alone (every workload in its own process, as in a real run), so
 * {@code ./mvnw verify} proves the harness works; real figures come from {@code rmq-benchmarks/run}.
 */
@ExtendWith(RedisServersExtension.class)
class BenchmarkSmokeTest {

    @Test
    void everyWorkloadRunsForRmqAndTheTableIsWritten(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("results.md");
        Map<String, String> options = new java.util.HashMap<>(Map.of("runs", "1", "peers", "rmq", "w1", "3000",
                "w2", "5000", "w3", "300", "delay-seconds", "2", "idle-seconds", "2", "cap-seconds", "60"));
        options.put("warmup-seconds", "1");
        options.put("out", out.toString());
        String table = new BenchmarkMain(options).runAll();
        assertThat(Files.readString(out)).isEqualTo(table);
        for (BenchmarkMain.Metric metric : BenchmarkMain.Metric.values()) {
            String row = table.lines().filter(l -> l.startsWith("| " + metric.label + " |")).findFirst().orElseThrow();
            assertThat(row).as(metric.label).doesNotContain("n/a");
        }
        assertThat(table).doesNotContain("Notes:");
    }

    @Test
    void mediansRangesAndParsing() {
        assertThat(BenchmarkMain.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(BenchmarkMain.median(List.of(4.0, 1.0))).isEqualTo(2.5);
        assertThat(BenchmarkMain.cell(List.of(1500.0, 1700.0))).isEqualTo("1,600 (1,500–1,700)");
        assertThat(BenchmarkMain.parse("{\"rate\":123.5,\"count\":10}")).containsEntry("rate", "123.5")
                .containsEntry("count", "10");
        assertThat(BenchmarkMain.number(null, "rate")).isNaN();
        // user nice system idle iowait irq softirq steal: 50 busy + 30 idle/iowait + 20 steal ticks of 100
        long[] before = {0, 0, 0, 0, 0, 0, 0, 0};
        long[] after = {30, 5, 10, 20, 10, 3, 2, 20};
        assertThat(BenchmarkMain.busyCores(before, after))
                .isCloseTo(0.5 * Runtime.getRuntime().availableProcessors(), org.assertj.core.data.Offset.offset(1e-9));
        assertThat(BenchmarkMain.busyCores(null, after)).isNaN();
    }
}
