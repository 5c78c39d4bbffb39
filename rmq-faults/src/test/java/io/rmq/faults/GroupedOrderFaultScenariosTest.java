package io.rmq.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ORDERLY consumers in separate JVMs on a topic with few slots and many groups, each listener of concurrency 4: every
 * group's messages are handled one at a time and in their order while slot owners are killed with SIGKILL; the only
 * repeats are of handlings a kill caught before their ack. The records are the consumers' own ({@link ConsumerMain}),
 * read per group by {@link GroupOrder}.
 */
class GroupedOrderFaultScenariosTest extends FaultSuite {

    private static final boolean LONG = FaultScenariosTest.LENGTH.equals("long");
    private static final long OWNERSHIP_MILLIS = 2000;
    private static final int SLOTS = 4;
    private static final int GROUPS = 200;

    @TempDir
    static Path work;

    private static Map<String, String> ordered(RedisNode redis) {
        return OrderedFaultScenariosTest.ordered(redis, 10);
    }

    @Test
    void perGroupOrderHoldsWhileOwnersOfFewSlotsWithManyGroupsAreKilled() throws Exception {
        int kills = LONG ? 10 : 3;
        int seconds = LONG ? 120 : 24;
        int perSecond = 200;
        try (RedisNode redis = RedisNode.start(work, false)) {
            try (FaultRun run = new FaultRun("ORDERLY, " + SLOTS + " slots × " + GROUPS + " groups, kill -9"
                    + " (ownership 2 s)", work, sender(redis), SLOTS, GROUPS)) {
                List<ConsumerProcess> live = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    live.add(run.consumer("g" + i, ordered(redis)));
                }
                Set<String> killed = new HashSet<>();
                long sendingFrom = System.currentTimeMillis();
                run.send(seconds * perSecond, perSecond);
                List<Long> takeovers = new ArrayList<>();
                for (int k = 0; k < kills; k++) {
                    Thread.sleep(Math.max(0, sendingFrom + (k + 1) * seconds * 1000L / (kills + 1)
                            - System.currentTimeMillis()));
                    long killedAt = System.currentTimeMillis();
                    // an owner: the live consumer that handled the most slots lately (with 4 slots and 3 consumers,
                    // one may own none)
                    Map<ConsumerProcess, Set<Integer>> owned = new HashMap<>();
                    for (ConsumerProcess consumer : live) {
                        owned.put(consumer, OrderedFaultScenariosTest.slotsHandledBy(run, consumer,
                                killedAt - OWNERSHIP_MILLIS));
                    }
                    ConsumerProcess victim = live.stream().max(Comparator.comparingInt(c -> owned.get(c).size()))
                            .orElseThrow();
                    Set<Integer> victimSlots = owned.get(victim);
                    victim.kill();
                    killed.add(victim.record().getFileName().toString());
                    live.remove(victim);
                    live.add(run.consumer("r" + k, ordered(redis)));
                    assertThat(victimSlots).as("slots the victim of kill %d handled in its last 2 s", k).isNotEmpty();
                    takeovers.add(OrderedFaultScenariosTest.takeover(run, victim, victimSlots, killedAt));
                }
                FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(60));
                long worst = takeovers.stream().mapToLong(Long::longValue).max().orElse(-1);
                run.report(records, kills + " × kill -9 of an ORDERLY owner (" + SLOTS + " slots, " + GROUPS
                        + " groups, concurrency 4)", worst);
                GroupOrder order = new GroupOrder(run.intervals(), GROUPS);
                run.note("ORDERLY " + SLOTS + " slots × " + GROUPS + " groups: " + kills + " kills, "
                        + run.acceptedCount() + " messages, " + order.repeats() + " handled again (all after a kill),"
                        + " most handlings of one slot at once in one consumer: " + order.mostAtOnceInASlot()
                        + ", take-over after each kill (ms): " + takeovers);
                assertThat(run.lost(records)).as("lost").isZero();
                assertThat(run.leftInRedis()).as("waiting, in flight or dead in Redis").isZero();
                assertThat(order.groupsHandled()).as("groups with a handling").isEqualTo(GROUPS);
                assertThat(order.groupsInSeveralSlots()).as("groups handled in more than one slot").isEmpty();
                assertThat(order.violations(killed)).as("overlaps, disorder and repeats without a kill per group")
                        .isEmpty();
                assertThat(order.mostAtOnceInASlot()).as("groups of one slot handled in parallel").isGreaterThan(1);
                // generous: a busy machine starts the successor's first handler late (see OrderedFaultScenariosTest)
                long slack = LONG ? 0 : 10_000;
                assertThat(takeovers).allSatisfy(ms -> assertThat(ms).isBetween(0L, OWNERSHIP_MILLIS + 2000 + slack));
            }
        }
    }
}
