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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.TopicStats;
import io.rmq.core.TopicType;
import io.rmq.redis.RmqRedisClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One fault scenario's bookkeeping, independent of the consumers: the ids the sender got an acknowledgement for
 * ("accepted"), the consumers' record files (what their handlers were given), and the figures reported in
 * RELIABILITY.md: sent, handled, lost, duplicates, time to resume.
 */
final class FaultRun implements AutoCloseable {

    final String name;
    final Path workDir;
    final String prefix = "f-" + UUID.randomUUID().toString().substring(0, 8);
    final String topic;
    /**
     * ORDERLY runs: a FIXED_TIME topic, each message due at a time of its own, in one of {@link #groups} groups
     * ({@code m-i} in {@code k-<i % groups>}).
     */
    final boolean ordered;
    final int slots;
    final int groups;
    private final RmqRedisClient senderClient;
    private final Rmq sender;
    /**
     * Runs of {@link #traced}: the sender propagates a trace context, sampled for every tenth message
     * ({@link #context}), as an observation at Spring Boot's default sampling hands the engine one; set per send on
     * the sending thread.
     */
    private final boolean traced;
    private final ThreadLocal<Map<String, String>> nextContext = ThreadLocal.withInitial(Map::of);
    private final Set<String> accepted = ConcurrentHashMap.newKeySet();
    /** Runs of {@link #sendVersions}: each id's newest accepted version. */
    private final Map<String, Integer> newestVersion = new ConcurrentHashMap<>();
    private final AtomicLong failedSends = new AtomicLong();
    private final List<ConsumerProcess> consumers = new CopyOnWriteArrayList<>();
    private final long startedMillis = System.currentTimeMillis();
    private volatile Thread sending;

    /** The run owns {@code senderClient} ({@link FaultSuite#sender}): {@link #close()} closes it. */
    FaultRun(String name, Path workDir, RmqRedisClient senderClient) {
        this(name, workDir, senderClient, false);
    }

    FaultRun(String name, Path workDir, RmqRedisClient senderClient, boolean ordered) {
        this(name, workDir, senderClient, ordered, 16, 64, false);
    }

    /**
     * An ORDERLY run over {@code slots} slots and {@code groups} groups. The sender registers the topic's ORDERLY mode
     * before it sends, so each message's group is stored with it whether or not a consumer has started yet.
     */
    FaultRun(String name, Path workDir, RmqRedisClient senderClient, int slots, int groups) {
        this(name, workDir, senderClient, true, slots, groups, false);
        sender.declareConsumeMode(topic, io.rmq.core.ConsumeMode.ORDERLY);
    }

    /**
     * A CONCURRENT run whose sender propagates trace contexts: message {@code m-i} carries {@link #context}{@code (i)}
     * when it is sampled (every tenth), nothing otherwise. Its consumers need {@code contexts true}.
     */
    static FaultRun traced(String name, Path workDir, RmqRedisClient senderClient) {
        return new FaultRun(name, workDir, senderClient, false, 16, 64, true);
    }

    private FaultRun(String name, Path workDir, RmqRedisClient senderClient, boolean ordered, int slots, int groups,
            boolean traced) {
        this.traced = traced;
        this.ordered = ordered;
        this.slots = slots;
        this.groups = groups;
        this.topic = ordered ? "ordered" : "faults";
        this.name = name;
        this.workDir = workDir;
        this.senderClient = senderClient;
        RmqOptions options = RmqOptions.DEFAULT.withKeyPrefix(prefix);
        if (traced) {
            options = options.withPropagateContext(true).withInstrumentation(new io.rmq.observe.RmqInstrumentation() {
                @Override
                public SendScope sendStarted(String topic, int messages) {
                    Map<String, String> context = nextContext.get();
                    return new SendScope() {
                        @Override
                        public Map<String, String> context() {
                            return context;
                        }
                    };
                }
            });
        }
        this.sender = Rmq.create(senderClient.client(), options);
        sender.defineTopic(topic, ordered ? TopicType.FIXED_TIME : TopicType.RANGE_MERGE, slots);
    }

