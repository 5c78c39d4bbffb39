package io.rmq.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rmq.core.internal.SlotRouter;
import io.rmq.test.TcpProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.rmq.faults.FaultRun.assertNoLossAndClean;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fault scenarios with consumers in separate JVMs ({@link ConsumerMain}) and Redis servers this test kills, freezes,
 * restarts and fails over. Each asserts, from the consumers' own records of what they handled: nothing accepted is
 * lost, duplicates stay within what was in flight at the faults, nothing is left behind in Redis, consumption
 * resumes within a stated time, and no consumer's watchdog ever had to report a stall.
 * <p>
 * {@code rmq.faults.length=short} (every build) runs each scenario briefly; {@code long}
 * ({@code ./mvnw -pl rmq-faults -am verify -Pfaults-long}) at the lengths RELIABILITY.md reports. Figures go to
 * {@code rmq-faults/target/reliability-results.md}.
 */
class FaultScenariosTest extends FaultSuite {

    static final String LENGTH = System.getProperty("rmq.faults.length", "short");
    private static final boolean LONG = LENGTH.equals("long");

    /** Consumer settings of every scenario: a short lease and command timeout, so faults resolve in seconds. */
    private static final Map<String, String> CONSUMER = Map.of("concurrency", "4", "batch", "16", "lease-ms", "2000",
            "command-timeout-ms", "1000", "max-idle-ms", "2000");
    /** Most messages one consumer holds (unhandled + handled awaiting their ack): concurrency + 8 × batch, twice. */
    private static final int IN_HAND_PER_CONSUMER = 2 * (4 + 8 * 16);

    @TempDir
    static Path work;

    private static Map<String, String> consumer(String key, String value) {
        Map<String, String> options = new HashMap<>(CONSUMER);
        options.put(key, value);
        return options;
    }

    // ------------------------------------------------------------------ scenarios

    @Test
    void consumersKilledWithSigkillLoseNothing() throws Exception {
        int messages = LONG ? 100_000 : 6_000;
        int kills = LONG ? 20 : 3;
        try (RedisNode redis = RedisNode.start(work, false)) {
            try (FaultRun run = new FaultRun("kill -9 of consumers", work, sender(redis))) {
                List<ConsumerProcess> live = new ArrayList<>();
                live.add(run.consumer("c0", consumer("redis", redis.hostPort())));
                live.add(run.consumer("c1", consumer("redis", redis.hostPort())));
                run.send(messages, 1000);
                long every = messages / (kills + 1);
                for (int k = 0; k < kills; k++) {
                    Thread.sleep(every);
                    ConsumerProcess victim = live.remove(k % live.size());
                    victim.kill();
                    live.add(run.consumer("r" + k, consumer("redis", redis.hostPort())));
                }
                FaultRun.Records records = run.finish(Duration.ofMinutes(5), Duration.ofSeconds(60));
                run.report(records, kills + " × kill -9", -1);
                assertNoLossAndClean(run, records, kills * IN_HAND_PER_CONSUMER);
            }
        }
    }

