package io.rmq.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.SlotHash;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.core.internal.SlotRouter;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import io.rmq.test.LogCapture;
import io.rmq.test.PrivateCluster;
import io.rmq.test.TcpProxy;
import io.rmq.test.TcpProxy.Direction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.rmq.faults.FaultRun.assertNoLossAndClean;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The network's faults, with consumers in separate JVMs ({@link ConsumerMain}) of which some reach Redis through a
 * {@link TcpProxy}: a link that goes silent and stays dead (blackhole: no reply, no reset, the connection never comes
 * back, only a new one works once the network heals), and a slow link (latency with jitter on every chunk). Every
 * client runs with RMQ's default connection health ({@link RedisClientSettings.ConnectionHealth#DEFAULT}: a
 * connection that owes replies and has received nothing for 10 s is closed and replaced). Each scenario asserts its
 * bound; figures go to {@code rmq-faults/target/reliability-results.md} and RELIABILITY.md.
 */
class NetworkFaultScenariosTest extends FaultSuite {

    private static final boolean LONG = FaultScenariosTest.LENGTH.equals("long");

    /** Consumer settings of every scenario, as in {@link FaultScenariosTest}: a short lease and command timeout. */
    private static final Map<String, String> CONSUMER = Map.of("concurrency", "4", "batch", "16", "lease-ms", "2000",
            "command-timeout-ms", "1000", "max-idle-ms", "2000", "ownership-ms", "2000");
    /** Most messages one consumer holds (unhandled + handled awaiting their ack): concurrency + 8 × batch, twice. */
    private static final int IN_HAND_PER_CONSUMER = 2 * (4 + 8 * 16);
    /** RMQ's default silence timeout: a connection owing replies with nothing received for this long is replaced. */
    private static final long SILENCE_MILLIS = RedisClientSettings.ConnectionHealth.DEFAULT.silenceTimeout().toMillis();

    @TempDir
    static Path work;

    private static Map<String, String> consumer(String redis) {
        Map<String, String> options = new HashMap<>(CONSUMER);
        options.put("redis", redis);
        return options;
    }