    /** Starts a consumer process with the run's topic and the given extra options. */
    ConsumerProcess consumer(String id, Map<String, String> options) throws IOException {
        Map<String, String> all = new HashMap<>(options);
        all.put("prefix", prefix);
        all.put("topic", topic);
        all.put("slots", Integer.toString(slots));
        if (ordered) {
            all.put("type", "FIXED_TIME");
            all.put("mode", "ORDERLY");
        }
        ConsumerProcess consumer = ConsumerProcess.start(workDir, name + "-" + id, all);
        consumers.add(consumer);
        return consumer;
    }

    List<ConsumerProcess> consumers() {
        return consumers;
    }

    /**
     * Sends {@code total} messages at about {@code perSecond}, one synchronous send each; a send that fails (Redis
     * down) is retried with the same body until it is accepted. Returns at once; {@link #awaitSent} waits.
     */
    void send(int total, int perSecond) {
        Thread thread = new Thread(() -> {
            long start = System.nanoTime();
            long base = System.currentTimeMillis();
            for (int i = 0; i < total; i++) {
                long due = start + (long) i * 1_000_000_000L / perSecond;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                String id = "m-" + i;
                if (traced) {
                    String traceparent = context(i);
                    nextContext.set(traceparent == null ? Map.of() : Map.of("traceparent", traceparent));
                }
                while (true) {
                    try {
                        if (ordered) {
                            // due times strictly increase with i (and are never in the future at this rate)
                            sender.producer().send(io.rmq.producer.OutgoingMessage.fixedTime(topic, id,
                                    java.time.Instant.ofEpochMilli(base + i)).withGroup("k-" + (i % groups)));
                        }
                        else {
                            sender.producer().sendRangeMerge(topic, id, Duration.ofMillis(1));
                        }
                        accepted.add(id);
                        break;
                    }
                    catch (RuntimeException ex) {
                        failedSends.incrementAndGet();
                        sleep(100, 0);
                    }
                }
            }
        }, "fault-sender");
        thread.setDaemon(true);
        sending = thread;
        thread.start();
    }

    /**
     * Sends {@code versions} rounds over {@code ids} message ids ({@code p-0} …) at about {@code perSecond}, one
     * synchronous send each: round {@code v} sends every id with the payload {@code p-<i>@<v>} and the header
     * {@code v}, as RANGE_MERGE with {@code timeRange}. A send merges into its id's waiting message (which then
     * delivers the newer payload) or, once that was delivered, starts a new one. A send that fails is retried until
     * it is accepted. Returns at once; {@link #awaitSent} waits.
     */
    void sendVersions(int ids, int versions, int perSecond, Duration timeRange) {
        sendVersions(ids, versions, perSecond, timeRange, 1);
    }

    /**
     * As {@link #sendVersions(int, int, int, Duration)}, {@code batch} consecutive ids of a round in one
     * {@code sendBatch} (a batch of id messages alone: on standalone Redis one MULTI per slot), retried whole until
     * accepted.
     */
    void sendVersions(int ids, int versions, int perSecond, Duration timeRange, int batch) {
        Thread thread = new Thread(() -> {
            long start = System.nanoTime();
            for (int v = 1; v <= versions; v++) {
                for (int from = 0; from < ids; from += batch) {
                    long due = start + (long) ((v - 1) * ids + from) * 1_000_000_000L / perSecond;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                    List<io.rmq.producer.OutgoingMessage> messages = new ArrayList<>();
                    for (int i = from; i < Math.min(ids, from + batch); i++) {
                        String id = "p-" + i;
                        messages.add(io.rmq.producer.OutgoingMessage.rangeMerge(topic, id + "@" + v, timeRange)
                                .withId(id).withHeader("v", Integer.toString(v)));
                    }
                    while (true) {
                        try {
                            if (messages.size() == 1) {
                                sender.producer().send(messages.get(0));
                            }
                            else {
                                sender.producer().sendBatch(messages);
                            }
                            for (io.rmq.producer.OutgoingMessage message : messages) {
                                newestVersion.put(message.id(), v);
                                accepted.add(message.id());
                            }
                            break;
                        }
                        catch (RuntimeException ex) {
                            failedSends.incrementAndGet();
                            sleep(100, 0);
                        }
                    }
                }
            }
        }, "fault-sender");
        thread.setDaemon(true);
        sending = thread;
        thread.start();
    }

