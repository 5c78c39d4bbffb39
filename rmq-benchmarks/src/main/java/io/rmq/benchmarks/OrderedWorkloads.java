package io.rmq.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.TopicStats;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.internal.SlotRouter;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;

/**
 * RMQ-only workloads of ORDERLY consumption (issue 13), run by {@code BenchmarkMain --workload ordered} through
 * {@link RmqPeer} like the W1-W3 workloads (one process per workload):
 * <ul>
 * <li>{@code ordered-consume --mode ORDERLY|CONCURRENT [--slots 16] [--keys 1000] [--instances 2]
 * [--work-micros 0] [--work sleep|spin] [--store-group true|false]}: {@code --instances} instances (each its own
 * {@link Rmq} engine and Lettuce client) at {@code --concurrency} each consume a backlog of N ~100-byte messages on a
 * FIXED_TIME topic of {@code --slots} slots, sent in {@code --keys} groups ({@code withGroup}, after the listeners'
 * mode is declared, so an engine that stores the group of ORDERLY messages stores it; {@code --store-group false}:
 * before the mode is declared, so the messages go without it, in their slot's common lane, handled slot by slot); the
 * clock runs from the containers' start to the N-th distinct message handled. The handler spends
 * {@code --work-micros} per message (sleeping, or busy-spinning with {@code --work spin}) and counts per-key order
 * violations (a message whose handling starts after that of a later one of its key) and overlaps (a message whose
 * handling starts while another of its key is being handled).</li>
 * <li>{@code takeover}: a survivor instance (this process) and a victim instance (an {@link OrderedVictim} JVM) share
 * a 16-slot topic in ORDERLY mode while a sender sends one message to every slot every 10 ms; the victim is killed
 * with SIGKILL ({@code Process.destroyForcibly()}), and the time from the kill to the first message of one of the
 * victim's slots handled by the survivor is measured; {@code --kills} times, a new victim each time.</li>
 * </ul>
 */
public final class OrderedWorkloads {

    /** The takeover workload's message: the slot it was sent to and when. */
    public record Tick(long id, int slot, long sentAt) {
    }

    static final String TOPIC = "bench-ordered";
    static final String WARM_TOPIC = "bench-ordered-warmup";
    static final String TAKEOVER_TOPIC = "bench-takeover";
    static final int SLOTS = 16;
    /** Slot bases of the backlog: "acct-0" .. "acct-999". */
    static final int KEYS = 1_000;
    static final int INSTANCES = 2;
    static final int SEND_EVERY_MILLIS = 10;

    private OrderedWorkloads() {
    }

    /** One consumer instance: its own Lettuce client and engine. */
    record Instance(RedisClient client, Rmq rmq) implements AutoCloseable {

        static Instance connect(String host, int port) {
            RedisClient client = RedisClient.create(RedisURI.create(host, port));
            try {
                return new Instance(client, Rmq.create(client, RmqOptions.DEFAULT));
            }
            catch (RuntimeException ex) {
                client.shutdown();
                throw ex;
            }
        }

        @Override
        public void close() {
            try {
                rmq.close();
            }
            finally {
                client.shutdown();
            }
        }
    }

    static ConsumerSettings settings() {
        return new ConsumerSettings(64, Duration.ofSeconds(30), RetryPolicy.DEFAULT);
    }

    static ContainerOptions options(String id, int concurrency, ConsumeMode mode, Duration ownershipTimeout) {
        return new ContainerOptions(id, concurrency, Duration.ofSeconds(30), Duration.ofSeconds(10), null)
                .withMode(mode).withOwnershipTimeout(ownershipTimeout);
    }

    // ------------------------------------------------------------------ ordered vs concurrent throughput

    /**
     * What a handler spends per message ({@code --work-micros}, {@code --work sleep|spin}): ORDERLY's parallelism
     * (across slots, or across groups) shows only when handling takes time. Immutable; called on handler threads.
     */
    record Work(long micros, boolean spin) {

