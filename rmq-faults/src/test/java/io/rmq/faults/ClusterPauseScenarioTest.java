package io.rmq.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.lettuce.core.RedisURI;
import io.rmq.admin.TopicStats;
import io.rmq.instances.RmqInstance;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TestRedisServers;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cluster-wide pause across JVMs: two consumer JVMs ({@link ConsumerMain}) of one topic, each in the instance
 * registry with a short heartbeat, are paused from the test JVM as the dashboard does (the topic, or the listener id,
 * through the registry of an engine that does not take part itself), while their handlers hold a first batch longer
 * than its lease. Asserted: both list themselves as paused cluster-wide within the bound; a second batch sent after
 * the bound is taken by neither for a window of many heartbeats (none handled, none in flight, all waiting); the first
 * batch finishes and is acked exactly once each, on its first attempt (the leases were kept across the pause); after
 * the resume every message of the second batch is handled and nothing is left in Redis.
 * <p>
 * Figures go to {@code rmq-faults/target/reliability-results.md} (RELIABILITY.md, "Cluster-wide pause").
 */
class ClusterPauseScenarioTest extends FaultSuite {

    private static final long BEAT_MILLIS = 500;
    private static final long LEASE_MILLIS = 2000;
    /** Each handling: twice the lease, so a lease not extended across the pause would run out and redeliver. */
    private static final long HANDLE_MILLIS = 4000;
    private static final long COMMAND_TIMEOUT_MILLIS = 1000;
    /** docs/operations.md: one heartbeat plus the moment a pause takes (at most the command timeout + 1 s). */
    private static final long BOUND_MILLIS = BEAT_MILLIS + COMMAND_TIMEOUT_MILLIS + 1000;
    /** How long the second batch must stay untaken: many heartbeats. */
    private static final long WINDOW_MILLIS = 12 * BEAT_MILLIS;
    private static final String LISTENER = "fault-consumer";
    private static final int FIRST = 8;
    private static final int SECOND = 10;

    @TempDir
    static Path work;

    // each topology and each kind of pause once (~30 s a case; InstancesTest covers the other two pairs in one JVM)
    @ParameterizedTest(name = "{0}, paused by {1}")
    @CsvSource({"standalone, topic", "cluster, listener"})
    void aClusterWidePauseStopsTakingInBothJvmsWhileLeasesOfWorkInHandAreKept(String redis, String by)
            throws Exception {
        boolean cluster = redis.equals("cluster");
        RedisNode standalone = cluster ? null : RedisNode.start(work, false);
        try {
            Map<String, String> options = new HashMap<>(Map.of("concurrency", "4", "batch", "16",
                    "lease-ms", Long.toString(LEASE_MILLIS), "command-timeout-ms",
                    Long.toString(COMMAND_TIMEOUT_MILLIS), "max-idle-ms", "2000", "handle-ms",
                    Long.toString(HANDLE_MILLIS), "deliveries", "true", "instances-ms", Long.toString(BEAT_MILLIS)));
            List<RedisEndpoint> nodes = cluster ? TestRedisServers.clusterNodes() : List.of();
            if (cluster) {
                options.put("cluster", String.join(",", nodes.stream().map(RedisEndpoint::hostPort).toList()));
            }
            else {
                options.put("redis", standalone.hostPort());
            }
            try (FaultRun run = new FaultRun("cluster-wide pause of the " + by + " (" + redis + ")", work,
                    cluster ? sender(nodes.stream().map(n -> RedisURI.create(n.host(), n.port())).toList())
                            : sender(standalone))) {
                scenario(run, by.equals("topic"), options);
            }
        }
        finally {
            if (standalone != null) {
                standalone.close();
            }
        }
    }