    /**
     * The trace context the sender of a {@link #traced} run gives message {@code m-i}: a sampled W3C traceparent of
     * its own for every tenth message, null (nothing propagated: unsampled) for the others.
     */
    static String context(int i) {
        return i % 10 != 0 ? null : String.format("00-%016x%016x-%016x-01", 0x5eed0000L + i, (long) i * 31 + 7,
                (long) i * 131 + 1);
    }

    /** One handling as a consumer started with {@code contexts true} recorded it: id, attempt, traceparent or null. */
    record ContextHandled(String id, int attempt, String traceparent) {
    }

    /** Every handling the consumers recorded in their {@code .contexts} files (a line cut by a kill -9 skipped). */
    List<ContextHandled> contextsHandled() throws IOException {
        List<ContextHandled> out = new ArrayList<>();
        for (String[] f : recorded(".contexts")) {
            out.add(new ContextHandled(f[0], Integer.parseInt(f[1]), f[2].equals("-") ? null : f[2]));
        }
        return out;
    }

    /** {@link #sendVersions}: each id's newest accepted version. */
    Map<String, Integer> newestVersions() {
        return Map.copyOf(newestVersion);
    }

    /** One handling as a consumer started with {@code versions true} recorded it: id, header v, payload, attempt. */
    record VersionHandled(String id, String header, String payload, int attempt) {
    }

    /** Every handling the consumers recorded in their {@code .versions} files (a line cut by a kill -9 skipped). */
    List<VersionHandled> versionsHandled() throws IOException {
        List<VersionHandled> out = new ArrayList<>();
        for (String[] f : recorded(".versions")) {
            out.add(new VersionHandled(f[0], f[1], f[2], Integer.parseInt(f[3])));
        }
        return out;
    }

    /**
     * The comma-separated fields of every whole line in the consumers' {@code <record><suffix>} files (a consumer
     * that never wrote one has none; a line a kill -9 cut short is skipped).
     */
    private List<String[]> recorded(String suffix) throws IOException {
        List<String[]> out = new ArrayList<>();
        for (ConsumerProcess consumer : consumers) {
            Path file = Path.of(consumer.record() + suffix);
            if (!Files.exists(file)) {
                continue;
            }
            String[] lines = Files.readString(file, StandardCharsets.UTF_8).split("\n", -1);
            // the last element is empty, or a line a kill -9 cut short
            for (int i = 0; i < lines.length - 1; i++) {
                out.add(lines[i].split(","));
            }
        }
        return out;
    }

    /** Payloads and headers still stored in the topic's slots (envelopes outlive their message only by mistake). */
    long envelopesLeft() {
        long left = 0;
        for (var slot : io.rmq.internal.RmqInternals.redis(sender).keys().slots(sender.topics().get(topic))) {
            left += io.rmq.internal.RmqInternals.redisAdmin(sender).storedEnvelopes(slot).join();
        }
        return left;
    }