    /**
     * Three CONCURRENT consumers share the topic's slots (each prefers its own share and steals from the others only
     * when its own have nothing due); one is killed with kill -9 while it holds its share and is not replaced. Its
     * slots are served by the two others (steals, then their own shares once its membership timed out): the first
     * message of its slots handled after the kill comes within the membership timeout, its membership ages out within
     * about that timeout, nothing is lost, and duplicates stay within what it held.
     */
    @Test
    void aConsumerKilledWhileItHoldsAShareHasItsSlotsServedByTheOthers() throws Exception {
        int messages = LONG ? 60_000 : 6_000;
        long ownershipMillis = 2000;
        try (RedisNode redis = RedisNode.start(work, false)) {
            try (FaultRun run = new FaultRun("kill -9 of a consumer holding a share", work, sender(redis))) {
                // the idle check (maxIdle) is far off: what serves the dead consumer's slots is the sharing
                Map<String, String> options = consumer("redis", redis.hostPort());
                options.put("ownership-ms", Long.toString(ownershipMillis));
                options.put("max-idle-ms", "60000");
                run.consumer("c0", options);
                run.consumer("c1", options);
                ConsumerProcess victim = run.consumer("c2", options);
                RedisClient admin = RedisClient.create(RedisURI.create("redis://" + redis.hostPort()));
                try (StatefulRedisConnection<String, String> connection = admin.connect()) {
                    // the consumers' engines, one entry each (one heartbeat per engine for all its containers)
                    String members = run.prefix + ":{rmq-consumers}:live";
                    run.send(messages, 1000);
                    awaitHandling(victim);
                    Thread.sleep(messages / 4); // a quarter of the sending: the shares have settled
                    // entries score their deadlines (the listing's version scores below zero)
                    assertThat(connection.sync().zcount(members, io.lettuce.core.Range.create(0.0, Double.MAX_VALUE)))
                            .as("members before the kill").isEqualTo(3);
                    Set<Integer> share = mostlyHandledBy(run, victim);
                    long killedAt = System.currentTimeMillis();
                    victim.kill();
                    long agedOut = -1;
                    while (System.currentTimeMillis() - killedAt < ownershipMillis + 10_000) {
                        if (connection.sync().zrangebyscore(members, io.lettuce.core.Range.create(
                                (double) System.currentTimeMillis(), Double.MAX_VALUE)).size() == 2) {
                            agedOut = System.currentTimeMillis() - killedAt;
                            break;
                        }
                        Thread.sleep(50);
                    }
                    FaultRun.Records records = run.finish(Duration.ofMinutes(5), Duration.ofSeconds(60));
                    long resume = records.firstAfter(killedAt + 100, id -> share.contains(
                            SlotRouter.slot(id.getBytes(StandardCharsets.UTF_8), run.slots)));
                    run.report(records, "1 × kill -9 of 3 sharing consumers (membership " + ownershipMillis
                            + " ms, its slots " + share + ", aged out after " + agedOut + " ms)", resume);
                    assertThat(share).as("the victim handled messages before the kill").isNotEmpty()
                            .hasSizeLessThan(run.slots);
                    assertThat(agedOut).as("ms from the kill until its membership had timed out")
                            .isBetween(0L, ownershipMillis + 5000);
                    assertThat(resume).as("ms from the kill to a message of its slots handled by the others")
                            .isBetween(0L, ownershipMillis + 5000);
                    assertNoLossAndClean(run, records, IN_HAND_PER_CONSUMER);
                }
                finally {
                    RedisNode.shutdown(admin);
                }
            }
        }
    }

    /**
     * Messages with ids that merge (each id sent in several versions, payload and header {@code v} newer each time)
     * while consumers are killed with kill -9, each while it is handling, and replaced: every id is delivered with
     * its newest payload, each delivery's header belongs to its own payload, and no payload or header is left stored
     * at the end.
     */
    @Test
    void consumersKilledWhileIdsMergeStillDeliverEveryIdsNewestPayloadWithItsHeader() throws Exception {
        idsMergeWhileConsumersAreKilled(1);
    }

    /**
     * As above, each round's ids sent in batches of 20 (a batch of id messages alone: on standalone Redis each slot's
     * part is one MULTI of the envelopes' HSET and the members' ZADD, racing the killed consumers' in-flight copies).
     */
    @Test
    void consumersKilledWhileIdBatchesMergeStillDeliverEveryIdsNewestPayloadWithItsHeader() throws Exception {
        idsMergeWhileConsumersAreKilled(20);
    }

