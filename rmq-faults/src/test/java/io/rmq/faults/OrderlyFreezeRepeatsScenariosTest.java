package io.rmq.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ORDERLY owners frozen (SIGSTOP) past their ZooKeeper session or their Redis ownership while they work through a
 * backlog of many groups, in separate JVMs: what is handled twice is at most what the frozen owner had in hand — the
 * handlers the freeze caught and the acknowledgements on their way to Redis, {@code concurrency × 2} — never the
 * acknowledgements of the last second of work (issue 43 item 5: before the fix an owner kept a slot's acks in memory
 * until its next step that took, and a freeze dropped up to a batch per slot). Per group, order and exclusivity hold
 * (only a handling the freeze caught mid-way may overlap) and nothing is lost. The records are the consumers' own
 * ({@link ConsumerMain}).
 */
class OrderlyFreezeRepeatsScenariosTest extends FaultSuite {

    private static final boolean LONG = FaultScenariosTest.LENGTH.equals("long");
    private static final int SLOTS = 16;
    private static final int GROUPS = 200;
    private static final int CONCURRENCY = 4;
    private static final long FREEZE_MILLIS = 3300;

    @TempDir
    static Path work;

    /** Three consumers of concurrency 4 with the default batch (64), handlers of 20 ms, on a backlog. */
    private static Map<String, String> owner(RedisNode redis, long ownershipMillis) {
        Map<String, String> options = new HashMap<>(Map.of("redis", redis.hostPort(), "concurrency",
                Integer.toString(CONCURRENCY), "batch", "64", "command-timeout-ms", "1000", "max-idle-ms", "2000",
                "handle-ms", "20"));
        options.put("ownership-ms", Long.toString(ownershipMillis));
        return options;
    }

    @Test
    void anOwnerFrozenPastItsZooKeeperSessionHandlesAgainAtMostWhatItHadInHand() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false); TestingServer zookeeper = new TestingServer(true)) {
            Map<String, String> options = owner(redis, 5000);
            options.put("zookeeper", zookeeper.getConnectString());
            options.put("session-ms", "2000");
            freezeOneOwner(redis, "ORDERLY with ZooKeeper (session 2 s, ownership 5 s), " + SLOTS + " slots × "
                    + GROUPS + " groups, backlog, owner frozen 3.3 s", options);
        }
    }

    @Test
    void anOwnerFrozenPastItsRedisOwnershipHandlesAgainAtMostWhatItHadInHand() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false)) {
            freezeOneOwner(redis, "ORDERLY with the Redis coordinator (ownership 2 s), " + SLOTS + " slots × " + GROUPS
                    + " groups, backlog, owner frozen 3.3 s", owner(redis, 2000));
        }
    }

    private void freezeOneOwner(RedisNode redis, String name, Map<String, String> options) throws Exception {
        // three consumers of 4 × 20 ms handle at most 600 messages/s, two of them 400/s: by the thaw (8.3 s in) at
        // most ~4,300 are handled, so the backlog lasts well past the freeze (3 s and more after the thaw)
        int messages = LONG ? 20_000 : 6_000;
        try (FaultRun run = new FaultRun(name, work, sender(redis), SLOTS, GROUPS)) {
            List<ConsumerProcess> consumers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                consumers.add(run.consumer("f" + i, options));
            }
            long sendingFrom = System.currentTimeMillis();
            run.send(messages, 4000);
            // mid-run, with every consumer busy on its share of the backlog
            Thread.sleep(Math.max(0, sendingFrom + 5000 - System.currentTimeMillis()));
            ConsumerProcess frozen = consumers.get(0);
            long frozenAt = System.currentTimeMillis();
            frozen.freeze();
            Thread.sleep(FREEZE_MILLIS);
            long thawedAt = System.currentTimeMillis();
            frozen.thaw();
            FaultRun.Records records = run.finish(Duration.ofSeconds(120), Duration.ofSeconds(90));
            run.report(records, "1 × SIGSTOP 3.3 s of an ORDERLY owner", -1);
            String file = frozen.record().getFileName().toString();
            long handledTwice = records.lines() - records.counts().size();
            run.note(name + ": handled twice " + handledTwice + " (" + repeatsByOrigin(run, file, frozenAt, thawedAt)
                    + ")");
            assertThat(run.lost(records)).as("lost").isZero();
            assertThat(run.leftInRedis()).as("left in Redis").isZero();
            assertThat(new GroupOrder(run.intervals(), GROUPS).groupsHandled()).as("groups handled")
                    .isEqualTo(GROUPS);
            // only the handlers the freeze caught mid-way may overlap
            assertThat(run.orderViolations(frozenAt + FREEZE_MILLIS / 2)).as("overlaps and disorder per group")
                    .isEmpty();
            assertThat(handledTwice).as("handled twice: at most the frozen owner's handlers and the acks on their"
                    + " way (concurrency × 2)").isLessThanOrEqualTo(CONCURRENCY * 2L);
        }
    }

    /**
     * Where the repeats come from: per (first handler, second handler) pair, how many, and how long before the freeze
     * the first handling ended (a handling ended after the thaw counts as 'caught by the freeze').
     */
    private static String repeatsByOrigin(FaultRun run, String frozen, long frozenAt, long thawedAt) throws Exception {
        Map<Integer, List<FaultRun.Interval>> byMessage = new TreeMap<>();
        run.intervals().values().forEach(list -> list.forEach(i -> byMessage.computeIfAbsent(i.index(),
                k -> new ArrayList<>()).add(i)));
        Map<String, Integer> pairs = new TreeMap<>();
        long earliest = 0;
        int caught = 0;
        for (List<FaultRun.Interval> handlings : byMessage.values()) {
            if (handlings.size() < 2) {
                continue;
            }
            handlings.sort(java.util.Comparator.comparingLong(FaultRun.Interval::end));
            FaultRun.Interval first = handlings.get(0);
            for (FaultRun.Interval again : handlings.subList(1, handlings.size())) {
                pairs.merge((first.consumer().equals(frozen) ? "frozen" : "other") + "→"
                        + (again.consumer().equals(frozen) ? "frozen" : "other"), 1, Integer::sum);
            }
            if (first.consumer().equals(frozen) && first.end() <= frozenAt) {
                earliest = Math.max(earliest, frozenAt - first.end());
            }
            if (handlings.stream().anyMatch(h -> h.consumer().equals(frozen) && h.end() >= thawedAt
                    && h.start() < frozenAt)) {
                caught++;
            }
        }
        return pairs + "; caught by the freeze mid-handler: " + caught + "; the earliest first handling ended "
                + earliest + " ms before the freeze";
    }
}