    /**
     * Sends {@code total} messages at once (one synchronous send each, on the calling thread), due one after another
     * evenly over {@code span} starting {@code lead} from now: a backlog that keeps falling due while the scenario
     * injects its fault, without a sender that would itself stall on a dead node.
     */
    void sendSpread(int total, Duration lead, Duration span) {
        long first = System.currentTimeMillis() + lead.toMillis();
        int perBatch = 200;
        for (int from = 0; from < total; from += perBatch) {
            List<io.rmq.producer.OutgoingMessage> batch = new ArrayList<>(perBatch);
            long now = System.currentTimeMillis();
            for (int i = from; i < Math.min(total, from + perBatch); i++) {
                long due = first + i * span.toMillis() / total;
                batch.add(io.rmq.producer.OutgoingMessage.rangeMerge(topic, "m-" + i,
                        Duration.ofMillis(Math.max(1, due - now))));
            }
            sender.producer().sendBatch(batch); // throws unless every message was accepted
            for (int i = from; i < Math.min(total, from + perBatch); i++) {
                accepted.add("m-" + i);
            }
        }
    }

    /**
     * Sends batches of {@code perBatch} bodies ({@code m-<i>}, due now) until Redis refuses one as full: every message
     * before that batch is accepted, and of the refused batch those its exception says were stored. Returns that
     * exception (an AssertionError when {@code max} messages went in without one).
     */
    io.rmq.core.RmqRedisFullException fillUntilFull(int perBatch, int max) {
        for (int from = 0; from < max; from += perBatch) {
            List<String> bodies = new ArrayList<>(perBatch);
            for (int i = from; i < from + perBatch; i++) {
                bodies.add("m-" + i);
            }
            try {
                sendNow(bodies);
            }
            catch (io.rmq.core.RmqRedisFullException full) {
                full.storedIndexes().forEach(index -> accepted.add(bodies.get(index)));
                return full;
            }
        }
        throw new AssertionError(name + ": " + max + " messages went in without Redis refusing one");
    }

    /** One synchronous send of {@code body}, due now; true when accepted, false when Redis refused it as full. */
    boolean trySend(String body) {
        try {
            sender.producer().sendRangeMerge(topic, body, Duration.ofMillis(1));
            accepted.add(body);
            return true;
        }
        catch (io.rmq.core.RmqRedisFullException full) {
            return false;
        }
    }

    /**
     * One synchronous send of {@code body}, due now, with a deduplication window; it counts as accepted unless the
     * window dropped it. A send that fails (Redis down, a failover under way) is retried until Redis answers.
     */
    io.rmq.producer.SendResult sendWithWindow(String body, Duration window) {
        while (true) {
            try {
                io.rmq.producer.SendResult result = sender.producer().send(io.rmq.producer.OutgoingMessage
                        .rangeMerge(topic, body, Duration.ofMillis(1)).dedupeFor(window));
                if (!result.deduplicated()) {
                    accepted.add(body);
                }
                return result;
            }
            catch (RuntimeException ex) {
                failedSends.incrementAndGet();
                sleep(100, 0);
            }
        }
    }

    /** Sends {@code body} as a request ({@code RmqReplies}) from the test's engine: the future of its reply. */
    java.util.concurrent.CompletableFuture<String> request(String body, Duration timeout) {
        return sender.replies().request(io.rmq.producer.OutgoingMessage.rangeMerge(topic, body, Duration.ofMillis(1)),
                String.class, timeout, false);
    }

    /** The reply inbox of the test's engine (its requests' replies land there). */
    byte[] replyInbox(String inboxId) {
        return io.rmq.internal.RmqInternals.redis(sender).keys().replyInbox(inboxId);
    }

    /** The inbox id of the test's engine. */
    String inboxId() {
        return sender.replies().inboxId();
    }

    /** The cluster slot (0..16383) of a body of the run's topic: the slot of its topic slot's keys. */
    int clusterSlotOf(String body) {
        int topicSlot = io.rmq.core.internal.SlotRouter.slot(body.getBytes(StandardCharsets.UTF_8), null, slots);
        byte[] key = io.rmq.internal.RmqInternals.redis(sender).keys().slots(sender.topics().get(topic))[topicSlot]
                .store();
        return io.lettuce.core.cluster.SlotHash.getSlot(key);
    }