    private void idsMergeWhileConsumersAreKilled(int batch) throws Exception {
        int ids = LONG ? 2_000 : 200;
        int versions = LONG ? 10 : 5;
        int rate = LONG ? 1000 : 200;
        int kills = LONG ? 10 : 3;
        try (RedisNode redis = RedisNode.start(work, false)) {
            try (FaultRun run = new FaultRun("kill -9 of consumers, ids that merge" + (batch > 1 ? ", sent in batches"
                    : ""), work, sender(redis))) {
                Map<String, String> options = consumer("redis", redis.hostPort());
                options.put("versions", "true");
                // handling takes a while, so consumers hold deliveries in hand (a backlog while versions fall due)
                options.put("handle-ms", "50");
                List<ConsumerProcess> live = new ArrayList<>();
                live.add(run.consumer("c0", options));
                live.add(run.consumer("c1", options));
                // a round over the ids takes ids / rate s: with a longer time range the next version of an id
                // mostly merges into the waiting one, otherwise it follows the delivered one as a new message
                long round = 1000L * ids / rate;
                run.sendVersions(ids, versions, rate, Duration.ofMillis(round * 3 / 2), batch);
                killWhileHandling(run, live, options, kills, round * versions / (kills + 1));
                FaultRun.Records records = run.finish(Duration.ofMinutes(5), Duration.ofSeconds(60));
                List<FaultRun.VersionHandled> handled = run.versionsHandled();
                Map<String, Integer> newest = run.newestVersions();
                long redelivered = handled.stream().filter(h -> h.attempt() > 1).count();
                long again = handled.size() - handled.stream().map(FaultRun.VersionHandled::payload).distinct().count();
                run.report(records, kills + " × kill -9; " + ids + " ids × " + versions + " versions", -1);
                run.note(String.format("ids that merge: %d sends, %d deliveries (the table's duplicates count an id's"
                        + " newer versions), %d after a lease ran out, %d a payload handled before", ids * versions,
                        handled.size(), redelivered, again));

                // an id may be delivered once per version; a payload again only when redelivered after a kill
                assertNoLossAndClean(run, records, ids * (versions - 1) + kills * IN_HAND_PER_CONSUMER);
                assertThat(again).as("%s: payloads handled twice", run.name)
                        .isLessThanOrEqualTo(kills * IN_HAND_PER_CONSUMER);
                assertThat(redelivered).as("%s: the kills hit deliveries in hand", run.name).isPositive();
                assertThat(newest).as("every version accepted").hasSize(ids).allSatisfy((id, v) ->
                        assertThat(v).isEqualTo(versions));
                assertThat(handled).as("%s: deliveries whose header v or id is not their payload's", run.name)
                        .filteredOn(h -> !h.payload().equals(h.id() + "@" + h.header())).isEmpty();
                Set<String> payloads = handled.stream().map(FaultRun.VersionHandled::payload)
                        .collect(Collectors.toSet());
                assertThat(newest.entrySet().stream().map(e -> e.getKey() + "@" + e.getValue())
                        .filter(payload -> !payloads.contains(payload)).toList())
                        .as("%s: ids whose newest payload was never delivered", run.name).isEmpty();
                assertThat(run.envelopesLeft()).as("%s: payloads and headers left stored", run.name).isZero();
                if (batch > 1) {
                    assertThat(multisCounted(redis)).as("%s: batches written as MULTI / EXEC", run.name).isPositive();
                }
            }
        }
    }

