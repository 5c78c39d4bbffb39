package io.rmq.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.rmq.core.RmqRedisFullException;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis that reaches its {@code maxmemory} (policy noeviction) while nothing consumes: the sender fills it until
 * Redis refuses a batch ({@code RmqRedisFullException}; what that batch's other writes stored counts as accepted),
 * then a consumer in a JVM of its own starts and drains everything over maxmemory, then sends succeed again. Asserted
 * from the consumer's own records: nothing accepted is lost, nothing is handled twice, and nothing the exception said
 * was not stored is ever handled. On a 3-master cluster only one master is full: the other masters' slots keep taking
 * sends meanwhile. The limit is the node's used memory at the start plus a few MB, set with CONFIG SET, and lowered
 * below its used memory once a batch was refused (see {@link #keepFull}).
 */
class RedisFullScenariosTest extends FaultSuite {

    private static final boolean LONG = FaultScenariosTest.LENGTH.equals("long");
    /** Room above the node's used memory at the start: ~8,000 short messages (long: ~40,000). */
    private static final long ROOM = (LONG ? 8 : 2) * 1024 * 1024;
    private static final Map<String, String> CONSUMER = Map.of("concurrency", "8", "batch", "64", "lease-ms", "10000",
            "command-timeout-ms", "2000", "max-idle-ms", "2000");

    @TempDir
    static Path work;

    @Test
    void aFullRedisIsDrainedByAConsumerInAnotherJvmAndTakesSendsAgainAfterwards() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false);
                FaultRun run = new FaultRun("Redis full (maxmemory, noeviction), then drained", work,
                        sender(redis))) {
            RedisClient admin = RedisClient.create(redis.uri());
            try (var connection = admin.connect()) {
                RedisCommands<String, String> node = connection.sync();
                limit(node);
                RmqRedisFullException full = run.fillUntilFull(500, 2_000_000);
                int stored = run.acceptedCount();
                keepFull(node);
                assertThat(full.getMessage()).contains("Redis is full", "maxmemory-policy noeviction");
                assertThat(run.trySend("refused")).as("a send while full").isFalse();

                Map<String, String> options = new HashMap<>(CONSUMER);
                options.put("redis", redis.hostPort());
                long started = System.currentTimeMillis();
                run.consumer("c0", options);
                FaultRun.Records drained = run.awaitAllHandled(Duration.ofSeconds(LONG ? 180 : 60));
                long drainMillis = System.currentTimeMillis() - started;
                assertClean(run, drained);

                List<String> after = bodies("after-", 100);
                run.sendNow(after); // throws unless every one was stored
                FaultRun.Records records = run.awaitAllHandled(Duration.ofSeconds(60));
                assertClean(run, records);
                run.report(records, "filled to maxmemory (" + stored + " stored), drained by 1 consumer JVM",
                        drainMillis);
                run.note("Redis full, standalone: " + stored + " messages stored before Redis refused a batch ("
                        + full.usedMemory() + " of " + full.maxMemory() + "); drained in " + drainMillis
                        + " ms from the consumer JVM's start (JVM start-up included); duplicates "
                        + (records.lines() - records.counts().size()) + "; 100 sends after the drain all stored");
            }
            finally {
                RedisNode.shutdown(admin);
            }
        }
    }

    @Test
    void oneFullMasterOfAClusterIsDrainedWhileTheOtherMastersKeepTakingSends() throws Exception {
        List<RedisEndpoint> nodes = TestRedisServers.clusterNodes();
        List<RedisURI> seeds = nodes.stream().map(n -> RedisURI.create(n.host(), n.port())).toList();
        try (FaultRun run = new FaultRun("3-master cluster, one master full, then drained", work, sender(seeds))) {
            // the master that serves the topic's slot 0 is the one that fills up
            int fullPort = portServing(run.clusterSlotOf(bodyInTopicSlotZero(run)), nodes);
            RedisClient admin = RedisClient.create(RedisURI.create(RedisNode.HOST, fullPort));
            String before = null;
            try (var connection = admin.connect()) {
                RedisCommands<String, String> node = connection.sync();
                before = node.configGet("maxmemory").get("maxmemory");
                limit(node);
                RmqRedisFullException full = run.fillUntilFull(500, 2_000_000);
                int stored = run.acceptedCount();
                keepFull(node);
                assertThat(full.node()).isEqualTo(RedisNode.HOST + ":" + fullPort);
                assertThat(full.storedIndexes()).as("the other masters stored their part of the refused batch")
                        .isNotEmpty();

                // while that master is full, sends to the others' slots are stored, sends to its slots refused
                int toOthers = 0;
                int refused = 0;
                for (int i = 0; i < 200; i++) {
                    String body = "during-" + i;
                    boolean onFull = portServing(run.clusterSlotOf(body), nodes) == fullPort;
                    boolean accepted = run.trySend(body);
                    assertThat(accepted).as("%s (on the full master: %s)", body, onFull).isEqualTo(!onFull);
                    toOthers += accepted ? 1 : 0;
                    refused += accepted ? 0 : 1;
                }

                Map<String, String> options = new HashMap<>(CONSUMER);
                options.put("cluster", String.join(",", nodes.stream().map(RedisEndpoint::hostPort).toList()));
                long started = System.currentTimeMillis();
                run.consumer("c0", options);
                FaultRun.Records drained = run.awaitAllHandled(Duration.ofSeconds(LONG ? 180 : 60));
                long drainMillis = System.currentTimeMillis() - started;
                assertClean(run, drained);

                List<String> after = bodies("after-", 100);
                run.sendNow(after);
                FaultRun.Records records = run.awaitAllHandled(Duration.ofSeconds(60));
                assertClean(run, records);
                run.report(records, "1 of 3 masters filled to maxmemory (" + stored + " stored), drained by 1"
                        + " consumer JVM", drainMillis);
                run.note("Redis full, cluster (1 of 3 masters full): " + stored + " messages stored before the full"
                        + " master refused a batch (" + full.storedIndexes().size() + " of that batch stored on the"
                        + " others); while full " + toOthers + " single sends to the other masters stored, " + refused
                        + " to the full one refused; drained in " + drainMillis + " ms from the consumer JVM's start;"
                        + " duplicates " + (records.lines() - records.counts().size()));
            }
            finally {
                if (before != null) {
                    try (var connection = admin.connect()) {
                        connection.sync().configSet("maxmemory", before);
                    }
                }
                RedisNode.shutdown(admin);
            }
        }
    }

    /** maxmemory = the node's used memory now + {@link #ROOM}, policy noeviction. */
    private static void limit(RedisCommands<String, String> node) {
        long used = Long.parseLong(RedisInfo.field(node.info("memory"), "used_memory"));
        node.configSet("maxmemory-policy", "noeviction");
        node.configSet("maxmemory", Long.toString(used + ROOM));
    }

    /**
     * Lowers maxmemory below what the node uses now, so that it stays full until consumers free memory: right at the
     * limit, Redis's own buffers (a refused command's query buffer, replies) move it across the line from one command
     * to the next, and a small send may go in after a batch was refused.
     */
    private static void keepFull(RedisCommands<String, String> node) {
        long used = Long.parseLong(RedisInfo.field(node.info("memory"), "used_memory"));
        node.configSet("maxmemory", Long.toString(used - 256 * 1024));
    }

    /** Nothing accepted lost, nothing left in Redis, nothing handled twice, nothing handled that was not accepted. */
    private static void assertClean(FaultRun run, FaultRun.Records records) {
        assertThat(run.lost(records)).as("%s: accepted messages never handled", run.name).isZero();
        assertThat(run.leftInRedis()).as("%s: messages left waiting, in flight or dead", run.name).isZero();
        assertThat(records.lines() - records.counts().size()).as("%s: duplicate deliveries", run.name).isZero();
        Set<String> notAccepted = new HashSet<>(records.counts().keySet());
        notAccepted.removeAll(run.accepted());
        assertThat(notAccepted).as("%s: handled, though the send was refused as not stored", run.name).isEmpty();
    }

    private static List<String> bodies(String prefix, int count) {
        List<String> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    /** A body the fill sends ({@code m-<i>}) that lands in the topic's slot 0. */
    private static String bodyInTopicSlotZero(FaultRun run) {
        for (int i = 0;; i++) {
            String body = "m-" + i;
            if (io.rmq.core.internal.SlotRouter.slot(body.getBytes(java.nio.charset.StandardCharsets.UTF_8), null,
                    run.slots) == 0) {
                return body;
            }
        }
    }

    /** The port of the master that serves cluster slot {@code slot}. */
    private static int portServing(int slot, List<RedisEndpoint> nodes) {
        RedisEndpoint any = nodes.get(0);
        RedisClient client = RedisClient.create(RedisURI.create(any.host(), any.port()));
        try (var connection = client.connect()) {
            for (String line : connection.sync().clusterNodes().split("\n")) {
                String[] f = line.split(" ");
                if (f.length < 9 || !f[2].contains("master")) {
                    continue;
                }
                for (int i = 8; i < f.length; i++) {
                    String[] range = f[i].split("-");
                    if (range[0].startsWith("[")) {
                        continue;
                    }
                    int from = Integer.parseInt(range[0]);
                    int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
                    if (slot >= from && slot <= to) {
                        return Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                    }
                }
            }
        }
        finally {
            RedisNode.shutdown(client);
        }
        throw new AssertionError("no master serves cluster slot " + slot);
    }

    /** One field of an INFO reply. */
    private static final class RedisInfo {

        static String field(String info, String name) {
            for (String line : info.split("\r?\n")) {
                if (line.startsWith(name + ":")) {
                    return line.substring(name.length() + 1).trim();
                }
            }
            throw new AssertionError("INFO has no " + name);
        }
    }
}