    /** Sends these bodies at once, due now (one batch, on the calling thread); they count as accepted. */
    void sendNow(List<String> bodies) {
        sender.producer().sendBatch(bodies.stream()
                .map(body -> io.rmq.producer.OutgoingMessage.rangeMerge(topic, body, Duration.ofMillis(1))).toList());
        accepted.addAll(bodies);
    }

    /** The test side's view of the instance registry of the run's prefix (this engine does not take part). */
    io.rmq.instances.RmqInstances instances() {
        return sender.instances();
    }

    void awaitSent(Duration timeout) throws InterruptedException {
        if (sending == null) {
            return; // sent by sendSpread
        }
        sending.join(timeout.toMillis());
        if (sending.isAlive()) {
            throw new AssertionError(name + ": the sender did not finish within " + timeout + " ("
                    + accepted.size() + " accepted, " + failedSends.get() + " failed attempts)");
        }
    }

    /** Send attempts that failed and were retried (a failed attempt's message may have been stored all the same). */
    long failedSendAttempts() {
        return failedSends.get();
    }

    int acceptedCount() {
        return accepted.size();
    }

    /** The ids accepted so far. */
    Set<String> accepted() {
        return Set.copyOf(accepted);
    }

    /** The test side's admin of the run's prefix (cancel, find, stats). */
    io.rmq.admin.RmqAdmin admin() {
        return sender.admin();
    }