    /**
     * One of two consumers is blackholed from Redis (both directions, its connection stays dead) while it holds leases
     * and the sending goes on. The other takes over its slots within the membership and lease time; the cut one's
     * connection is found silent and replaced (its first new connection reaches the proxy) within the silence bound;
     * after the heal it handles again; what it had leased is handled elsewhere, its late acks are fenced: nothing is
     * lost or left in Redis, and what is handled twice is at most what it held.
     */
    @Test
    void aConsumerBlackholedFromRedisIsReplacedInItsSlotsFindsItsConnectionDeadAndResumesAfterTheHeal()
            throws Exception {
        long blackholeMillis = LONG ? 30_000 : 15_000;
        int rate = 300;
        int seconds = (int) (blackholeMillis / 1000) + 15;
        try (RedisNode redis = RedisNode.start(work, false);
                TcpProxy proxy = new TcpProxy(RedisNode.HOST, redis.port());
                FaultRun run = new FaultRun("consumer blackholed from Redis", work, sender(redis))) {
            ConsumerProcess cut = run.consumer("c0", consumer(RedisNode.HOST + ":" + proxy.port()));
            ConsumerProcess other = run.consumer("c1", consumer(redis.hostPort()));
            run.send(seconds * rate, rate);
            awaitRecordGrowing(cut);
            Thread.sleep(4000); // the shares settle
            Set<Integer> share = slotsMostlyHandledBy(run, cut);
            long connectionsBefore = proxy.accepted();
            long cutAt = System.currentTimeMillis();
            proxy.blackhole(Direction.BOTH);
            long replacedAfter = -1;
            while (System.currentTimeMillis() - cutAt < blackholeMillis) {
                if (replacedAfter < 0 && proxy.accepted() > connectionsBefore) {
                    replacedAfter = System.currentTimeMillis() - cutAt;
                }
                Thread.sleep(20);
            }
            proxy.heal();
            long healedAt = System.currentTimeMillis();
            FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(60));
            long takenOver = firstIn(other, cutAt + 100, id -> share.contains(slot(run, id)));
            long resumed = firstIn(cut, healedAt, id -> true);
            run.report(records, "1 × blackhole " + blackholeMillis / 1000 + " s of 1 of 2 consumers (its slots "
                    + share + "); connection replaced " + replacedAfter + " ms after the cut; it handled again "
                    + resumed + " ms after the heal", takenOver);

            assertThat(share).as("the cut consumer served slots of its own").isNotEmpty();
            assertThat(takenOver).as("ms from the cut to a message of its slots handled by the other consumer")
                    .isBetween(0L, 2000L + 2000L + 5000L);
            assertThat(replacedAfter).as("ms from the cut to the cut consumer's first new connection")
                    .isBetween(SILENCE_MILLIS - 1000, SILENCE_MILLIS + 1000 + 3000);
            assertThat(cut.log()).contains("has received nothing for");
            assertThat(resumed).as("ms from the heal to the cut consumer handling again").isBetween(0L, 20_000L);
            assertNoLossAndClean(run, records, IN_HAND_PER_CONSUMER);
        }
    }

    /**
     * A sender blackholed from Redis while it sends 50 messages a second: every send that does not succeed fails
     * within the send timeout (5 s) with an exception that says either that the message was not sent or that its
     * outcome is unknown; every send reported successful is handled (by a consumer that reaches Redis directly), and
     * nothing is handled that was reported not sent; after the heal sends succeed again within the bound.
     */
    @Test
    void aSenderBlackholedFromRedisFailsEachSendWithinItsTimeoutSayingWhatIsKnownAndRecovers() throws Exception {
        long blackholeMillis = LONG ? 30_000 : 13_000;
        // what the blackhole causes on purpose in this JVM's cut sender: its dead connection found and closed, its
        // history write cut off, reconnects refused until the heal
        try (LogCapture log = LogCapture.of("io.rmq", "io.lettuce.core").expecting("owes", "history counts",
                "Cannot reconnect", "Reconnected");
                RedisNode redis = RedisNode.start(work, false);
                TcpProxy proxy = new TcpProxy(RedisNode.HOST, redis.port());
                FaultRun run = new FaultRun("sender blackholed from Redis", work, sender(redis));
                RmqRedisClient cutClient = RmqRedisClient.standalone(RedisURI.create(RedisNode.HOST, proxy.port()),
                        null, null, RedisClientSettings.DEFAULT);
                Rmq cutSender = Rmq.create(cutClient.client(), RmqOptions.DEFAULT.withKeyPrefix(run.prefix))) {
            run.consumer("c0", consumer(redis.hostPort()));
            Set<String> sent = ConcurrentHashMap.newKeySet();
            Set<String> unknown = ConcurrentHashMap.newKeySet();
            Set<String> notSent = ConcurrentHashMap.newKeySet();
            List<String> unclear = new CopyOnWriteArrayList<>();
            List<Long> okAt = new CopyOnWriteArrayList<>();
            long[] longestFailure = {0};
            long cutAt = System.currentTimeMillis() + 3000;
            long healAt = cutAt + blackholeMillis;
            // sending goes on until 5 s of sends went through after the heal (or 20 s after it, past the bound of
            // the first success after the heal): what comes later adds nothing the assertions look at
            long endAt = healAt + 20_000;
            long goOnAfterRecovery = 5_000;
            Thread sending = new Thread(() -> {
                for (int i = 0; System.currentTimeMillis() < endAt && !okAt.stream()
                        .anyMatch(at -> at >= healAt && System.currentTimeMillis() - at >= goOnAfterRecovery); i++) {
                    String id = "s-" + i;
                    long started = System.currentTimeMillis();
                    try {
                        cutSender.producer().sendRangeMerge(run.topic, id, Duration.ofMillis(1));
                        sent.add(id);
                        okAt.add(System.currentTimeMillis());
                    }
                    catch (RuntimeException ex) {
                        longestFailure[0] = Math.max(longestFailure[0], System.currentTimeMillis() - started);
                        String message = String.valueOf(ex.getMessage());
                        if (message.contains("outcome is unknown") || message.contains("may or may not have been")) {
                            unknown.add(id);
                        }
                        else if (message.contains("not sent")) {
                            notSent.add(id);
                        }
                        else {
                            unclear.add(ex.getClass().getSimpleName() + ": " + message);
                        }
                    }
                    sleepQuietly(20);
                }
            }, "blackholed-sender");
            sending.start();
            Thread.sleep(cutAt - System.currentTimeMillis());
            proxy.blackhole(Direction.BOTH);
            Thread.sleep(healAt - System.currentTimeMillis());
            proxy.heal();
            long healedAt = System.currentTimeMillis();
            sending.join(60_000);
            long recovered = okAt.stream().filter(at -> at >= healedAt).mapToLong(at -> at - healedAt).min()
                    .orElse(-1);
            // the run's own sender sends nothing: what it waits for are the ids reported sent
            FaultRun.Records records = awaitHandled(run, sent, Duration.ofSeconds(60));
            Set<String> handled = records.counts().keySet();
            run.note(String.format("sender blackholed %d s: %d sent, %d failed saying the outcome is unknown, %d"
                    + " failed saying not sent, longest failing send %d ms, first send after the heal %d ms after it;"
                    + " handled %d (of which reported not sent: %d)", blackholeMillis / 1000, sent.size(),
                    unknown.size(), notSent.size(), longestFailure[0], recovered, handled.size(),
                    notSent.stream().filter(handled::contains).count()));

            assertThat(unknown.size() + notSent.size()).as("sends failed during the blackhole").isPositive();
            assertThat(unclear).as("failures that say neither 'not sent' nor 'outcome unknown'").isEmpty();
            assertThat(longestFailure[0]).as("ms the longest failing send took (send timeout 5 s)")
                    .isLessThanOrEqualTo(5000L + 2000L);
            assertThat(sent.stream().filter(id -> !handled.contains(id)).toList())
                    .as("reported sent but never handled").isEmpty();
            assertThat(handled.stream().filter(notSent::contains).toList()).as("handled but reported not sent")
                    .isEmpty();
            assertThat(handled.stream().filter(id -> !sent.contains(id) && !unknown.contains(id)).toList())
                    .as("handled but never sent").isEmpty();
            assertThat(recovered).as("ms from the heal to the first successful send")
                    .isBetween(0L, SILENCE_MILLIS + 8000);
            assertThat(run.leftInRedis()).isZero();
            assertThat(log.warnings()).as("the cut sender's connection found dead and closed")
                    .anySatisfy(line -> assertThat(line).contains("has received nothing for"));
        }
    }

    /**
     * Every chunk between the consumers and Redis delayed 200 ms ± 50 ms (each command's round trip 300-500 ms) while
     * messages keep coming and handlers take 100 ms: consumption slows but goes on (no pause in handling longer than
     * the bound), lease extensions keep up (no lease expires under a handler: not one message is handled twice),
     * nothing is lost, and no watchdog reports a stall.
     */
    @Test
    void aSlowLinkWithJitterSlowsConsumptionButNoLeaseExpiresUnderAHandler() throws Exception {
        // 10 s is five leases (2 s) under the slow link: what a lease extension that could not keep up would show
        // (a redelivery, a pause) shows within the first lease or two; long runs keep the minute
        long slowMillis = LONG ? 60_000 : 10_000;
        int rate = 100;
        try (RedisNode redis = RedisNode.start(work, false);
                TcpProxy proxy = new TcpProxy(RedisNode.HOST, redis.port());
                FaultRun run = new FaultRun("latency 200 ± 50 ms on every chunk", work, sender(redis))) {
            Map<String, String> options = consumer(RedisNode.HOST + ":" + proxy.port());
            options.put("handle-ms", "100");
            run.consumer("c0", options);
            run.consumer("c1", options);
            int seconds = (int) (slowMillis / 1000) + 6;
            run.send(seconds * rate, rate);
            Thread.sleep(3000);
            long slowFrom = System.currentTimeMillis();
            proxy.latency(Duration.ofMillis(200), Duration.ofMillis(50));
            Thread.sleep(slowMillis);
            long slowTo = System.currentTimeMillis();
            proxy.heal();
            FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(60));
            long longestPause = longestPause(records, slowFrom, slowTo);
            run.report(records, "latency 200 ± 50 ms per chunk for " + slowMillis / 1000 + " s; longest pause in"
                    + " handling " + longestPause + " ms", -1);
            assertThat(longestPause).as("ms of the longest pause in handling while the link was slow")
                    .isLessThanOrEqualTo(5000L);
            assertNoLossAndClean(run, records, 0);
        }
    }

    /**
     * On a cluster of 3 masters, one of 3 consumers is cut from one master (blackholed both ways, the cluster itself
     * and every other client still reach it) while it holds leases there and the sending goes on. The cut consumer
     * reaches each master through a {@link TcpProxy} of its own, by a Lettuce socket address resolver that maps each
     * node's address to its proxy ({@code via}): the topology and redirections keep naming the nodes, only its
     * connections are diverted, so no {@code cluster-announce-*} is needed and the other clients connect directly. The
     * cut master is one that does not hold the topic's membership key (so the cut consumer stays a member). Asserted:
     * the slots on the other masters keep flowing (no pause longer than 2 s in handling them), the cut master's slots
     * are handled by the other consumers within the membership and lease time, nothing is lost or left, and what is
     * handled twice is at most what the cut consumer held.
     */
    @Test
    void aConsumerCutFromOneMasterOfAClusterLeavesTheOtherMastersFlowingAndItsSlotsThereAreServedByTheOthers()
            throws Exception {
        long cutMillis = LONG ? 30_000 : 15_000;
        int rate = 300;
        int seconds = (int) (cutMillis / 1000) + 15;
        try (PrivateCluster cluster = PrivateCluster.start(3, 0, Duration.ofSeconds(2))) {
            List<TcpProxy> proxies = new ArrayList<>();
            try (FaultRun run = new FaultRun("consumer cut from one master of 3", work, sender(cluster.seeds()))) {
                List<String> via = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    TcpProxy proxy = new TcpProxy(RedisNode.HOST, cluster.masterPort(i));
                    proxies.add(proxy);
                    via.add(RedisNode.HOST + ":" + cluster.masterPort(i) + "=" + RedisNode.HOST + ":" + proxy.port());
                }
                String seeds = String.join(",", cluster.seeds().stream()
                        .map(uri -> uri.getHost() + ":" + uri.getPort()).toList());
                Map<String, String> cutOptions = new HashMap<>(CONSUMER);
                cutOptions.put("cluster", seeds);
                cutOptions.put("via", String.join(",", via));
                Map<String, String> direct = new HashMap<>(CONSUMER);
                direct.put("cluster", seeds);
                ConsumerProcess cut = run.consumer("c0", cutOptions);
                ConsumerProcess c1 = run.consumer("c1", direct);
                ConsumerProcess c2 = run.consumer("c2", direct);
                run.send(seconds * rate, rate);
                awaitRecordGrowing(cut);
                Thread.sleep(4000); // the shares settle
                Set<Integer> share = slotsMostlyHandledBy(run, cut);
                // of the two masters without the topic's membership key (so the cut consumer keeps beating and stays
                // a member), the one serving most of the cut consumer's share: leases it holds there are cut off
                int membersMaster = cluster.masterOf(SlotHash.getSlot(run.topic));
                int cutMaster = -1;
                Set<Integer> onCut = Set.of();
                for (int master = 0; master < 3; master++) {
                    Set<Integer> there = new HashSet<>();
                    for (int slot = 0; slot < run.slots; slot++) {
                        if (cluster.masterOf(SlotHash.getSlot(run.topic + ":" + slot)) == master) {
                            there.add(slot);
                        }
                    }
                    if (master != membersMaster && (cutMaster < 0 || overlap(there, share) > overlap(onCut, share))) {
                        cutMaster = master;
                        onCut = there;
                    }
                }
                Set<Integer> cutSlots = onCut;
                Set<Integer> itsCutSlots = new HashSet<>(onCut);
                itsCutSlots.retainAll(share);
                List<Long> accepted = proxies.stream().map(TcpProxy::accepted).toList();
                long cutAt = System.currentTimeMillis();
                proxies.get(cutMaster).blackhole(Direction.BOTH);
                Thread.sleep(cutMillis);
                long healAt = System.currentTimeMillis();
                proxies.get(cutMaster).heal();
                FaultRun.Records records = run.finish(Duration.ofSeconds(seconds + 120), Duration.ofSeconds(60));
                Predicate<String> onCutMaster = id -> cutSlots.contains(slot(run, id));
                long pauseElsewhere = longestPause(records, cutAt, healAt, onCutMaster.negate());
                Predicate<String> itsOnCutMaster = id -> itsCutSlots.contains(slot(run, id));
                long takenOver = Math.min(firstOrMax(c1, cutAt + 100, itsOnCutMaster),
                        firstOrMax(c2, cutAt + 100, itsOnCutMaster));
                long pauseOnCut = longestPause(records, cutAt, healAt, onCutMaster);
                // the cut is real: after the lease of what it had started, the cut consumer handles nothing there
                long itsThereDuringCut = handledBetween(cut, cutAt + 2000 + 1000, healAt, onCutMaster);
                long itsElsewhereDuringCut = handledBetween(cut, cutAt, healAt, onCutMaster.negate());
                run.report(records, "1 × " + cutMillis / 1000 + " s cut of 1 of 3 consumers (its slots " + share
                        + ") from master " + cutMaster + " of 3 (topic slots there " + onCut + "); longest pause on"
                        + " the other masters' slots " + pauseElsewhere + " ms, on the cut master's " + pauseOnCut
                        + " ms; the cut consumer handled " + itsElsewhereDuringCut + " of the other masters' slots"
                        + " during the cut", takenOver);

                assertThat(accepted).as("connections the cut consumer opened through each master's proxy")
                        .allMatch(count -> count > 0);
                assertThat(itsCutSlots).as("the cut consumer's slots on the cut master").isNotEmpty();
                assertThat(itsThereDuringCut).as("messages of the cut master's slots the cut consumer handled"
                        + " while cut").isZero();
                assertThat(itsElsewhereDuringCut).as("messages of the other masters' slots the cut consumer"
                        + " handled while cut").isPositive();
                assertThat(pauseElsewhere).as("ms of the longest pause in handling the other masters' slots")
                        .isLessThanOrEqualTo(2000L);
                assertThat(takenOver).as("ms from the cut to a message of the cut master's slots handled by another"
                        + " consumer").isBetween(0L, 2000L + 2000L + 5000L);
                assertNoLossAndClean(run, records, IN_HAND_PER_CONSUMER);
            }
            finally {
                proxies.forEach(TcpProxy::close);
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Waits until every id of {@code ids} was handled and Redis holds nothing of the topic (or the timeout). */
    private static FaultRun.Records awaitHandled(FaultRun run, Set<String> ids, Duration timeout)
            throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + timeout.toMillis();
        FaultRun.Records records = run.records();
        while (System.currentTimeMillis() < deadline
                && !(records.counts().keySet().containsAll(ids) && run.leftInRedis() == 0)) {
            Thread.sleep(250);
            records = run.records();
        }
        return records;
    }

    /** Longest time between two handlings (or a bound of the window and a handling) within [from, to]. */
    private static long longestPause(FaultRun.Records records, long from, long to) {
        return longestPause(records, from, to, id -> true);
    }

    /** As {@link #longestPause(FaultRun.Records, long, long)}, counting only the messages {@code which} accepts. */
    private static long longestPause(FaultRun.Records records, long from, long to, Predicate<String> which) {
        List<Long> times = records.times().stream().filter(h -> which.test(h.id())).map(FaultRun.Handled::atMillis)
                .filter(at -> at >= from && at <= to).sorted().collect(Collectors.toCollection(ArrayList::new));
        long last = from;
        long worst = 0;
        for (long at : times) {
            worst = Math.max(worst, at - last);
            last = at;
        }
        return Math.max(worst, to - last);
    }

    private static int slot(FaultRun run, String id) {
        return SlotRouter.slot(id.getBytes(StandardCharsets.UTF_8), run.slots);
    }

    /** ms from {@code from} to the first message matching {@code which} that {@code consumer} handled after it, or -1. */
    private static long firstIn(ConsumerProcess consumer, long from, Predicate<String> which) throws IOException {
        long first = -1;
        for (String line : Files.readAllLines(consumer.record(), StandardCharsets.UTF_8)) {
            int comma = line.lastIndexOf(',');
            if (comma <= 0) {
                continue;
            }
            long at = Long.parseLong(line.substring(comma + 1));
            if (at >= from && which.test(line.substring(0, comma)) && (first < 0 || at - from < first)) {
                first = at - from;
            }
        }
        return first;
    }

    private static int overlap(Set<Integer> a, Set<Integer> b) {
        return (int) a.stream().filter(b::contains).count();
    }

    /** How many messages matching {@code which} {@code consumer} handled within [from, to]. */
    private static long handledBetween(ConsumerProcess consumer, long from, long to, Predicate<String> which)
            throws IOException {
        long count = 0;
        for (String line : Files.readAllLines(consumer.record(), StandardCharsets.UTF_8)) {
            int comma = line.lastIndexOf(',');
            if (comma > 0) {
                long at = Long.parseLong(line.substring(comma + 1));
                if (at >= from && at <= to && which.test(line.substring(0, comma))) {
                    count++;
                }
            }
        }
        return count;
    }

    /** As {@link #firstIn}, with "never" as {@link Long#MAX_VALUE}. */
    private static long firstOrMax(ConsumerProcess consumer, long from, Predicate<String> which) throws IOException {
        long first = firstIn(consumer, from, which);
        return first < 0 ? Long.MAX_VALUE : first;
    }

    /** The slots of which {@code consumer} handled more than half of the messages handled so far: its share. */
    private static Set<Integer> slotsMostlyHandledBy(FaultRun run, ConsumerProcess consumer) throws IOException {
        Map<Integer, Integer> all = new HashMap<>();
        for (FaultRun.Handled handled : run.records().times()) {
            all.merge(slot(run, handled.id()), 1, Integer::sum);
        }
        Map<Integer, Integer> its = new HashMap<>();
        for (String line : Files.readAllLines(consumer.record(), StandardCharsets.UTF_8)) {
            int comma = line.lastIndexOf(',');
            if (comma > 0) {
                its.merge(slot(run, line.substring(0, comma)), 1, Integer::sum);
            }
        }
        Set<Integer> share = new HashSet<>();
        its.forEach((slot, count) -> {
            if (2 * count > all.get(slot)) {
                share.add(slot);
            }
        });
        return share;
    }

    /** Waits (up to 10 s) until {@code consumer} is handling: its record grew within the last 50 ms. */
    private static void awaitRecordGrowing(ConsumerProcess consumer) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + 10_000;
        long size = Files.exists(consumer.record()) ? Files.size(consumer.record()) : 0;
        while (System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
            long now = Files.exists(consumer.record()) ? Files.size(consumer.record()) : 0;
            if (now > size) {
                return;
            }
            size = now;
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