        static Work of(PeerArgs args) {
            String how = args.option("work", "sleep");
            if (!how.equals("sleep") && !how.equals("spin")) {
                throw new IllegalArgumentException("--work sleep|spin, not " + how);
            }
            return new Work(args.intOption("work-micros", 0), how.equals("spin"));
        }

        void spend() {
            if (micros <= 0) {
                return;
            }
            long end = System.nanoTime() + micros * 1_000;
            for (long left = micros * 1_000; left > 0; left = end - System.nanoTime()) {
                if (!spin) {
                    LockSupport.parkNanos(left); // may return early (spuriously): the loop parks the rest
                }
            }
        }
    }

    /** What the handlers of one consume run saw. Shared by the handler threads of every instance (atomics). */
    static final class Tally {

        final int n;
        final int keys;
        final Work work;
        final AtomicInteger handled = new AtomicInteger();
        final AtomicInteger distinct = new AtomicInteger();
        final AtomicInteger violations = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();
        final AtomicIntegerArray seen;
        /** Highest id whose handling started so far, per key. */
        final AtomicLongArray highest;
        /** Messages being handled now, per key (more than one: a group handled in parallel with itself). */
        final AtomicIntegerArray busy;
        final CountDownLatch done = new CountDownLatch(1);
        volatile long lastNanos;

        Tally(int n, int keys, Work work) {
            this.n = n;
            this.keys = keys;
            this.work = work;
            this.seen = new AtomicIntegerArray(n);
            this.highest = new AtomicLongArray(keys);
            this.busy = new AtomicIntegerArray(keys);
            for (int k = 0; k < keys; k++) {
                highest.set(k, -1);
            }
        }

        void handle(RmqPeer.Payload p, Delivery d) {
            int key = (int) (p.id() % keys);
            // checked when handling starts: an overtaking message is caught even when it finishes last
            if (highest.getAndAccumulate(key, p.id(), Math::max) > p.id()) {
                violations.incrementAndGet();
            }
            if (busy.incrementAndGet(key) > 1) {
                overlaps.incrementAndGet();
            }
            try {
                work.spend();
            }
            finally {
                busy.decrementAndGet(key);
            }
            handled.incrementAndGet();
            if (p.id() < n && seen.getAndSet((int) p.id(), 1) == 0 && distinct.incrementAndGet() == n) {
                lastNanos = System.nanoTime();
                done.countDown();
            }
        }
    }

