package io.rmq.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.rmq.producer.SendResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deduplication windows (issue 47) across consumer JVMs that are killed and restarted, and (cluster) a failover: the
 * window of every handled message lives in Redis, so a send of its identity after the restart (or after the master of
 * its slot died and its replica took over) is dropped, whichever consumer handled it. A message whose consumer died
 * before acking it is handled again, and only that handling starts its window: nothing is lost to a window.
 */
class DedupeWindowFaultScenariosTest extends FaultSuite {

    private static final Duration WINDOW = Duration.ofMinutes(10);
    private static final int MESSAGES = 600;

    @TempDir
    static Path work;

    private static Map<String, String> consumer(String key, String value) {
        return new HashMap<>(Map.of(key, value, "concurrency", "4", "batch", "16", "lease-ms", "1000",
                "command-timeout-ms", "1000", "max-idle-ms", "2000", "handle-ms", "10"));
    }

    @Test
    void windowsOutliveAConsumerKilledMidRunAndItsRestart() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false);
                FaultRun run = new FaultRun("dedupe windows, consumers killed and restarted", work, sender(redis))) {
            Map<String, String> options = consumer("redis", redis.hostPort());
            scenario(run, options, () -> { });
        }
    }

    @Test
    void windowsOutliveAKilledClusterMaster() throws Exception {
        try (FaultScenariosTest.ClusterOfSix cluster = FaultScenariosTest.ClusterOfSix.start(work);
                FaultRun run = new FaultRun("dedupe windows, 3+3 cluster, a master killed", work,
                        sender(cluster.seeds()))) {
            Map<String, String> options = consumer("cluster", cluster.seedList());
            scenario(run, options, () -> {
                // every window the dead master held is on its replica, which takes over
                cluster.awaitReplicaInSync(0);
                cluster.masters.get(0).kill();
            });
        }
    }

    interface Fault {
        void apply() throws Exception;
    }

    private static void scenario(FaultRun run, Map<String, String> options, Fault betweenRounds) throws Exception {
        ConsumerProcess first = run.consumer("c0", options);
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            bodies.add("w-" + i);
        }
        // round 1: every body once; the consumer is killed halfway, with messages in its hands, and replaced
        for (int i = 0; i < MESSAGES; i++) {
            assertThat(run.sendWithWindow(bodies.get(i), WINDOW).deduplicated()).isFalse();
            if (i == MESSAGES / 2) {
                first.kill();
                run.consumer("c1", options);
            }
        }
        FaultRun.Records records = run.awaitAllHandled(Duration.ofSeconds(120));
        assertThat(run.lost(records)).as("round 1: accepted messages never handled").isZero();
        assertThat(run.leftInRedis()).isZero();
        int handledBefore = records.lines();

        // the consumer restarts (kill -9, a new JVM); the fault of the topology, if any, happens meanwhile
        for (ConsumerProcess consumer : List.copyOf(run.consumers())) {
            if (consumer.isAlive()) {
                consumer.kill();
            }
        }
        betweenRounds.apply();
        run.refreshSenderTopology();

        // round 2: every body again (each send retried until its slot's master answers, after a failover), then a
        // new consumer JVM and as many new bodies: the old are dropped, the new handled
        int dropped = 0;
        for (String body : bodies) {
            SendResult result = run.sendWithWindow(body, WINDOW);
            if (result.deduplicated()) {
                dropped++;
            }
        }
        run.consumer("c2", options);
        for (int i = 0; i < MESSAGES; i++) {
            assertThat(run.sendWithWindow("n-" + i, WINDOW).deduplicated()).isFalse();
        }
        assertThat(dropped).as("sends of handled bodies within their windows, after the restart").isEqualTo(MESSAGES);
        records = run.awaitAllHandled(Duration.ofSeconds(120));
        assertThat(run.lost(records)).as("round 2: accepted messages never handled").isZero();
        assertThat(run.leftInRedis()).isZero();
        long newHandled = records.counts().keySet().stream().filter(id -> id.startsWith("n-")).count();
        assertThat(newHandled).isEqualTo(MESSAGES);
        Set<String> oldIds = Set.copyOf(bodies);
        int oldHandlings = records.counts().entrySet().stream().filter(e -> oldIds.contains(e.getKey()))
                .mapToInt(Map.Entry::getValue).sum();
        assertThat(oldHandlings).as("no body of round 1 was handled again after its window started")
                .isEqualTo(handledBefore);
        run.report(records, "kill -9 mid-run, restart" + (run.name.contains("cluster") ? ", master kill -9" : "")
                + "; " + dropped + " of " + MESSAGES + " re-sends dropped", -1);
    }
}