    /** Every record line of every consumer so far: id -> how many times handled, and handling times. */
    Records records() throws IOException {
        Map<String, Integer> counts = new HashMap<>();
        List<Handled> times = new ArrayList<>();
        for (ConsumerProcess consumer : consumers) {
            Path file = consumer.record();
            if (!Files.exists(file)) {
                continue;
            }
            try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                String line;
                while ((line = reader.readLine()) != null) {
                    int comma = line.lastIndexOf(',');
                    if (comma <= 0) {
                        continue; // a line cut by a kill -9 mid-write
                    }
                    String id = line.substring(0, comma);
                    counts.merge(id, 1, Integer::sum);
                    times.add(new Handled(id, Long.parseLong(line.substring(comma + 1))));
                }
            }
        }
        return new Records(counts, times);
    }

    record Handled(String id, long atMillis) {
    }

    /** One handling as a consumer started with {@code deliveries true} recorded it. */
    record Handling(String id, long startMillis, int attempt) {
    }

    /** Every handling the consumers recorded in their {@code .deliveries} files (lines cut by a kill -9 skipped). */
    List<Handling> handlings() throws IOException {
        List<Handling> out = new ArrayList<>();
        for (ConsumerProcess consumer : consumers) {
            Path file = Path.of(consumer.record() + ".deliveries");
            if (!Files.exists(file)) {
                continue;
            }
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String[] f = line.split(",");
                if (f.length != 4 || !f[3].startsWith("m-")) {
                    continue;
                }
                out.add(new Handling(f[3], Long.parseLong(f[0]), Integer.parseInt(f[2])));
            }
        }
        return out;
    }

    /** One handling by an ORDERLY consumer. */
    record Interval(String consumer, int slot, long start, long end, int index) {
    }

    /** Every handling by the ORDERLY consumers of the run, by slot, in order of start. */
    Map<Integer, List<Interval>> intervals() throws IOException {
        Map<Integer, List<Interval>> bySlot = new java.util.TreeMap<>();
        for (ConsumerProcess consumer : consumers) {
            Path file = Path.of(consumer.record() + ".intervals");
            if (!Files.exists(file)) {
                continue;
            }
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String[] f = line.split(",");
                if (f.length != 4 || !f[3].startsWith("m-")) {
                    continue; // cut by a kill -9 mid-write
                }
                bySlot.computeIfAbsent(Integer.parseInt(f[0]), s -> new ArrayList<>()).add(new Interval(
                        consumer.record().getFileName().toString(), Integer.parseInt(f[0]), Long.parseLong(f[1]),
                        Long.parseLong(f[2]), Integer.parseInt(f[3].substring(2))));
            }
        }
        bySlot.values().forEach(list -> list.sort(java.util.Comparator.comparingLong(Interval::start)));
        return bySlot;
    }

    /** The longest time any slot went without a handling starting, between {@code from} and {@code to}. */
    long longestGap(long from, long to) throws IOException {
        long worst = 0;
        for (List<Interval> slot : intervals().values()) {
            long last = from;
            for (Interval interval : slot) {
                if (interval.start() > from && interval.start() <= to) {
                    worst = Math.max(worst, interval.start() - last);
                    last = interval.start();
                }
            }
            worst = Math.max(worst, to - last);
        }
        return worst;
    }

    /**
     * What broke ORDERLY's promises, per group (an ORDERLY owner runs the groups of a slot in parallel, each in order):
     * two handlings of one group overlapping in time (except with one that spans {@code exceptAround}, a moment while
     * its consumer was frozen), or a group whose messages were first handled out of their sending order (a
     * redelivery may repeat earlier ones; a message's first handling may not come after a later message's).
     */
    List<String> orderViolations(long exceptAround) throws IOException {
        List<String> violations = new ArrayList<>();
        for (Map.Entry<Integer, List<Interval>> slot : intervals().entrySet()) {
            Map<Integer, List<Interval>> byGroup = new java.util.TreeMap<>();
            for (Interval interval : slot.getValue()) {
                byGroup.computeIfAbsent(interval.index() % groups, g -> new ArrayList<>()).add(interval);
            }
            byGroup.forEach((group, intervals) -> {
                Interval previous = null;
                java.util.Set<Integer> seen = new java.util.HashSet<>();
                int highest = -1;
                for (Interval interval : intervals) {
                    boolean frozen = interval.start() <= exceptAround && interval.end() >= exceptAround
                            || previous != null && previous.start() <= exceptAround && previous.end() >= exceptAround;
                    if (previous != null && interval.start() < previous.end() && !frozen) {
                        violations.add("slot " + slot.getKey() + ", group k-" + group + ": " + previous + " overlaps "
                                + interval);
                    }
                    if (seen.add(interval.index())) {
                        if (interval.index() < highest) {
                            violations.add("slot " + slot.getKey() + ", group k-" + group + ": m-" + interval.index()
                                    + " first handled after m-" + highest);
                        }
                        highest = Math.max(highest, interval.index());
                    }
                    previous = interval.end() > (previous == null ? Long.MIN_VALUE : previous.end()) ? interval
                            : previous;
                }
            });
        }
        return violations;
    }

    record Records(Map<String, Integer> counts, List<Handled> times) {

        int lines() {
            return counts.values().stream().mapToInt(Integer::intValue).sum();
        }

        /** ms from {@code fromMillis} to the first message handled after it, or -1. */
        long firstAfter(long fromMillis) {
            return firstAfter(fromMillis, id -> true);
        }

        /** ms from {@code fromMillis} to the first message with a matching id handled after it, or -1. */
        long firstAfter(long fromMillis, java.util.function.Predicate<String> which) {
            return times.stream().filter(h -> h.atMillis() >= fromMillis && which.test(h.id()))
                    .mapToLong(h -> h.atMillis() - fromMillis).min().orElse(-1);
        }
    }

    /** Waits for the sender to finish ({@code sendTimeout}), then as {@link #awaitAllHandled}. */
    Records finish(Duration sendTimeout, Duration handleTimeout) throws IOException, InterruptedException {
        awaitSent(sendTimeout);
        return awaitAllHandled(handleTimeout);
    }

    /** Waits until every accepted message was handled and Redis holds nothing of the topic (or the timeout). */
    Records awaitAllHandled(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + timeout.toMillis();
        Records records = records();
        while (System.currentTimeMillis() < deadline) {
            records = records();
            if (records.counts().keySet().containsAll(accepted) && leftInRedis() == 0) {
                return records;
            }
            Thread.sleep(250);
        }
        return records;
    }

    /**
     * Has the test side's cluster client load the topology now (after a failover: its own periodic refresh may be
     * seconds away, and a stats call queued for the dead node would wait for the client's timeout).
     */
    void refreshSenderTopology() {
        if (senderClient.client() instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
            cluster.refreshPartitions();
        }
    }

    /** Messages of the topic still waiting or in flight (and dead ones, which no scenario should produce). */
    long leftInRedis() {
        TopicStats stats = sender.admin().stats(topic);
        return stats.pending() + stats.dead();
    }

    /**
     * What every scenario asserts at its end: nothing accepted was lost, nothing is left waiting, in flight or dead,
     * duplicate deliveries at most {@code maxDuplicates}, and no consumer's watchdog reported a stalled listener.
     */
    static void assertNoLossAndClean(FaultRun run, Records records, int maxDuplicates) throws IOException {
        assertThat(run.lost(records)).as("%s: accepted messages never handled", run.name).isZero();
        assertThat(run.leftInRedis()).as("%s: messages left waiting, in flight or dead", run.name).isZero();
        assertThat(records.lines() - records.counts().size()).as("%s: duplicate deliveries", run.name)
                .isLessThanOrEqualTo(maxDuplicates);
        for (ConsumerProcess consumer : run.consumers()) {
            assertThat(consumer.errors().stream().filter(line -> line.contains("were not polled")
                    || line.contains("made no pass") || line.contains("poller thread has died")).toList())
                    .as("%s: watchdog reports of a stalled listener", run.name).isEmpty();
        }
    }

    /** Lost: accepted but never handled. */
    long lost(Records records) {
        return accepted.stream().filter(id -> !records.counts().containsKey(id)).count();
    }

    /** Appends this scenario's figures to the results file (a table row of RELIABILITY.md). */
    void report(Records records, String faults, long resumeMillis) throws IOException {
        String row = String.format("| %s | %s | %d | %d | %d | %d | %d | %s | %s | %.0f |%n", name,
                FaultScenariosTest.LENGTH, accepted.size(), records.counts().size(), lost(records),
                records.lines() - records.counts().size(), failedSends.get(), faults,
                resumeMillis < 0 ? "—" : resumeMillis + " ms", (System.currentTimeMillis() - startedMillis) / 1000.0);
        Path results = Path.of(System.getProperty("rmq.faults.results", "target/reliability-results.md"));
        Files.createDirectories(results.toAbsolutePath().getParent());
        if (!Files.exists(results)) {
            Files.writeString(results, "| scenario | length | sent (accepted) | handled | lost | duplicates"
                    + " | failed send attempts | faults | resumed after | seconds |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |\n");
        }
        Files.writeString(results, row, StandardOpenOption.APPEND);
        System.out.print("[faults] " + row);
    }

    /** Appends a line of figures below the scenario rows of the results file (and prints it). */
    void note(String line) throws IOException {
        Path results = Path.of(System.getProperty("rmq.faults.results", "target/reliability-results.md"));
        Files.createDirectories(results.toAbsolutePath().getParent());
        Files.writeString(results, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        System.out.println("[faults] " + line);
    }

    @Override
    public void close() {
        for (ConsumerProcess consumer : consumers) {
            consumer.close();
        }
        Thread thread = sending;
        if (thread != null) {
            thread.interrupt();
        }
        sender.close();
        senderClient.close();
    }

    private static void sleep(long millis, int nanos) {
        try {
            Thread.sleep(millis, nanos);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }
}
