package io.rmq.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rmq.admin.CancelResult;
import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.TopicStats;
import io.rmq.core.internal.SlotRouter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cancel by body (issue 14) against consumers in separate JVMs that are killed with SIGKILL while they hold leased
 * messages. The test process cancels bodies while the consumers run — a random stream of them around the sending
 * front, and after each kill a burst among what is in flight at that moment (much of it held by the dead JVM) —
 * and keeps every {@link CancelResult} with the times the cancel was called and returned. The consumers record when
 * each delivery started and ended ({@link ConsumerMain}, option {@code deliveries}). From those records:
 * <ul>
 * <li>a body no cancel found waiting or in flight is handled at least once (nothing lost, the dead JVM's leases
 * included);</li>
 * <li>a body a cancel removed while it waited ({@code cancelled()}) is not handed out by a delivery that starts after
 * the cancel returned;</li>
 * <li>a body a cancel found in flight ({@code inFlight()}) is handled at most by that one delivery: when it dies with
 * the killed JVM, lease expiry (the live consumers' sweep) or the ORDERLY hand-over drops it instead of handing it
 * out again;</li>
 * <li>the topic ends empty, with no dead messages and no cancel marks left in Redis.</li>
 * </ul>
 * The run must hit the interesting case: bodies cancelled in flight whose delivery never finished (it died with a
 * killed JVM). Figures go to {@code rmq-faults/target/cancel-results.md}; {@code -Drmq.faults.seed=...} repeats a
 * run's choices (not its timing).
 */
class CancelFaultScenariosTest extends FaultSuite {

    private static final boolean LONG = FaultScenariosTest.LENGTH.equals("long");
    private static final long LEASE_MILLIS = 1000;
    private static final long OWNERSHIP_MILLIS = 2000;

    /** Kept when a scenario fails: the consumers' logs and records are the evidence. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path work;

    /**
     * One cancel as the test process saw it. {@code burst}: cancelled among what was in flight right after a kill;
     * {@code markedAttempt}: when it found the body in flight and the mark was still there just after (a find), the
     * attempt number of the delivery it marked (failed attempts + 1), else -1; {@code ofKilledOwner}: ORDERLY, the
     * body's slot was owned by the JVM just killed, so nobody can have handled it since.
     */
    record Cancel(String id, long invokedAt, long returnedAt, CancelResult result, boolean burst, int markedAttempt,
            boolean ofKilledOwner) {
    }

    /** One delivery as its consumer recorded it (written before the handler returned, so before the ack). */
    record Handling(String consumer, long start, long end, int attempt) {
    }

    @Test
    void bodiesCancelledWhileConsumersAreKilledAreNeverHandedOutAgain() throws Exception {
        scenario(false);
    }

    @Test
    void orderedBodiesCancelledWhileTheirOwnerIsKilledAreNotHandedOver() throws Exception {
        scenario(true);
    }

    private void scenario(boolean ordered) throws Exception {
        int rate = ordered ? 250 : 500;
        int seconds = LONG ? 60 : (ordered ? 10 : 6);
        int messages = seconds * rate;
        int kills = LONG ? 10 : 2;
        long seed = Long.getLong("rmq.faults.seed", System.nanoTime());
        String name = ordered ? "cancel while ORDERLY owners are killed (ownership 2 s)"
                : "cancel while consumers are killed (lease 1 s)";
        System.out.println("[faults] " + name + ": seed " + seed + ", work directory " + work);
        Random random = new Random(seed);
        try (RedisNode redis = RedisNode.start(work, false);
                FaultRun run = new FaultRun(name, work, sender(redis), ordered)) {
            RedisClient rawClient = RedisClient.create(resources, redis.uri());
            try (StatefulRedisConnection<String, String> raw = rawClient.connect()) {
                RedisCommands<String, String> redisCommands = raw.sync();
                List<ConsumerProcess> live = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    live.add(run.consumer("c" + i, consumer(redis, ordered)));
                }
                List<Cancel> cancels = new CopyOnWriteArrayList<>();
                long sendingFrom = System.currentTimeMillis();
                run.send(messages, rate);

                // a stream of cancels around the sending front: some not sent yet, some waiting, in flight or done
                AtomicBoolean stop = new AtomicBoolean();
                AtomicReference<Throwable> cancellerFailure = new AtomicReference<>();
                Random streamRandom = new Random(seed + 1);
                Thread canceller = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            int front = run.acceptedCount();
                            int index = Math.min(messages - 1, Math.max(0, front - 250 + streamRandom.nextInt(300)));
                            cancels.add(cancel(run, index, false, false));
                            Thread.sleep(20);
                        }
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    catch (Throwable ex) {
                        cancellerFailure.set(ex);
                    }
                }, "canceller");
                canceller.start();

                List<Integer> heldAtKills = new ArrayList<>();
                for (int k = 0; k < kills; k++) {
                    // spread over the sending by its progress (the sender starts slowly, then catches up with its
                    // rate: the consumers, slower than that, have a backlog and full buffers by then)
                    int threshold = (k + 1) * messages / (kills + 1);
                    while (run.acceptedCount() < threshold) {
                        Thread.sleep(20);
                    }
                    ConsumerProcess victim = live.remove(0);
                    victim.kill();
                    Set<Integer> victimSlots = ordered ? slotsOwnedBy(redisCommands, run, victim) : Set.of();
                    // what is in flight now includes everything the dead JVM held: its leases (CONCURRENT) or its
                    // slots' held pages (ORDERLY) end without an ack. Cancel a random half of it, quickly.
                    List<String> inFlight = inFlight(redisCommands, run);
                    heldAtKills.add(inFlight.size());
                    TopicStats atKill = run.admin().stats(run.topic);
                    System.out.println("[faults] kill " + k + " at " + (System.currentTimeMillis() - sendingFrom)
                            + " ms: accepted " + run.acceptedCount() + ", waiting " + atKill.waiting()
                            + ", in flight " + inFlight.size() + (ordered ? ", victim's slots " + victimSlots : ""));
                    for (String id : inFlight) {
                        if (random.nextBoolean()) {
                            int index = Integer.parseInt(id.substring(2));
                            cancels.add(cancel(run, index, true, victimSlots.contains(slotOf(run, index))));
                        }
                    }
                    live.add(run.consumer("r" + k, consumer(redis, ordered)));
                }
                run.awaitSent(Duration.ofSeconds(seconds + 120));
                stop.set(true);
                canceller.join(10_000);
                assertThat(cancellerFailure.get()).as("a cancel failed").isNull();

                Set<String> mustBeHandled = new HashSet<>(run.accepted());
                for (Cancel cancel : cancels) {
                    if (cancel.result().cancelled() || cancel.result().inFlight()) {
                        mustBeHandled.remove(cancel.id());
                    }
                }
                Map<String, List<Handling>> handled = awaitSettled(run, mustBeHandled, Duration.ofSeconds(60));

                // ---- figures
                long waitingCancels = cancels.stream().filter(c -> c.result().cancelled()).count();
                long inFlightCancels = cancels.stream().filter(c -> c.result().inFlight()).count();
                long notFound = cancels.stream().filter(c -> !c.result().found()).count();
                long dead = cancels.stream().filter(c -> c.result().dead()).count();
                long inFlightCompleted = cancels.stream().filter(c -> c.result().inFlight()
                        && handled.getOrDefault(c.id(), List.of()).stream().anyMatch(h -> h.end() >= c.invokedAt()))
                        .count();
                long inFlightDropped = inFlightCancels - inFlightCompleted;
                long inFlightInBursts = cancels.stream().filter(c -> c.result().inFlight() && c.burst()).count();
                long ofKilledOwner = cancels.stream().filter(c -> c.result().inFlight() && c.ofKilledOwner()).count();
                long attemptKnown = cancels.stream().filter(c -> c.markedAttempt() > 0).count();
                int lost = (int) mustBeHandled.stream().filter(id -> !handled.containsKey(id)).count();
                int handlings = handled.values().stream().mapToInt(List::size).sum();
                TopicStats stats = run.admin().stats(run.topic);
                List<String> cancelMarks = redisCommands.keys(run.prefix + ":*:cancelled");
                List<String> attemptCounts = redisCommands.keys(run.prefix + ":*:attempts");
                List<String> violations = violations(cancels, handled);
                String row = String.format("| %s | %s | %d | %d | %d | %d | %d | %d × kill -9 (in flight at each: %s)"
                        + " | %d | %d | %d (%d in bursts, %d of a killed owner, %d attempt known) | %d | %d | %d | %d"
                        + " | %d | %.0f |%n",
                        name, FaultScenariosTest.LENGTH, seed, run.acceptedCount(), handled.size(),
                        handlings - handled.size(), lost, kills, heldAtKills, cancels.size(), waitingCancels,
                        inFlightCancels, inFlightInBursts, ofKilledOwner, attemptKnown, inFlightCompleted,
                        inFlightDropped, notFound, dead, violations.size(),
                        (System.currentTimeMillis() - sendingFrom) / 1000.0);
                report(row);

                assertThat(violations).as("%s (seed %d): deliveries after a cancel", name, seed).isEmpty();
                assertThat(lost).as("%s (seed %d): bodies never cancelled and never handled%n%s", name, seed,
                        lost == 0 ? "" : diagnosis(run, redisCommands, mustBeHandled, handled)).isZero();
                assertThat(stats.pending()).as("%s: left waiting or in flight: %s", name, stats)
                        .isZero();
                assertThat(stats.dead()).as("%s: dead messages", name).isZero();
                assertThat(cancelMarks).as("%s: cancel marks left in Redis", name).isEmpty();
                assertThat(attemptCounts).as("%s: attempt counts left in Redis", name).isEmpty();
                // the run must have proved something: each kind of outcome, and in-flight deliveries that died with
                // a killed JVM and were then dropped (not handed out again) a good number of times
                assertThat(waitingCancels).as("cancels that removed a waiting body").isPositive();
                assertThat(notFound).as("cancels that found nothing").isPositive();
                assertThat(inFlightCompleted).as("in-flight cancels whose delivery completed").isPositive();
                assertThat(inFlightDropped).as("in-flight cancels whose delivery died with a killed JVM")
                        .isGreaterThanOrEqualTo(5L * kills);
                if (ordered) {
                    assertThat(ofKilledOwner).as("in-flight cancels of bodies held by a killed owner")
                            .isGreaterThanOrEqualTo(5L * kills);
                }
                for (ConsumerProcess consumer : run.consumers()) {
                    assertThat(consumer.errors().stream().filter(line -> line.contains("were not polled")
                            || line.contains("made no pass") || line.contains("poller thread has died")).toList())
                            .as("%s: watchdog reports of a stalled listener", name).isEmpty();
                }
            }
            finally {
                RedisNode.shutdown(rawClient);
            }
        }
    }

    private static Map<String, String> consumer(RedisNode redis, boolean ordered) {
        // ORDERLY: a thread for each slot a consumer may own (6 of 16 with 3 consumers)
        Map<String, String> options = new HashMap<>(Map.of("redis", redis.hostPort(), "concurrency", ordered ? "8" : "4",
                "batch", "16", "command-timeout-ms", "1000", "max-idle-ms", "2000",
                "deliveries", "true"));
        // CONCURRENT: slower than the sending (3 × 4 threads × 33/s < 500/s), so the consumers have a backlog and full
        // buffers when one is killed. ORDERLY: an owner runs up to 8 groups of its slots at once (one thread each), so
        // 3 × 8 threads × 10/s = 240/s, just below the sending's 250/s: owners hold full pages when they are killed
        // (at 40 ms, sized when a slot ran one message at a time, they kept up and held 8-10 at the first kill, too
        // few for the in-flight cancels of a killed owner this test needs)
        options.put("handle-ms", ordered ? "100" : "30");
        options.put("lease-ms", Long.toString(LEASE_MILLIS));
        options.put("ownership-ms", Long.toString(OWNERSHIP_MILLIS));
        return options;
    }

    /** Cancels message {@code m-<index>} (an ORDERLY run's messages were sent with slot basis {@code k-<index % 64>}). */
    private static Cancel cancel(FaultRun run, int index, boolean burst, boolean ofKilledOwner) {
        String id = "m-" + index;
        String basis = run.ordered ? "k-" + (index % 64) : null;
        long invokedAt = System.currentTimeMillis();
        CancelResult result = run.admin().cancel(MessageRef.body(run.topic, id).inGroup(basis));
        long returnedAt = System.currentTimeMillis();
        int markedAttempt = -1;
        if (result.inFlight()) {
            // while the mark is there, the delivery it marked is still the one in flight: its attempt is known
            MessageStatus status = run.admin().find(MessageRef.body(run.topic, id).inGroup(basis));
            if (status.cancelled()) {
                markedAttempt = status.failedAttempts() + 1;
            }
        }
        return new Cancel(id, invokedAt, returnedAt, result, burst, markedAttempt, ofKilledOwner);
    }

    /** What Redis and the consumers' logs say about bodies that were not handled, for the failure message. */
    private static String diagnosis(FaultRun run, RedisCommands<String, String> redis, Set<String> mustBeHandled,
            Map<String, List<Handling>> handled) throws IOException {
        StringBuilder out = new StringBuilder("stats: ").append(run.admin().stats(run.topic)).append('\n');
        mustBeHandled.stream().filter(id -> !handled.containsKey(id)).sorted().limit(20).forEach(id -> {
            int index = Integer.parseInt(id.substring(2));
            MessageRef ref = MessageRef.body(run.topic, id).inGroup(run.ordered ? "k-" + (index % 64) : null);
            out.append(id).append(" slot ").append(slotOf(run, index)).append(": ").append(run.admin().find(ref))
                    .append('\n');
        });
        for (int slot = 0; slot < run.slots; slot++) {
            String tag = run.prefix + ":{" + run.topic + ":" + slot + "}:";
            out.append("slot ").append(slot).append(": owner ").append(redis.hgetall(tag + "owner"))
                    .append(", prepare ").append(redis.zcard(tag + "prepare")).append(", store ")
                    .append(redis.zcard(tag + "store")).append(", retry ").append(redis.zcard(tag + "retry"))
                    .append(", cancelled ").append(redis.smembers(tag + "cancelled")).append('\n');
        }
        for (ConsumerProcess consumer : run.consumers()) {
            out.append(consumer.record().getFileName()).append(" alive=").append(consumer.isAlive()).append(": ");
            consumer.log().lines().filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")).limit(15)
                    .forEach(l -> out.append("\n    ").append(l.length() > 300 ? l.substring(0, 300) : l));
            out.append('\n');
        }
        return out.toString();
    }

    /** The slot of message {@code m-<index>}. */
    private static int slotOf(FaultRun run, int index) {
        String basis = run.ordered ? "k-" + (index % 64) : "m-" + index;
        return SlotRouter.slot(basis.getBytes(StandardCharsets.UTF_8), run.slots);
    }

    /**
     * ORDERLY: the slots whose ownership {@code consumer} holds (an instance id names the process:
     * {@code <container id>@<pid>-...}) for at least another second — nobody else can take them over before then.
     */
    private static Set<Integer> slotsOwnedBy(RedisCommands<String, String> redis, FaultRun run,
            ConsumerProcess consumer) {
        Set<Integer> slots = new HashSet<>();
        for (int slot = 0; slot < run.slots; slot++) {
            List<KeyValue<String, String>> owner = redis.hmget(run.prefix + ":{" + run.topic + ":" + slot + "}:owner",
                    "id", "until");
            String id = owner.get(0).getValueOrElse("");
            long until = Long.parseLong(owner.get(1).getValueOrElse("0"));
            if (id.contains("@" + consumer.pid() + "-") && until > System.currentTimeMillis() + 1000) {
                slots.add(slot);
            }
        }
        return slots;
    }

    /** The bodies in every slot's prepare ZSET (leased, or held by an ORDERLY owner). */
    private static List<String> inFlight(RedisCommands<String, String> redis, FaultRun run) {
        List<String> ids = new ArrayList<>();
        for (int slot = 0; slot < run.slots; slot++) {
            for (String member : redis.zrange(run.prefix + ":{" + run.topic + ":" + slot + "}:prepare", 0, -1)) {
                // an ORDERLY body is stored after its group (0xFE, length, "k-<n>"): the body "m-<i>" ends it
                ids.add(member.substring(member.lastIndexOf("m-")));
            }
        }
        return ids;
    }

    /**
     * What the consumers' records show against the cancels: a body removed while waiting handed out by a delivery
     * that began after the cancel returned; a body found in flight handled by more than that one delivery.
     */
    private static List<String> violations(List<Cancel> cancels, Map<String, List<Handling>> handled) {
        List<String> violations = new ArrayList<>();
        for (Cancel cancel : cancels) {
            List<Handling> of = handled.getOrDefault(cancel.id(), List.of());
            List<Handling> startedAfter = of.stream().filter(h -> h.start() > cancel.returnedAt()).toList();
            if (cancel.result().cancelled() && !startedAfter.isEmpty()) {
                violations.add(cancel + " (removed while waiting) was handled after it: " + startedAfter);
            }
            if (cancel.result().inFlight()) {
                // the delivery in flight at the cancel may finish (its record ends after the cancel began); no other
                List<Handling> notOver = of.stream().filter(h -> h.end() >= cancel.invokedAt()).toList();
                if (notOver.size() > 1 || startedAfter.size() > 1) {
                    violations.add(cancel + " (in flight) was handled by more than that delivery: " + of);
                }
                // the marked delivery was its last: none with a later attempt number (a redelivery after it ended
                // without an ack, e.g. after the lease of a killed JVM expired)
                List<Handling> later = of.stream().filter(h -> cancel.markedAttempt() > 0
                        && h.attempt() > cancel.markedAttempt()).toList();
                if (!later.isEmpty()) {
                    violations.add(cancel + " (in flight) was handed out again: " + later);
                }
                // ORDERLY: held by a dead owner, so it could only have been handled after a hand-over
                if (cancel.ofKilledOwner() && !notOver.isEmpty()) {
                    violations.add(cancel + " (held by the killed owner) was handed over: " + notOver);
                }
            }
        }
        return violations;
    }

    /**
     * Waits until every body in {@code mustBeHandled} was handled and the topic holds nothing waiting or in flight
     * (or the timeout); returns every consumer's deliveries by body.
     */
    private static Map<String, List<Handling>> awaitSettled(FaultRun run, Set<String> mustBeHandled,
            Duration timeout) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + timeout.toMillis();
        Map<String, List<Handling>> handled = deliveries(run);
        while (System.currentTimeMillis() < deadline) {
            TopicStats stats = run.admin().stats(run.topic);
            if (stats.pending() == 0 && handled.keySet().containsAll(mustBeHandled)) {
                break;
            }
            Thread.sleep(250);
            handled = deliveries(run);
        }
        // a last look: a delivery may still be finishing when the topic empties
        Thread.sleep(500);
        return deliveries(run);
    }

    /** Every consumer's {@code .deliveries} records: {@code start,end,attempt,body}; a line cut by a kill is skipped. */
    private static Map<String, List<Handling>> deliveries(FaultRun run) throws IOException {
        Map<String, List<Handling>> byBody = new HashMap<>();
        for (ConsumerProcess consumer : run.consumers()) {
            Path file = Path.of(consumer.record() + ".deliveries");
            if (!Files.exists(file)) {
                continue;
            }
            String name = consumer.record().getFileName().toString();
            try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                String line;
                while ((line = reader.readLine()) != null) {
                    String[] f = line.split(",", 4);
                    if (f.length != 4 || !f[3].matches("m-\\d+")) {
                        continue;
                    }
                    byBody.computeIfAbsent(f[3], b -> new ArrayList<>()).add(new Handling(name,
                            Long.parseLong(f[0]), Long.parseLong(f[1]), Integer.parseInt(f[2])));
                }
            }
        }
        return byBody;
    }

    /** Appends a row to {@code cancel-results.md} next to the suite's results file. */
    private static void report(String row) throws IOException {
        Path results = Path.of(System.getProperty("rmq.faults.results", "target/reliability-results.md"))
                .toAbsolutePath().resolveSibling("cancel-results.md");
        Files.createDirectories(results.getParent());
        if (!Files.exists(results)) {
            Files.writeString(results, "| scenario | length | seed | sent (accepted) | handled | duplicates | lost"
                    + " | faults | cancels | removed waiting | in flight | in flight, delivery completed"
                    + " | in flight, died with its JVM and dropped | not found | dead | violations | seconds |\n"
                    + "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: "
                    + "| ---: | ---: | ---: |\n");
        }
        Files.writeString(results, row, StandardOpenOption.APPEND);
        System.out.print("[faults] " + row);
    }
}
