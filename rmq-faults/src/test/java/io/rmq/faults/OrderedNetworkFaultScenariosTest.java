package io.rmq.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import io.rmq.redis.RedisClientSettings;
import io.rmq.test.TcpProxy;
import io.rmq.test.TcpProxy.Direction;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ORDERLY consumers coordinated through ZooKeeper (curator-test's server, in the test JVM), of which the owner under
 * test reaches Redis and ZooKeeper each through a {@link TcpProxy} of its own, and one of the two links is blackholed
 * (both ways; the connection stays dead) while the other stays up. The other consumer reaches both directly.
 * <ul>
 * <li>Cut from <b>Redis</b>, not ZooKeeper: its ZooKeeper session lives on, but it cannot renew its slots in Redis;
 * docs/ordering.md: a Redis outage makes an owner let go of its slots after the ownership time.</li>
 * <li>Cut from <b>ZooKeeper</b>, not Redis: its session expires on the server after the session timeout and the other
 * consumer claims its slots under a newer epoch, while the cut owner still reaches Redis: its guard (min(ownership,
 * session) − one renewal period, and at once on SUSPENDED) must stop it starting handlers, and the scripts fence it.</li>
 * </ul>
 * Asserted from the consumers' own records (per group: start and end of every handling): no two handlings of one group
 * overlap and no group's messages are first handled out of order (fencing held), every slot of the cut owner is
 * handled by the other within the bound, nothing is lost or left in Redis; duplicates are counted and reported.
 */
class OrderedNetworkFaultScenariosTest extends FaultSuite {

    private static final boolean LONG = FaultScenariosTest.LENGTH.equals("long");
    private static final long OWNERSHIP_MILLIS = 3000;
    private static final long SESSION_MILLIS = 2000;
    /** The new owner's claim and first handler, and a loaded machine (a build's short run shares one). */
    private static final long SLACK_MILLIS = LONG ? 2000 : 5000;

    @TempDir
    static Path work;

    /**
     * Cut from ZooKeeper, not Redis: the session expires, the other consumer claims the slots under a newer epoch and
     * handles them within the session + one renewal period; the cut owner, which still reaches Redis, starts no
     * handler on them (no overlap, no disorder per group); nothing lost, handled twice at most what it had taken.
     */
    @Test
    void anOrderlyOwnerCutFromZooKeeperButNotRedisIsFencedAndItsSlotsAreTakenOverWithinTheSession() throws Exception {
        Outcome outcome = cut(false);
        // docs/ordering.md: the session (rounded up to the server's tick, 2 s here) + one renewal period of min(both)
        long bound = SESSION_MILLIS + Math.min(SESSION_MILLIS, OWNERSHIP_MILLIS) / 5;
        assertThat(outcome.takeover()).as("ms from the cut until every slot of the cut owner had a handler in the"
                + " other (bound %d ms + the claim and a loaded machine's slack)", bound)
                .isBetween(0L, bound + SLACK_MILLIS);
    }

    /**
     * Cut from Redis, not ZooKeeper: the cut owner stops starting handlers (it cannot renew in Redis), but its
     * ZooKeeper session and so its owner nodes live on, so the other consumer cannot claim its slots: they wait for
     * the heal (measured: none taken over during a 12 s cut; RELIABILITY.md). Asserted: no overlap or disorder per
     * group, the slots are served again within the bound after the heal (the dead connection replaced: silence
     * timeout + a renewal), nothing lost or left, handled twice at most what it had taken.
     */
    @Test
    void anOrderlyOwnerCutFromRedisButNotZooKeeperHandlesNothingWhileCutAndItsSlotsResumeAfterTheHeal()
            throws Exception {
        Outcome outcome = cut(true);
        long silenceMillis = RedisClientSettings.ConnectionHealth.DEFAULT.silenceTimeout().toMillis();
        assertThat(outcome.resumed()).as("ms from the heal until every slot of the cut owner had a handler again")
                .isBetween(0L, silenceMillis + OWNERSHIP_MILLIS + SLACK_MILLIS);
    }

    /** Takeover: ms until every slot of the cut owner had a handler in the other, -1 if not all before the heal. */
    private record Outcome(long takeover, long resumed) {
    }

    private static Outcome cut(boolean redisCut) throws Exception {
        String cutFrom = redisCut ? "redis" : "zookeeper";
        long cutMillis = LONG ? 30_000 : 12_000;
        int seconds = (int) (cutMillis / 1000) + 10;
        try (RedisNode redis = RedisNode.start(work, false); TestingServer zookeeper = new TestingServer(true);
                TcpProxy redisOfCut = new TcpProxy(RedisNode.HOST, redis.port());
                TcpProxy zookeeperOfCut = new TcpProxy("127.0.0.1", zookeeper.getPort());
                FaultRun run = new FaultRun("ORDERLY owner cut from " + (redisCut ? "Redis, not ZooKeeper"
                        : "ZooKeeper, not Redis") + " (ownership 3 s, session 2 s)", work, sender(redis), true)) {
            Map<String, String> options = OrderedFaultScenariosTest.ordered(redis, 1);
            options.put("ownership-ms", Long.toString(OWNERSHIP_MILLIS));
            options.put("zookeeper", zookeeper.getConnectString());
            options.put("session-ms", Long.toString(SESSION_MILLIS));
            Map<String, String> viaProxies = new HashMap<>(options);
            viaProxies.put("redis", RedisNode.HOST + ":" + redisOfCut.port());
            viaProxies.put("zookeeper", "127.0.0.1:" + zookeeperOfCut.port());
            ConsumerProcess cut = run.consumer("n0", viaProxies);
            ConsumerProcess other = run.consumer("n1", options);
            run.send(seconds * 300, 300);
            Thread.sleep(5000); // both own slots
            long cutAt = System.currentTimeMillis();
            Set<Integer> itsSlots = OrderedFaultScenariosTest.slotsHandledBy(run, cut, cutAt - 2000);
            (redisCut ? redisOfCut : zookeeperOfCut).blackhole(Direction.BOTH);
            Thread.sleep(cutMillis);
            long healedAt = System.currentTimeMillis();
            (redisCut ? redisOfCut : zookeeperOfCut).heal();
            FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(90));
            String file = cut.record().getFileName().toString();
            Map<Integer, List<FaultRun.Interval>> intervals = run.intervals();
            long takeover = latestFirstStart(intervals, itsSlots, cutAt, healedAt, i -> !i.consumer().equals(file));
            long resumed = latestFirstStart(intervals, itsSlots, healedAt, Long.MAX_VALUE, i -> true);
            long takenDuringCut = itsSlots.stream().filter(slot -> intervals.getOrDefault(slot, List.of()).stream()
                    .anyMatch(i -> !i.consumer().equals(file) && i.start() >= cutAt && i.start() < healedAt)).count();
            long cutHandledDuringCut = intervals.values().stream().flatMap(List::stream).filter(i -> i.consumer()
                    .equals(file) && i.start() >= cutAt + OWNERSHIP_MILLIS && i.start() < healedAt).count();
            long duplicates = records.lines() - records.counts().size();
            run.report(records, "1 × " + cutMillis / 1000 + " s blackhole of an ORDERLY owner's " + cutFrom
                    + " link (its slots " + itsSlots + "); " + takenDuringCut + " of them taken over during the cut,"
                    + " all " + takeover + " ms after the cut; handlers it started while cut (from the ownership"
                    + " time on) " + cutHandledDuringCut + "; every one served again " + resumed
                    + " ms after the heal", takeover);

            assertThat(itsSlots).as("slots the cut owner handled in its last 2 s").isNotEmpty();
            assertThat(run.orderViolations(Long.MIN_VALUE)).as("overlaps and disorder per group").isEmpty();
            if (redisCut) {
                assertThat(cutHandledDuringCut).as("handlers the owner cut from Redis started while cut").isZero();
            }
            assertThat(run.lost(records)).as("lost; the cut owner's log ends:%n%s%nthe other's:%n%s", cut.logTail(),
                    other.logTail()).isZero();
            assertThat(run.leftInRedis()).as("left in Redis").isZero();
            // what the cut owner had taken and not settled: at most a batch (8) per slot it owned, twice
            assertThat(duplicates).as("handled twice").isLessThanOrEqualTo(2L * 8 * itsSlots.size());
            return new Outcome(takeover, resumed);
        }
    }

    /**
     * The latest, over {@code slots}, of the first start of a handling {@code which} accepts within [from, to), in ms
     * after {@code from}; -1 if a slot had none.
     */
    private static long latestFirstStart(Map<Integer, List<FaultRun.Interval>> intervals, Set<Integer> slots,
            long from, long to, Predicate<FaultRun.Interval> which) {
        long latest = 0;
        for (int slot : slots) {
            long first = intervals.getOrDefault(slot, List.of()).stream().filter(which)
                    .filter(i -> i.start() >= from && i.start() < to).mapToLong(FaultRun.Interval::start).min()
                    .orElse(-1);
            if (first < 0) {
                return -1;
            }
            latest = Math.max(latest, first - from);
        }
        return latest;
    }
}