    /** The backlog: ids 0..n-1, group "acct-(id % keys)", due times in the past in id order (per key too). */
    static void fill(Rmq rmq, String topic, long firstId, int n, int keys) {
        long base = System.currentTimeMillis() - 60_000 - n;
        List<OutgoingMessage> chunk = new ArrayList<>(10_000);
        List<CompletableFuture<?>> inFlight = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long id = firstId + i;
            chunk.add(OutgoingMessage.fixedTime(topic, new RmqPeer.Payload(id, PeerArgs.FILLER),
                    Instant.ofEpochMilli(base + i)).withGroup("acct-" + (id % keys)));
            if (chunk.size() == 10_000 || i == n - 1) {
                inFlight.add(rmq.producer().sendBatchAsync(chunk));
                chunk = new ArrayList<>(10_000);
            }
        }
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
    }

    static String consume(PeerArgs args) throws Exception {
        ConsumeMode mode = ConsumeMode.valueOf(args.option("mode", "ORDERLY").toUpperCase(Locale.ROOT));
        Duration ownership = Duration.ofMillis(args.intOption("ownership-ms", 5_000));
        int n = args.messages();
        int slots = args.intOption("slots", SLOTS);
        int keys = args.intOption("keys", KEYS);
        int instanceCount = args.intOption("instances", INSTANCES);
        Work work = Work.of(args);
        boolean storeGroup = Boolean.parseBoolean(args.option("store-group", "true"));
        List<Instance> instances = new ArrayList<>();
        try {
            for (int i = 0; i < instanceCount; i++) {
                Instance instance = Instance.connect(args.host(), args.port());
                instances.add(instance);
                instance.rmq().defineTopic(TOPIC, TopicType.FIXED_TIME, slots);
                // the listeners' mode before the backlog: a sender stores an ORDERLY message's group only when it
                // knows the topic is ORDERLY (the containers below declare it too, but only after the backlog);
                // --store-group false leaves it undeclared, so the backlog goes without its groups: the slot-serial
                // common lane of the same engine, what the groups' cost is measured against
                if (storeGroup) {
                    instance.rmq().declareConsumeMode(TOPIC, mode);
                }
            }
            if (args.warmupSeconds() > 0) {
                warmUp(instances, mode, ownership, args, slots, keys);
            }
            long fillStart = System.nanoTime();
            fill(instances.get(0).rmq(), TOPIC, 0, n, keys);
            System.err.printf(Locale.ROOT, "rmq-peer: backlog of %d sent in %d ms (%s, %d slots, %d keys, %d"
                    + " instance(s) x concurrency %d, handler %d us %s)%n", n,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fillStart), mode, slots, keys, instanceCount,
                    args.concurrency(), work.micros(), work.spin() ? "spin" : "sleep");

            Tally tally = new Tally(n, keys, work);
            MessageHandler<RmqPeer.Payload> handler = tally::handle;
            List<ListenerContainer> containers = new ArrayList<>();
            for (Instance instance : instances) {
                containers.add(instance.rmq().container(TOPIC, settings(), RmqPeer.Payload.class, handler,
                        options("bench-ordered", args.concurrency(), mode, ownership)));
            }
            RmqPeer.measuring(); // the consumption, not the backlog's sending
            long cpuStart = RmqPeer.processCpuNanos();
            long start = System.nanoTime();
            containers.forEach(ListenerContainer::start);
            long deadline = start + TimeUnit.SECONDS.toNanos(args.seconds());
            long settledNanos = mode == ConsumeMode.ORDERLY ? -1 : start;
            int handledAtSettle = 0;
            while (!tally.done.await(5, TimeUnit.MILLISECONDS) && System.nanoTime() < deadline) {
                if (settledNanos < 0 && shared(containers, slots)) {
                    settledNanos = System.nanoTime();
                    handledAtSettle = tally.distinct.get();
                }
            }
            // the process's CPU over the consumption (both instances run here): steadier than the rate on a small
            // machine, where a round's rate moves with whatever else the host runs
            long cpu = RmqPeer.processCpuNanos() - cpuStart;
            boolean complete = tally.done.getCount() == 0;
            long end = complete ? tally.lastNanos : System.nanoTime();
            int count = tally.distinct.get();
            containers.forEach(ListenerContainer::stop);
            double seconds = (end - start) / 1e9;
            double steady = settledNanos < 0 || end <= settledNanos ? Double.NaN
                    : (count - handledAtSettle) / ((end - settledNanos) / 1e9);
            return String.format(Locale.ROOT, "{\"rate\":%.1f,\"count\":%d,\"handled\":%d,\"violations\":%d,"
                    + "\"overlaps\":%d,\"settle\":%d,\"steady\":%.1f,\"seconds\":%.3f,\"slots\":%d,\"keys\":%d,"
                    + "\"instances\":%d,\"workMicros\":%d,\"cpuUsPerMsg\":%.3f}", count / seconds, count,
                    tally.handled.get(), tally.violations.get(), tally.overlaps.get(),
                    settledNanos < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(settledNanos - start), steady, seconds,
                    slots, keys, instanceCount, work.micros(), count == 0 ? 0.0 : cpu / 1e3 / count);
        }
        finally {
            for (Instance instance : instances) {
                instance.close();
            }
        }
    }

    /** ORDERLY: every instance owns its share (slots / instances, or one more) and together they own every slot. */
    static boolean shared(List<ListenerContainer> containers, int slots) {
        int least = slots / containers.size();
        int most = least + (slots % containers.size() == 0 ? 0 : 1);
        Set<Integer> all = new TreeSet<>();
        for (ListenerContainer c : containers) {
            Set<Integer> mine = ((OrderlyListenerContainer) c).ownedSlots();
            if (mine.size() < least || mine.size() > most) {
                return false;
            }
            all.addAll(mine);
        }
        return all.size() == slots;
    }

    /**
     * As PROTOCOL.md's warm-up, in the measured mode: both instances' containers run on a topic of their own while
     * rounds of 2,000 messages go in, for {@code --warmup-seconds}; then they stop and the topic's keys are deleted.
     */
    static void warmUp(List<Instance> instances, ConsumeMode mode, Duration ownership, PeerArgs args, int slots,
            int keys) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(args.warmupSeconds());
        AtomicInteger handled = new AtomicInteger();
        List<ListenerContainer> containers = new ArrayList<>();
        for (Instance instance : instances) {
            instance.rmq().defineTopic(WARM_TOPIC, TopicType.FIXED_TIME, slots);
            containers.add(instance.rmq().container(WARM_TOPIC, settings(), RmqPeer.Payload.class,
                    (RmqPeer.Payload p, Delivery d) -> handled.incrementAndGet(),
                    options("bench-ordered-warmup", args.concurrency(), mode, ownership)));
        }
        containers.forEach(ListenerContainer::start);
        int sent = 0;
        while (System.nanoTime() < deadline) {
            fill(instances.get(0).rmq(), WARM_TOPIC, sent, 2_000, keys);
            sent += 2_000;
            Thread.sleep(20);
        }
        long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (handled.get() < sent && System.nanoTime() < wait) {
            Thread.sleep(10);
        }
        containers.forEach(ListenerContainer::stop);
        Rmq rmq = instances.get(0).rmq();
        try (var connection = instances.get(0).client().connect()) {
            var redis = connection.sync();
            var warmKeys = redis.keys(rmq.options().keyPrefix() + ":{" + WARM_TOPIC + "*");
            if (!warmKeys.isEmpty()) {
                redis.del(warmKeys.toArray(String[]::new));
            }
            redis.hdel(rmq.options().keyPrefix() + ":topics", WARM_TOPIC);
        }
        System.err.println("rmq-peer: warmed up (" + mode + ") with " + handled.get() + " of " + sent + " handled");
    }

    // ------------------------------------------------------------------ takeover after a kill

    /** One slot basis per slot of a 16-slot topic ("key-j" for the first j that routes there). */
    static String[] basisPerSlot(int slots) {
        String[] basis = new String[slots];
        int found = 0;
        for (int j = 0; found < slots; j++) {
            String candidate = "key-" + j;
            int slot = SlotRouter.slot(candidate.getBytes(StandardCharsets.UTF_8), slots);
            if (basis[slot] == null) {
                basis[slot] = candidate;
                found++;
            }
        }
        return basis;
    }

    /** The victim JVM and the slots it last said it owns. */
    static final class Victim {

        final Process process;
        volatile Set<Integer> owned = Set.of();
        final List<String> tail = Collections.synchronizedList(new ArrayList<>());

        Victim(Process process) {
            this.process = process;
            Thread reader = new Thread(this::read, "victim-output");
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith("OWNED")) {
                        Set<Integer> slots = new TreeSet<>();
                        for (String s : line.substring(5).trim().split(",")) {
                            if (!s.isBlank()) {
                                slots.add(Integer.parseInt(s.trim()));
                            }
                        }
                        owned = slots;
                    }
                    else {
                        tail.add(line);
                        if (tail.size() > 20) {
                            tail.remove(0);
                        }
                    }
                }
            }
            catch (IOException ex) {
                // the victim was killed
            }
        }
    }

    static Victim startVictim(PeerArgs args, long ownershipMillis) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(List.of(args.option("victim-jvm-opts", "-Xmx256m -XX:TieredStopAtLevel=1").trim().split("\\s+")));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), OrderedVictim.class.getName(),
                args.host(), Integer.toString(args.port()), TAKEOVER_TOPIC, Long.toString(ownershipMillis),
                Integer.toString(args.concurrency())));
        return new Victim(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    static String takeover(PeerArgs args) throws Exception {
        int kills = args.intOption("kills", 10);
        long ownershipMillis = args.intOption("ownership-ms", 2_000);
        String[] basis = basisPerSlot(SLOTS);
        AtomicLongArray firstAfterKill = new AtomicLongArray(SLOTS);
        AtomicLong killNanos = new AtomicLong(Long.MAX_VALUE);
        AtomicLong handled = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        AtomicInteger sendFailures = new AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean sending = new java.util.concurrent.atomic.AtomicBoolean(true);
        long[] first = new long[kills];
        long[] all = new long[kills];
        int done = 0;
        try (Instance survivor = Instance.connect(args.host(), args.port());
                Instance producer = Instance.connect(args.host(), args.port())) {
            survivor.rmq().defineTopic(TAKEOVER_TOPIC, TopicType.FIXED_TIME, SLOTS);
            producer.rmq().defineTopic(TAKEOVER_TOPIC, TopicType.FIXED_TIME, SLOTS);
            producer.rmq().declareConsumeMode(TAKEOVER_TOPIC, ConsumeMode.ORDERLY); // the sender stores the group
            MessageHandler<Tick> handler = (Tick t, Delivery d) -> {
                handled.incrementAndGet();
                long now = System.nanoTime();
                if (now >= killNanos.get()) {
                    firstAfterKill.compareAndSet(d.slot(), 0, now);
                }
            };
            OrderlyListenerContainer container = (OrderlyListenerContainer) survivor.rmq().container(TAKEOVER_TOPIC,
                    settings(), Tick.class, handler, options("bench-takeover", args.concurrency(),
                            ConsumeMode.ORDERLY, Duration.ofMillis(ownershipMillis)));
            container.start();

            // one message to every slot every 10 ms, due now
            Thread sender = new Thread(() -> {
                long id = 0;
                while (sending.get()) {
                    long now = System.currentTimeMillis();
                    List<OutgoingMessage> batch = new ArrayList<>(SLOTS);
                    for (int slot = 0; slot < SLOTS; slot++) {
                        batch.add(OutgoingMessage.fixedTime(TAKEOVER_TOPIC, new Tick(id++, slot, now),
                                Instant.ofEpochMilli(now)).withGroup(basis[slot]));
                    }
                    try {
                        producer.rmq().producer().sendBatch(batch);
                        sent.addAndGet(SLOTS);
                    }
                    catch (RuntimeException ex) {
                        if (sendFailures.incrementAndGet() <= 3) {
                            System.err.println("rmq-peer: a send failed: " + ex);
                        }
                    }
                    try {
                        Thread.sleep(Math.max(1, SEND_EVERY_MILLIS - (System.currentTimeMillis() - now)));
                    }
                    catch (InterruptedException ex) {
                        return;
                    }
                }
            }, "sender");
            sender.start();
            try {
                for (int k = 0; k < kills; k++) {
                    long started = System.nanoTime();
                    Victim victim = startVictim(args, ownershipMillis);
                    Set<Integer> victimSlots;
                    try {
                        long settleBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                        while (true) {
                            victimSlots = victim.owned;
                            Set<Integer> mine = container.ownedSlots();
                            if (victimSlots.size() == SLOTS / 2 && mine.size() == SLOTS / 2
                                    && Collections.disjoint(victimSlots, mine)) {
                                break;
                            }
                            if (System.nanoTime() > settleBy || !victim.process.isAlive()) {
                                victim.tail.forEach(l -> System.err.println("  victim | " + l));
                                throw new IllegalStateException("kill " + (k + 1) + ": slots not shared 8/8 (victim "
                                        + victimSlots + ", survivor " + mine + ")");
                            }
                            Thread.sleep(10);
                        }
                        System.err.printf(Locale.ROOT, "rmq-peer: kill %d: victim started, slots shared 8/8 after %d ms%n",
                                k + 1, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
                        Thread.sleep(500); // both handle their slots for a while
                        victimSlots = victim.owned;
                        Set<Integer> mine = container.ownedSlots();
                        if (victimSlots.size() + mine.size() != SLOTS || !Collections.disjoint(victimSlots, mine)) {
                            throw new IllegalStateException("kill " + (k + 1) + ": the slots moved before the kill"
                                    + " (victim " + victimSlots + ", survivor " + mine + ")");
                        }
                        for (int slot = 0; slot < SLOTS; slot++) {
                            firstAfterKill.set(slot, 0);
                        }
                        killNanos.set(System.nanoTime());
                        victim.process.destroyForcibly();
                        victim.process.waitFor(10, TimeUnit.SECONDS);
                    }
                    finally {
                        victim.process.destroyForcibly();
                    }
                    long limit = killNanos.get() + TimeUnit.MILLISECONDS.toNanos(ownershipMillis * 5 + 10_000);
                    while (victimSlots.stream().anyMatch(s -> firstAfterKill.get(s) == 0) && System.nanoTime() < limit) {
                        Thread.sleep(5);
                    }
                    long kill = killNanos.get();
                    killNanos.set(Long.MAX_VALUE);
                    long[] after = victimSlots.stream().mapToLong(firstAfterKill::get).toArray();
                    if (Arrays.stream(after).anyMatch(t -> t == 0)) {
                        throw new IllegalStateException("kill " + (k + 1) + ": slots " + victimSlots
                                + " not all taken over within " + (ownershipMillis * 5 + 10_000) + " ms");
                    }
                    first[k] = TimeUnit.NANOSECONDS.toMillis(Arrays.stream(after).min().orElseThrow() - kill);
                    all[k] = TimeUnit.NANOSECONDS.toMillis(Arrays.stream(after).max().orElseThrow() - kill);
                    done++;
                    System.err.printf(Locale.ROOT, "rmq-peer: kill %d: victim slots %s; first handled by the survivor"
                            + " after %d ms, all after %d ms%n", k + 1, victimSlots, first[k], all[k]);
                }
            }
            finally {
                sending.set(false); // not an interrupt: that would fail the send under way
                sender.join(5_000);
            }
            // everything sent is handled: nothing waiting or in flight (the victims' share included)
            long drainBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(ownershipMillis / 1000 * 3 + 10);
            TopicStats stats = survivor.rmq().admin().stats(TAKEOVER_TOPIC);
            while (stats.pending() > 0 && System.nanoTime() < drainBy) {
                Thread.sleep(20);
                stats = survivor.rmq().admin().stats(TAKEOVER_TOPIC);
            }
            container.stop();
            long[] f = Arrays.copyOf(first, done);
            long[] a = Arrays.copyOf(all, done);
            Arrays.sort(f);
            Arrays.sort(a);
            return String.format(Locale.ROOT, "{\"p50\":%d,\"max\":%d,\"min\":%d,\"allP50\":%d,\"allMax\":%d,"
                    + "\"kills\":%d,\"sent\":%d,\"survivorHandled\":%d,\"left\":%d,\"dead\":%d,\"sendFailures\":%d}",
                    RmqPeer.percentile(f, 50), f[f.length - 1], f[0], RmqPeer.percentile(a, 50), a[a.length - 1], done, sent.get(), handled.get(),
                    stats.pending(), stats.dead(), sendFailures.get());
        }
    }
}
