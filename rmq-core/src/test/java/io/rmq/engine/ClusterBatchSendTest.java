package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.core.TopicType;
import io.rmq.core.internal.SlotRouter;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.PrivateCluster;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A batch send on a cluster writes its slots' parts to their masters together (SendWrites#sendBatch): what it stores,
 * where, and what it reports, also for a part whose hash slot moved to another master after the client last read the
 * topology (the master answers MOVED and the part is written where the slot went). Runs on a cluster of its own
 * ({@link PrivateCluster}): it moves a hash slot.
 */
class ClusterBatchSendTest {

    private static final String PREFIX = "cbatch";
    private static final int SLOTS = 16;

    @Test
    void aBatchOverEveryMasterIsStoredWhereItsSlotsLiveAndAPartWhoseSlotMovedFollowsIt() throws Exception {
        try (PrivateCluster cluster = PrivateCluster.start(3, 0, Duration.ofSeconds(60))) {
            RedisClusterClient client = cluster.newClient();
            RedisClient nodes = RedisClient.create(TestRedisServers.resources());
            List<StatefulRedisConnection<String, String>> masters = new ArrayList<>();
            try (Rmq rmq = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(PREFIX))) {
                for (int i = 0; i < 3; i++) {
                    masters.add(nodes.connect(RedisURI.create("127.0.0.1", cluster.masterPort(i))));
                }
                rmq.defineTopic("spread", TopicType.RANGE_MERGE, SLOTS);
                rmq.defineTopic("moved", TopicType.RANGE_MERGE, SLOTS);

                // 1,000 bodies over the 16 slots, and 200 of them twice in the same batch
                List<OutgoingMessage> batch = new ArrayList<>();
                for (int i = 0; i < 1_200; i++) {
                    batch.add(OutgoingMessage.rangeMerge("spread", "m-" + (i % 1_000), Duration.ofMinutes(5)));
                }
                BatchResult spread = rmq.producer().sendBatch(batch);
                assertThat(spread.sent()).isEqualTo(1_200);
                assertThat(spread.added()).isEqualTo(1_000);
                int[] perSlot = perSlot("m-", 1_000);
                boolean[] mastersUsed = new boolean[3];
                for (int slot = 0; slot < SLOTS; slot++) {
                    String store = store("spread", slot);
                    int master = cluster.masterOf(SlotHash.getSlot(store));
                    mastersUsed[master] = true;
                    assertThat(masters.get(master).sync().zcard(store)).as("slot %d on master %d", slot, master)
                            .isEqualTo(perSlot[slot]);
                }
                assertThat(mastersUsed).as("the topic spans every master").containsOnly(true);
                assertThat(rmq.producer().sendBatch(batch).added()).as("the same batch again merges").isZero();

                // hash slot of "moved" slot 0 (no key in it yet) handed to another master behind the client's back
                String movedStore = store("moved", 0);
                int hashSlot = SlotHash.getSlot(movedStore);
                int from = cluster.masterOf(hashSlot);
                int to = (from + 1) % 3;
                String target = cluster.masterNodeId(to);
                for (int i : new int[] {to, from, (from + 2) % 3}) {
                    assertThat(masters.get(i).sync().clusterSetSlotNode(hashSlot, target)).isEqualTo("OK");
                }
                long movedBefore = movedReplies(masters.get(from).sync());
                List<OutgoingMessage> second = new ArrayList<>();
                for (int i = 0; i < 320; i++) {
                    second.add(OutgoingMessage.rangeMerge("moved", "n-" + i, Duration.ofMinutes(5)));
                }
                BatchResult moved = rmq.producer().sendBatch(second);
                assertThat(moved.added()).isEqualTo(320);
                int expected = perSlot("n-", 320)[0];
                assertThat(expected).as("bodies of the moved slot").isPositive();
                assertThat(masters.get(to).sync().zcard(movedStore)).as("on the master the slot went to")
                        .isEqualTo(expected);
                assertThat(masters.get(from).sync().clusterCountKeysInSlot(hashSlot)).as("left on the old master")
                        .isZero();
                assertThat(movedReplies(masters.get(from).sync())).as("the old master answered MOVED")
                        .isGreaterThan(movedBefore);
                assertThat(rmq.admin().stats("moved").waiting()).isEqualTo(320);
            }
            finally {
                masters.forEach(StatefulRedisConnection::close);
                nodes.shutdown();
                client.shutdown();
            }
        }
    }

    private static String store(String topic, int slot) {
        return PREFIX + ":{" + topic + ":" + slot + "}:store";
    }

    /** How many of the bodies {@code <prefix>0 .. <prefix>(n-1)} route to each slot. */
    private static int[] perSlot(String prefix, int n) {
        int[] counts = new int[SLOTS];
        for (int i = 0; i < n; i++) {
            counts[SlotRouter.slot((prefix + i).getBytes(StandardCharsets.UTF_8), SLOTS)]++;
        }
        return counts;
    }

    /** {@code errorstat_MOVED:count=N} of INFO errorstats (0 before the first). */
    private static long movedReplies(RedisCommands<String, String> master) {
        for (String line : master.info("errorstats").split("\\r?\\n")) {
            if (line.startsWith("errorstat_MOVED:count=")) {
                return Long.parseLong(line.substring("errorstat_MOVED:count=".length()).trim());
            }
        }
        return 0;
    }
}