    private static void scenario(FaultRun run, boolean byTopic, Map<String, String> options) throws Exception {
        ConsumerProcess c0 = run.consumer("c0", options);
        ConsumerProcess c1 = run.consumer("c1", options);
        await("both consumers listed", Duration.ofSeconds(20), () -> run.instances().list().stream()
                .filter(i -> i.pid() == c0.pid() || i.pid() == c1.pid()).count() == 2);

        // a first batch, all taken (in flight) before the pause; each handling lasts twice the lease
        List<String> first = bodies("m-1-", FIRST);
        run.sendNow(first);
        await("the first batch taken", Duration.ofSeconds(20), () -> run.admin().stats(run.topic).inFlight() == FIRST);

        long pausedAt = System.currentTimeMillis();
        boolean fresh = byTopic ? run.instances().pauseTopic(run.topic, "dashboard")
                : run.instances().pauseListener(LISTENER, "dashboard");
        assertThat(fresh).as("a new pause").isTrue();
        assertThat(run.instances().pauses()).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo(byTopic ? "topic" : "listener");
            assertThat(p.name()).isEqualTo(byTopic ? run.topic : LISTENER);
            assertThat(p.by()).isEqualTo("dashboard");
        });
        // as the instances list it (their descriptions lag their state by up to one beat)
        await("both listed as paused cluster-wide", Duration.ofMillis(2 * BEAT_MILLIS + BOUND_MILLIS + 5000),
                () -> bothPaused(run.instances().list(), c0, c1));
        long bothPausedMillis = System.currentTimeMillis() - pausedAt;
        long boundLeft = pausedAt + BOUND_MILLIS - System.currentTimeMillis();
        if (boundLeft > 0) {
            Thread.sleep(boundLeft); // the documented bound, from the pause
        }

        // the second batch: nobody may take it while paused, for many heartbeats
        List<String> second = bodies("m-2-", SECOND);
        long sentAt = System.currentTimeMillis();
        run.sendNow(second);
        long notPausedSeen = 0;
        long secondTakenSeen = 0;
        while (System.currentTimeMillis() - sentAt < WINDOW_MILLIS
                || !run.records().counts().keySet().containsAll(first)) {
            assertThat(System.currentTimeMillis() - sentAt).as("the first batch finished within 60 s").isLessThan(60_000);
            if (!bothPaused(run.instances().list(), c0, c1)) {
                notPausedSeen++;
            }
            if (run.records().counts().keySet().stream().anyMatch(id -> id.startsWith("m-2-"))) {
                secondTakenSeen++;
            }
            Thread.sleep(100);
        }
        FaultRun.Records paused = run.records();
        TopicStats whilePaused = run.admin().stats(run.topic);
        long windowMillis = System.currentTimeMillis() - sentAt;
        List<FaultRun.Handling> firstHandlings = run.handlings().stream()
                .filter(h -> h.id().startsWith("m-1-")).toList();

        assertThat(notPausedSeen).as("samples of the list with a consumer not paused cluster-wide").isZero();
        assertThat(paused.counts().keySet()).as("second batch handled while paused (%d ms window)", windowMillis)
                .noneMatch(id -> id.startsWith("m-2-"));
        assertThat(secondTakenSeen).isZero();
        assertThat(whilePaused.inFlight()).as("in flight after the first batch finished, while paused").isZero();
        assertThat(whilePaused.waiting()).as("the second batch waiting").isEqualTo(SECOND);
        assertThat(first).allSatisfy(id -> assertThat(paused.counts().get(id))
                .as("%s handled exactly once across the pause", id).isEqualTo(1));
        assertThat(firstHandlings).as("first batch handlings").hasSize(FIRST)
                .allSatisfy(h -> assertThat(h.attempt()).as("%s's attempt (a lease not kept redelivers)", h.id())
                        .isEqualTo(1));
        for (ConsumerProcess c : List.of(c0, c1)) {
            assertThat(c.log()).as("consumer log").contains("registers itself every " + BEAT_MILLIS + " ms")
                    .contains("'" + LISTENER + "' (topic '" + run.topic + "') paused: it takes no new messages");
        }

        // resumed: the second batch is handled everywhere
        long resumedAt = System.currentTimeMillis();
        assertThat(byTopic ? run.instances().resumeTopic(run.topic) : run.instances().resumeListener(LISTENER))
                .as("the pause was there").isTrue();
        assertThat(run.instances().pauses()).isEmpty();
        FaultRun.Records records = run.awaitAllHandled(Duration.ofSeconds(60));
        List<FaultRun.Handling> handlings = run.handlings();
        // from the resume to the first handling of the second batch starting (its record is written when it ends)
        long resumeMillis = handlings.stream().filter(h -> h.id().startsWith("m-2-"))
                .mapToLong(h -> h.startMillis() - resumedAt).min().orElse(-1);
        long redelivered = handlings.stream().filter(h -> h.attempt() > 1).count();
        long duplicates = records.lines() - records.counts().size();
        int byC0 = handledBy(c0, "m-1-");
        run.report(records, "pause of the " + (byTopic ? "topic" : "listener") + " across 2 JVMs", resumeMillis);
        run.note(String.format("cluster-wide pause of the %s: both listed as paused %d ms after the pause (bound %d ms"
                        + " + one beat of listing), handled during the %d ms window 0 of %d, first batch %d handled"
                        + " across the pause (%d by c0), redelivered %d, duplicates %d",
                byTopic ? "topic" : "listener", bothPausedMillis, BOUND_MILLIS, windowMillis, SECOND, FIRST, byC0,
                redelivered, duplicates));

        assertThat(records.counts().keySet()).as("every message handled after the resume")
                .containsAll(first).containsAll(second);
        assertThat(run.lost(records)).isZero();
        assertThat(run.leftInRedis()).as("left in Redis").isZero();
        assertThat(redelivered).as("deliveries after a lease ran out").isZero();
        assertThat(duplicates).as("duplicates").isZero();
        for (ConsumerProcess c : List.of(c0, c1)) {
            assertThat(c.log()).contains("'" + LISTENER + "' (topic '" + run.topic + "') resumed");
            assertThat(c.errors()).as("ERROR lines of %s", c.record()).isEmpty();
        }
        assertThat(bothPausedMillis).as("ms from the pause until both listed it").isLessThan(2 * BEAT_MILLIS
                + BOUND_MILLIS + 5000);
    }

    private static boolean bothPaused(List<RmqInstance> instances, ConsumerProcess c0, ConsumerProcess c1) {
        return List.of(c0, c1).stream().allMatch(c -> instances.stream().filter(i -> i.pid() == c.pid())
                .anyMatch(i -> i.listeners().stream().anyMatch(l -> l.id().equals(LISTENER) && l.pausedCluster()
                        && !l.pausedHere() && l.state().equals("paused"))));
    }

    private static int handledBy(ConsumerProcess consumer, String prefix) throws java.io.IOException {
        Path file = consumer.record();
        return !java.nio.file.Files.exists(file) ? 0 : (int) java.nio.file.Files.readAllLines(file).stream()
                .filter(line -> line.startsWith(prefix)).count();
    }

    private static List<String> bodies(String prefix, int count) {
        return IntStream.range(0, count).mapToObj(i -> prefix + i).collect(java.util.stream.Collectors.toCollection(
                ArrayList::new));
    }

    private static void await(String what, Duration timeout, java.util.concurrent.Callable<Boolean> condition) {
        Awaitility.await(what).atMost(timeout).pollInterval(Duration.ofMillis(50)).until(condition);
    }
}