    /**
     * Trace contexts propagated at a tenth's sampling (Spring Boot's default probability), as a traced service sends:
     * every tenth message carries a sampled traceparent of its own (a trace record beside its body), the others none
     * (nothing stored). Handling takes a while, so a backlog builds (sends into backlogged slots write their records
     * natively) and consumers hold deliveries when they are killed with kill -9 and replaced. Every delivery, a
     * redelivery after a kill included, carries exactly its own send's traceparent (a sampled message never loses it,
     * an unsampled one never gets one), nothing is lost, and no trace record is left stored at the end.
     */
    @Test
    void consumersKilledWhileTracedMessagesFlowDeliverEachWithItsOwnContextAndLeaveNoRecord() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false)) {
            tracedMessagesWhileConsumersAreKilled(FaultRun.traced("kill -9 of consumers, trace contexts at 10 %"
                    + " sampling", work, sender(redis)), consumer("redis", redis.hostPort()));
        }
    }

    /** As above on a 3+3 cluster: the records live in each slot's hash tag, on the master of the slot's body. */
    @Test
    void consumersKilledWhileTracedMessagesFlowOnAClusterDeliverEachWithItsOwnContextAndLeaveNoRecord()
            throws Exception {
        try (ClusterOfSix cluster = ClusterOfSix.start(work)) {
            tracedMessagesWhileConsumersAreKilled(FaultRun.traced("kill -9 of consumers, trace contexts at 10 %"
                    + " sampling, 3+3 cluster", work, sender(cluster.seeds())),
                    consumer("cluster", cluster.seedList()));
        }
    }

    private void tracedMessagesWhileConsumersAreKilled(FaultRun traced, Map<String, String> options)
            throws Exception {
        int messages = LONG ? 60_000 : 6_000;
        int kills = LONG ? 10 : 3;
        try (FaultRun run = traced) {
            options.put("contexts", "true");
            options.put("handle-ms", "10");
            List<ConsumerProcess> live = new ArrayList<>();
            live.add(run.consumer("c0", options));
            live.add(run.consumer("c1", options));
            run.send(messages, 1000);
            killWhileHandling(run, live, options, kills, messages / (kills + 1));
            FaultRun.Records records = run.finish(Duration.ofMinutes(5), Duration.ofSeconds(60));
            List<FaultRun.ContextHandled> handled = run.contextsHandled();
            long redelivered = handled.stream().filter(h -> h.attempt() > 1).count();
            long sampled = handled.stream().filter(h -> h.traceparent() != null).count();
            long sampledAgain = handled.stream().filter(h -> h.attempt() > 1 && h.traceparent() != null).count();
            run.report(records, kills + " × kill -9; every tenth message sampled", -1);
            run.note(String.format("trace contexts at 10 %% sampling: %d deliveries, %d with their context, %d"
                    + " after a lease ran out (%d of them sampled)", handled.size(), sampled, redelivered,
                    sampledAgain));

            assertNoLossAndClean(run, records, kills * IN_HAND_PER_CONSUMER);
            // a kill may land between a handler's two lines (the context's is written first)
            assertThat(handled.size()).as("%s: handlings that recorded their context", run.name)
                    .isBetween(records.lines(), records.lines() + kills * 4);
            assertThat(handled).as("%s: deliveries whose context is not their own send's", run.name)
                    .filteredOn(h -> !java.util.Objects.equals(h.traceparent(),
                            FaultRun.context(Integer.parseInt(h.id().substring(2))))).isEmpty();
            assertThat(sampled).as("%s: deliveries with a context", run.name).isGreaterThanOrEqualTo(messages / 10);
            assertThat(redelivered).as("%s: the kills hit deliveries in hand", run.name).isPositive();
            assertThat(sampledAgain).as("%s: sampled messages delivered again after a kill", run.name)
                    .isPositive();
            assertThat(run.envelopesLeft()).as("%s: trace records left stored", run.name).isZero();
        }
    }

    /**
     * {@code kills} times, {@code every} ms apart: kill -9 of the next of the {@code live} consumers once it is
     * handling, and a new consumer with {@code options} in its place.
     */
    private static void killWhileHandling(FaultRun run, List<ConsumerProcess> live, Map<String, String> options,
            int kills, long every) throws IOException, InterruptedException {
        for (int k = 0; k < kills; k++) {
            Thread.sleep(every);
            ConsumerProcess victim = live.remove(k % live.size());
            awaitHandling(victim);
            victim.kill();
            live.add(run.consumer("r" + k, options));
        }
    }

    /** The node's count of MULTI calls (INFO commandstats), on a connection of its own. */
    private static long multisCounted(RedisNode redis) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create("redis://" + redis.hostPort());
        try (var connection = client.connect()) {
            java.util.regex.Matcher calls = java.util.regex.Pattern.compile("cmdstat_multi:calls=(\\d+)")
                    .matcher(connection.sync().info("commandstats"));
            return calls.find() ? Long.parseLong(calls.group(1)) : 0;
        }
        finally {
            client.shutdown();
        }
    }

    /** The slots of which {@code consumer} handled more than half of the messages handled so far: its share. */
    private static Set<Integer> mostlyHandledBy(FaultRun run, ConsumerProcess consumer) throws IOException {
        Map<Integer, Integer> all = new HashMap<>();
        for (FaultRun.Handled handled : run.records().times()) {
            all.merge(SlotRouter.slot(handled.id().getBytes(StandardCharsets.UTF_8), run.slots), 1, Integer::sum);
        }
        Map<Integer, Integer> its = new HashMap<>();
        for (String line : java.nio.file.Files.readAllLines(consumer.record(), StandardCharsets.UTF_8)) {
            int comma = line.lastIndexOf(',');
            if (comma > 0) {
                its.merge(SlotRouter.slot(line.substring(0, comma).getBytes(StandardCharsets.UTF_8), run.slots), 1,
                        Integer::sum);
            }
        }
        return its.entrySet().stream().filter(e -> 2 * e.getValue() > all.get(e.getKey())).map(Map.Entry::getKey)
                .collect(Collectors.toSet());
    }

    /** Waits (up to 10 s) until {@code consumer} is handling: its record grew within the last 50 ms. */
    private static void awaitHandling(ConsumerProcess consumer) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + 10_000;
        long size = java.nio.file.Files.exists(consumer.record()) ? java.nio.file.Files.size(consumer.record()) : 0;
        while (System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            long now = java.nio.file.Files.exists(consumer.record()) ? java.nio.file.Files.size(consumer.record()) : 0;
            if (now > size) {
                return;
            }
            size = now;
        }
    }

    @Test
    void aSoakThroughAProxyThatDelaysStallsAndResetsLosesNothingAndNeverStalls() throws Exception {
        int runs = LONG ? 3 : 1;
        int seconds = LONG ? 180 : 30;
        int rate = LONG ? 1000 : 300;
        try (RedisNode redis = RedisNode.start(work, false)) {
            for (int seed = 1; seed <= runs; seed++) {
                try (TcpProxy proxy = new TcpProxy(RedisNode.HOST, redis.port());
                        FaultRun run = new FaultRun("soak through a faulty proxy, seed " + seed, work,
                                sender(redis))) {
                    run.consumer("c0", consumer("redis", RedisNode.HOST + ":" + proxy.port()));
                    run.consumer("c1", consumer("redis", RedisNode.HOST + ":" + proxy.port()));
                    // latency on every chunk; every ~2 s a reset (30%) or a stall of up to 2 s (> command timeout)
                    proxy.latency(2).chaos(seed, 2000, 0.3, 2000);
                    run.send(seconds * rate, rate);
                    run.awaitSent(Duration.ofSeconds(seconds + 120));
                    proxy.calm();
                    FaultRun.Records records = run.awaitAllHandled(Duration.ofSeconds(60));
                    run.report(records, proxy.resets() + " resets, " + proxy.stalls() + " stalls", -1);
                    assertNoLossAndClean(run, records, (int) (proxy.resets() + proxy.stalls() + 1) * 2
                            * IN_HAND_PER_CONSUMER);
                }
            }
        }
    }

    @Test
    void redisKilledAndRestartedWithAofAlwaysLosesNoAcknowledgedSend() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false, "--appendonly", "yes", "--appendfsync", "always")) {
            redisOutages(redis, "Redis kill -9 + restart (AOF always)", "Redis kill -9, down 2 s", 10_000, () -> {
                redis.kill();
                Thread.sleep(2000);
                redis.restart();
            });
        }
    }

    @Test
    void redisFrozenLongerThanTheCommandTimeoutIsSurvived() throws Exception {
        try (RedisNode redis = RedisNode.start(work, false)) {
            redisOutages(redis, "Redis frozen (SIGSTOP 4 s, command timeout 1 s)", "SIGSTOP 4 s", 5_000, () -> {
                redis.freeze();
                Thread.sleep(4000);
                redis.thaw();
            });
        }
    }

    /** Something done to the Redis server that ends with it serving again. */
    @FunctionalInterface
    private interface Outage {
        void inflict() throws Exception;
    }

    /**
     * Two consumers while messages keep coming; {@code outage} is inflicted once (three times when long), spread over
     * the run. Each outage's resume time: from its end to the first message handled after it.
     */
    private void redisOutages(RedisNode redis, String name, String what, long maxResumeMillis, Outage outage)
            throws Exception {
        int outages = LONG ? 3 : 1;
        int seconds = LONG ? 60 : 10;
        int rate = LONG ? 1000 : 500;
        try (FaultRun run = new FaultRun(name, work, sender(redis))) {
            run.consumer("c0", consumer("redis", redis.hostPort()));
            run.consumer("c1", consumer("redis", redis.hostPort()));
            run.send(seconds * rate, rate);
            List<Long> endedAt = new ArrayList<>();
            for (int i = 0; i < outages; i++) {
                Thread.sleep(seconds * 1000L / (outages + 1));
                outage.inflict();
                endedAt.add(System.currentTimeMillis());
            }
            FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(60));
            long worstResume = 0;
            for (long at : endedAt) {
                worstResume = Math.max(worstResume, records.firstAfter(at));
            }
            run.report(records, outages + " × " + what, worstResume);
            assertNoLossAndClean(run, records, outages * 2 * IN_HAND_PER_CONSUMER);
            // the stated bound at the lengths RELIABILITY.md reports (run on a quiet machine); every build's short
            // run, which may share a loaded machine, asserts that consumption resumes, within a generous 30 s
            assertThat(worstResume).as("ms from the end of the outage to the first message handled")
                    .isBetween(0L, LONG ? maxResumeMillis : Math.max(maxResumeMillis, 30_000));
        }
    }

    @Test
    void aConsumerFrozenPastItsLeaseIsFencedAndItsMessagesAreHandledElsewhere() throws Exception {
        int seconds = LONG ? 60 : 10;
        try (RedisNode redis = RedisNode.start(work, false)) {
            try (FaultRun run = new FaultRun("consumer frozen past its lease (SIGSTOP 4 s, lease 1 s)", work,
                    sender(redis))) {
                Map<String, String> shortLease = consumer("redis", redis.hostPort());
                shortLease.put("lease-ms", "1000");
                ConsumerProcess frozen = run.consumer("c0", shortLease);
                run.consumer("c1", shortLease);
                run.send(seconds * 500, 500);
                int freezes = LONG ? 5 : 1;
                for (int f = 0; f < freezes; f++) {
                    Thread.sleep(seconds * 1000L / (freezes + 1));
                    frozen.freeze();
                    Thread.sleep(4000);
                    frozen.thaw();
                }
                FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(60));
                run.report(records, freezes + " × consumer SIGSTOP 4 s", -1);
                assertNoLossAndClean(run, records, freezes * IN_HAND_PER_CONSUMER);
            }
        }
    }

    @Test
    void aClusterMasterKilledFailsOverAndConsumptionResumes() throws Exception {
        int seconds = LONG ? 60 : 12;
        try (ClusterOfSix cluster = ClusterOfSix.start(work)) {
            try (FaultRun run = new FaultRun("3+3 cluster, a master killed (kill -9)", work,
                    sender(cluster.seeds()))) {
                Map<String, String> options = consumer("cluster", cluster.seedList());
                run.consumer("c0", options);
                run.consumer("c1", options);
                run.send(seconds * 400, 400);
                Thread.sleep(seconds * 1000L / 3);
                RedisNode victim = cluster.masters.get(0);
                Set<Integer> lostSlots = cluster.slotsOf(0);
                long killedAt = System.currentTimeMillis();
                victim.kill();
                FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(90));
                long resume = records.firstAfter(killedAt + 100, id -> lostSlots.contains(run.clusterSlotOf(id)));
                run.report(records, "1 master kill -9", resume);
                assertNoLossAndClean(run, records, 2 * IN_HAND_PER_CONSUMER);
                assertThat(resume).as("ms from the kill to a message of the dead master's slots handled")
                        .isBetween(0L, 30_000L);
            }
        }
    }

    /**
     * A master of a 3+3 cluster killed (kill -9) while a backlog falls due on every slot, with two consumers that run
     * with the settings a user gets by default (batch 64, lease 30 s, command timeout 10 s, max idle 30 s). Measured
     * from the consumers' own records: the longest pause in handling the other masters' messages, the time from the
     * replica's promotion (seen from the replica itself) to the first message of the dead master's slots handled,
     * and redeliveries, told apart by the node their slot was on. The healthy slots must not pause (the round that
     * waited for every slot held them for 6-11 s), the dead master's slots must resume within seconds of the
     * promotion, and no healthy slot's message may be delivered twice (a lease that ran out while its delivery waited
     * in a consumer's local queue). Once, or five times when long; each kill's figures go to the results file.
     */
    @Test
    void aKilledMasterHoldsBackOnlyItsOwnSlotsWithTheDefaultSettings() throws Exception {
        int kills = LONG ? 5 : 1;
        for (int k = 1; k <= kills; k++) {
            killAMasterWithDefaults(k);
        }
    }

    private void killAMasterWithDefaults(int number) throws Exception {
        int messages = 4_000;
        Duration lead = Duration.ofSeconds(2);
        Duration span = Duration.ofSeconds(10);
        try (ClusterOfSix cluster = ClusterOfSix.start(work)) {
            try (FaultRun run = new FaultRun("3+3 cluster, a master killed, default consumer settings (" + number + ")",
                    work, sender(cluster.seeds()))) {
                Map<String, String> options = Map.of("cluster", cluster.seedList(), "defaults", "true",
                        "deliveries", "true");
                run.consumer("c0", options);
                run.consumer("c1", options);
                long firstDue = System.currentTimeMillis() + lead.toMillis();
                run.sendSpread(messages, lead, span);
                long lastDue = firstDue + span.toMillis();
                cluster.awaitReplicaInSync(0); // what the dead master accepted is on its replica
                long killAt = firstDue + span.toMillis() / 4;
                assertThat(System.currentTimeMillis()).as("sending the backlog took too long (machine overloaded?)")
                        .isLessThan(killAt);
                Signals.sleep(killAt - System.currentTimeMillis());
                Set<Integer> lostSlots = cluster.slotsOf(0);
                java.util.function.Predicate<String> onDeadMaster = id -> lostSlots.contains(run.clusterSlotOf(id));
                long killedAt;
                long promotedAt;
                long downFor;
                try (PromotionWatch promotion = new PromotionWatch(cluster.replicas.get(0), cluster.masters.get(1))) {
                    killedAt = System.currentTimeMillis();
                    cluster.masters.get(0).kill();
                    promotedAt = promotion.await(Duration.ofSeconds(60));
                    downFor = promotion.downFrom == 0 ? 0 : (promotion.downTo == 0 ? System.currentTimeMillis()
                            : promotion.downTo) - promotion.downFrom;
                }
                Signals.sleep(1000); // the other nodes learn of the promotion
                run.refreshSenderTopology();
                // leases of deliveries whose ack died with the master run out after 30 s: then they come again
                FaultRun.Records records = run.finish(Duration.ofSeconds(10), Duration.ofSeconds(120));

                // healthy slots' messages fall due until lastDue: every pause that began before then counts
                List<Long> healthy = records.times().stream().filter(h -> !onDeadMaster.test(h.id()))
                        .map(FaultRun.Handled::atMillis).filter(t -> t >= killedAt).sorted().toList();
                long healthyGap = 0;
                long previous = killedAt;
                for (long at : healthy) {
                    if (previous <= lastDue) {
                        healthyGap = Math.max(healthyGap, at - previous);
                    }
                    previous = at;
                }
                long resume = records.firstAfter(promotedAt, onDeadMaster);
                List<FaultRun.Handling> handlings = run.handlings();
                long healthyRedelivered = handlings.stream().filter(h -> h.attempt() > 1 && !onDeadMaster.test(h.id()))
                        .count();
                long deadRedelivered = handlings.stream().filter(h -> h.attempt() > 1 && onDeadMaster.test(h.id()))
                        .count();
                long healthyDuplicates = records.counts().entrySet().stream()
                        .filter(e -> !onDeadMaster.test(e.getKey())).mapToLong(e -> e.getValue() - 1).sum();
                long deadDuplicates = records.counts().entrySet().stream()
                        .filter(e -> onDeadMaster.test(e.getKey())).mapToLong(e -> e.getValue() - 1).sum();
                long lastHandled = records.times().stream().mapToLong(FaultRun.Handled::atMillis).max().orElse(0);
                long deadAfterKill = records.times().stream().filter(h -> h.atMillis() >= killedAt
                        && onDeadMaster.test(h.id())).count();
                run.report(records, "1 master kill -9 (promoted after " + (promotedAt - killedAt) + " ms)", resume);
                run.note(String.format("kill %d: handled after the kill: %d of the healthy slots' messages by their"
                        + " last due time (+%d ms), %d of the dead master's; last message handled at +%d ms", number,
                        healthy.stream().filter(t -> t <= lastDue).count(), lastDue - killedAt, deadAfterKill, lastHandled - killedAt));
                run.note(String.format("kill %d: healthy slots' longest pause %d ms (the cluster refused every command"
                        + " for %d ms); replica promoted %d ms after the kill; dead master's slots: first message %d ms"
                        + " after the promotion; duplicates: healthy slots %d (redelivered %d), dead master's slots %d"
                        + " (redelivered %d)", number, healthyGap, downFor, promotedAt - killedAt, resume,
                        healthyDuplicates, healthyRedelivered, deadDuplicates, deadRedelivered));
                assertNoLossAndClean(run, records, 2 * 2 * (1 + 8 * 64));
                // the cluster's own refusal is Redis's; what RMQ adds to it must stay well below the 6-11 s of before
                assertThat(healthyGap).as("longest pause in handling the healthy slots' messages (ms), the cluster"
                        + " having refused commands for %d ms", downFor).isLessThan(downFor + 1_500);
                assertThat(resume).as("ms from the promotion to the first message of the dead master's slots")
                        .isBetween(0L, 5_000L);
                assertThat(healthyDuplicates + healthyRedelivered)
                        .as("healthy slots' messages delivered twice (a lease ran out in a local queue)").isZero();
            }
        }
    }

    /**
     * Watches a failover from the side, every 20 ms: the replica's ROLE (when it became a master) and a healthy
     * master's cluster_state (while the cluster refused commands: Redis's default, cluster-require-full-coverage
     * yes, refuses every command from the moment a master is marked failed until its replica takes over).
     */
    private static final class PromotionWatch implements AutoCloseable {

        private final RedisClient replicaClient;
        private final RedisClient healthyClient;
        private final StatefulRedisConnection<String, String> replica;
        private final StatefulRedisConnection<String, String> healthy;
        long downFrom;
        long downTo;

        PromotionWatch(RedisNode replicaNode, RedisNode healthyNode) {
            replicaClient = RedisClient.create(resources, replicaNode.uri());
            healthyClient = RedisClient.create(resources, healthyNode.uri());
            replica = replicaClient.connect();
            healthy = healthyClient.connect();
        }

        /** Returns when the replica became a master; then waits (up to 10 s) for the cluster to be ok again. */
        long await(Duration timeout) throws InterruptedException {
            long deadline = System.currentTimeMillis() + timeout.toMillis();
            long promoted = 0;
            while (System.currentTimeMillis() < deadline) {
                long now = System.currentTimeMillis();
                boolean ok = healthy.sync().clusterInfo().contains("cluster_state:ok");
                if (!ok && downFrom == 0) {
                    downFrom = now;
                }
                if (ok && downFrom != 0 && downTo == 0) {
                    downTo = now;
                }
                if (promoted == 0 && "master".equals(String.valueOf(replica.sync().role().get(0)))) {
                    promoted = now;
                    deadline = Math.min(deadline, now + 10_000);
                }
                if (promoted != 0 && ok) {
                    return promoted;
                }
                Thread.sleep(20);
            }
            if (promoted != 0) {
                return promoted;
            }
            throw new AssertionError("the replica was not promoted within " + timeout);
        }

        @Override
        public void close() {
            replica.close();
            healthy.close();
            replicaClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            healthyClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    // ------------------------------------------------------------------ checks

    // ------------------------------------------------------------------ a cluster with replicas

    /** Three masters, each with one replica, formed with CLUSTER ADDSLOTS / MEET / REPLICATE. */
    static final class ClusterOfSix implements AutoCloseable {

        final List<RedisNode> masters = new ArrayList<>();
        final List<RedisNode> replicas = new ArrayList<>();

        static ClusterOfSix start(Path work) throws IOException, InterruptedException {
            ClusterOfSix cluster = new ClusterOfSix();
            try {
                for (int i = 0; i < 3; i++) {
                    cluster.masters.add(RedisNode.start(work, true));
                    cluster.replicas.add(RedisNode.start(work, true));
                }
                cluster.form();
                return cluster;
            }
            catch (IOException | InterruptedException | RuntimeException ex) {
                cluster.close();
                throw ex;
            }
        }

        private void form() throws InterruptedException {
            List<RedisNode> all = new ArrayList<>(masters);
            all.addAll(replicas);
            for (int i = 0; i < 3; i++) {
                int[] slots = range(i);
                run(masters.get(i), c -> c.clusterAddSlots(slots));
            }
            for (RedisNode node : all.subList(1, all.size())) {
                run(all.get(0), c -> c.clusterMeet(RedisNode.HOST, node.port()));
            }
            await(() -> all.stream().allMatch(n -> call(n, c -> c.clusterNodes().lines().count()) == 6), "MEET");
            for (int i = 0; i < 3; i++) {
                String masterId = call(masters.get(i), RedisCommands::clusterMyId);
                RedisNode replica = replicas.get(i);
                await(() -> {
                    try {
                        run(replica, c -> c.clusterReplicate(masterId));
                        return true;
                    }
                    catch (RuntimeException ex) {
                        return false; // the replica does not know the master yet
                    }
                }, "REPLICATE");
            }
            await(() -> all.stream().allMatch(n -> call(n, RedisCommands::clusterInfo).contains("cluster_state:ok"))
                    && replicas.stream().allMatch(n -> call(n, c -> c.info("replication"))
                            .contains("master_link_status:up")), "cluster ok with replicas in sync");
        }

        /** Waits until master {@code index}'s replica has every write the master has (replication offsets equal). */
        void awaitReplicaInSync(int index) throws InterruptedException {
            await(() -> {
                String info = call(masters.get(index), c -> c.info("replication"));
                long offset = Long.parseLong(info.replaceAll("(?s).*master_repl_offset:(\\d+).*", "$1"));
                return info.matches("(?s).*slave0:[^\\n]*offset=" + offset + ",.*");
            }, "replica in sync");
        }

        Set<Integer> slotsOf(int master) {
            return IntStream.of(range(master)).boxed().collect(Collectors.toSet());
        }

        private static int[] range(int index) {
            int first = index * 16384 / 3;
            int last = (index + 1) * 16384 / 3 - 1;
            return IntStream.rangeClosed(first, index == 2 ? 16383 : last).toArray();
        }

        List<RedisURI> seeds() {
            List<RedisURI> seeds = new ArrayList<>();
            masters.forEach(n -> seeds.add(n.uri()));
            replicas.forEach(n -> seeds.add(n.uri()));
            return seeds;
        }

        String seedList() {
            List<String> nodes = new ArrayList<>();
            masters.forEach(n -> nodes.add(n.hostPort()));
            replicas.forEach(n -> nodes.add(n.hostPort()));
            return String.join(",", nodes);
        }

        private static void run(RedisNode node, java.util.function.Consumer<RedisCommands<String, String>> action) {
            call(node, c -> {
                action.accept(c);
                return null;
            });
        }

        private static <T> T call(RedisNode node, java.util.function.Function<RedisCommands<String, String>, T> action) {
            RedisClient client = RedisClient.create(node.uri());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                return action.apply(connection.sync());
            }
            finally {
                RedisNode.shutdown(client);
            }
        }

        private static void await(java.util.function.BooleanSupplier condition, String what)
                throws InterruptedException {
            long deadline = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < deadline) {
                try {
                    if (condition.getAsBoolean()) {
                        return;
                    }
                }
                catch (RuntimeException ignored) {
                    // not yet
                }
                Thread.sleep(100);
            }
            throw new IllegalStateException("cluster formation: " + what + " not reached within 60 s");
        }

        @Override
        public void close() {
            masters.forEach(RedisNode::close);
            replicas.forEach(RedisNode::close);
        }
    }
}
