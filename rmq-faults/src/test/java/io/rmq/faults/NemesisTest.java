package io.rmq.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.rmq.core.internal.SlotRouter;
import io.rmq.test.TcpProxy;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The nemesis: a seeded run of random faults, several at once, against three consumer JVMs while a sender keeps
 * sending, followed by a checker. The seed ({@code nemesis.seed}; several, comma-separated, run one after another)
 * decides the topology (odd: a standalone Redis, each consumer behind a {@link TcpProxy} of its own; even: a 3+3
 * Redis Cluster with replicas; {@code nemesis.redis} overrides) and the whole fault schedule, printed before the
 * run; {@code nemesis.minutes} its length. Faults: consumer kill -9 (replaced after a while), SIGSTOP freeze,
 * graceful restart; on standalone Redis kill -9 + restart (AOF always) and SIGSTOP, and per consumer link through
 * its proxy a stall (bytes held, sockets open), latency on every chunk, or a reset of every connection; on the
 * cluster a master's kill -9 (restarted after its replica's promotion, as a replica) or SIGSTOP.
 * <p>
 * The checker's rules (RELIABILITY.md, "Nemesis"), from the consumers' own records: no accepted message lost;
 * nothing left waiting, in flight or dead at the end; duplicate handlings at most the sum, over the faults, of the
 * deliveries the faulted processes held during the fault (started by a handler and not yet settled in Redis, from
 * each consumer's {@code .held} record; a Redis fault's "processes" are every consumer, for a master only its slots'
 * deliveries) plus the sender's failed attempts (a send whose reply was lost may have stored its message, and its
 * retry stores it again once the first was handled), and message by message: a message handled again was held by a
 * faulted process (those that were not at most the failed send attempts); no gap in handling longer than {@link
 * #STALL_MILLIS} that is not covered by a fault and its recovery bound; no watchdog report of a stalled listener.
 * <p>
 * The default build runs a smoke of it (seed 1, 0.35 minutes); {@code rmq-faults/nemesis 7 20} (that is {@code
 * ./mvnw -pl rmq-faults -am verify -Pnemesis -DskipTests -Dnemesis.seed=7 -Dnemesis.minutes=20}) runs a long one.
 */
class NemesisTest extends FaultSuite {

    private static final double MINUTES = Double.parseDouble(System.getProperty("nemesis.minutes", "0.35"));
    private static final int CONSUMERS = 3;
    private static final int RATE = 200;
    /** Longest gap in handling (while messages fall due) outside every fault and its recovery bound. */
    static final long STALL_MILLIS = 5_000;
    /** A master acknowledges before it replicates: deliveries it settled this shortly before its kill count as held. */
    private static final long REPLICATION_MILLIS = 500;
    private static final Map<String, String> CONSUMER = Map.of("concurrency", "4", "batch", "16", "lease-ms", "2000",
            "command-timeout-ms", "1000", "max-idle-ms", "2000", "ownership-ms", "2000", "handle-ms", "5",
            "held", "true");

    @TempDir
    static Path work;

    enum Kind {
        KILL("kill -9", 5_000), FREEZE("SIGSTOP", 5_000), RESTART("graceful restart", 5_000),
        NET_STALL("link stall", 5_000), NET_LATENCY("link latency", 5_000), NET_RESET("link reset", 5_000),
        REDIS_RESTART("Redis kill -9 + restart", 10_000), REDIS_FREEZE("Redis SIGSTOP", 10_000),
        MASTER_KILL("master kill -9", 15_000), MASTER_FREEZE("master SIGSTOP", 15_000);

        final String words;
        /** How long after the fault's end handling may still pause (a lease, a membership, a failover's refresh). */
        final long recoveryMillis;

        Kind(String words, long recoveryMillis) {
            this.words = words;
            this.recoveryMillis = recoveryMillis;
        }

        boolean onRedis() {
            return this == REDIS_RESTART || this == REDIS_FREEZE || this == MASTER_KILL || this == MASTER_FREEZE;
        }
    }

    /** One planned fault: at {@code atMillis} after the start, on consumer or shard {@code target}. */
    record Fault(int number, long atMillis, Kind kind, int target, long durationMillis, int latencyMillis) {

        String describe() {
            String on = kind.onRedis() ? (kind.name().startsWith("MASTER") ? "shard " + target : "redis")
                    : "c" + target;
            String what = switch (kind) {
                case KILL -> "replaced after " + durationMillis + " ms";
                case FREEZE, NET_STALL, REDIS_FREEZE, MASTER_FREEZE -> durationMillis + " ms";
                case NET_LATENCY -> "0.." + latencyMillis + " ms per chunk for " + durationMillis + " ms";
                case REDIS_RESTART -> "down " + durationMillis + " ms";
                case MASTER_KILL -> "restarted " + durationMillis + " ms after the promotion";
                case RESTART, NET_RESET -> "";
            };
            return String.format(Locale.ROOT, "#%d t+%.1f s %s %s %s", number, atMillis / 1000.0, kind.words, on, what)
                    .trim();
        }
    }

    /** A fault as it happened: its window, and what the processes it hit held during it. */
    record Done(Fault fault, long startMillis, long endMillis, String note) {
    }

    /** The schedule of {@code seed}: reproducible, whatever the machine does with it. */
    static List<Fault> schedule(long seed, long runMillis, boolean cluster) {
        java.util.Random random = new java.util.Random(seed);
        List<Kind> kinds = new ArrayList<>(List.of(Kind.KILL, Kind.FREEZE, Kind.RESTART));
        kinds.addAll(cluster ? List.of(Kind.MASTER_KILL, Kind.MASTER_FREEZE)
                : List.of(Kind.NET_STALL, Kind.NET_LATENCY, Kind.NET_RESET, Kind.REDIS_RESTART, Kind.REDIS_FREEZE));
        long[] busyUntil = new long[CONSUMERS + 1]; // consumers, then Redis
        List<Fault> faults = new ArrayList<>();
        long at = 5_000;
        while (at < runMillis - 10_000) {
            int together = random.nextDouble() < 0.3 ? 2 : 1; // several at once
            for (int f = 0; f < together; f++) {
                Kind kind = kinds.get(random.nextInt(kinds.size()));
                int target = kind.onRedis() ? (cluster ? random.nextInt(3) : 0) : random.nextInt(CONSUMERS);
                int busy = kind.onRedis() ? CONSUMERS : target;
                long duration = switch (kind) {
                    case KILL -> between(random, 500, 3_000);
                    case FREEZE -> between(random, 500, 6_000);
                    case NET_STALL -> between(random, 500, 5_000);
                    case NET_LATENCY -> between(random, 3_000, 10_000);
                    case REDIS_RESTART -> between(random, 500, 3_000);
                    case REDIS_FREEZE, MASTER_FREEZE -> between(random, 500, 4_000);
                    case MASTER_KILL -> between(random, 2_000, 6_000);
                    case RESTART, NET_RESET -> 0;
                };
                int latency = kind == Kind.NET_LATENCY ? (int) between(random, 5, 100) : 0;
                if (busyUntil[busy] > at) {
                    continue; // one fault at a time per consumer and on Redis
                }
                // what executing it may take beyond its duration (a JVM's start, a failover)
                busyUntil[busy] = at + duration + (kind == Kind.MASTER_KILL ? 30_000 : 10_000);
                faults.add(new Fault(faults.size() + 1, at, kind, target, duration, latency));
            }
            at += between(random, 2_000, 8_000);
        }
        return faults;
    }

    private static long between(java.util.Random random, long from, long to) {
        return from + (long) (random.nextDouble() * (to - from));
    }

    /** {@code nemesis.seed}: one seed or several, comma-separated (one run each, one after another). */
    static List<Long> seeds() {
        return java.util.Arrays.stream(System.getProperty("nemesis.seed", "1").split(",")).map(String::trim)
                .map(Long::valueOf).toList();
    }

    /** The topology of {@code seed}'s run: {@code nemesis.redis} if set, else odd seeds standalone, even cluster. */
    static boolean cluster(long seed) {
        return switch (System.getProperty("nemesis.redis", "by-seed")) {
            case "cluster" -> true;
            case "standalone" -> false;
            default -> seed % 2 == 0;
        };
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aSeededRunOfRandomFaultsLosesNothingAndHandlesAgainOnlyWhatTheFaultedProcessesHeld(long seed)
            throws Exception {
        long runMillis = (long) (MINUTES * 60_000);
        boolean onCluster = cluster(seed);
        List<Fault> plan = schedule(seed, runMillis, onCluster);
        StringBuilder printed = new StringBuilder(String.format(Locale.ROOT,
                "[nemesis] seed %d, %s, %.2f min, %d consumers, %d msg/s; schedule:%n", seed,
                onCluster ? "3+3 cluster" : "standalone", MINUTES, CONSUMERS, RATE));
        plan.forEach(f -> printed.append("[nemesis]   ").append(f.describe()).append('\n'));
        System.out.print(printed);
        if (onCluster) {
            try (FaultScenariosTest.ClusterOfSix cluster = FaultScenariosTest.ClusterOfSix.start(work)) {
                try (FaultRun run = new FaultRun("nemesis seed " + seed, work, sender(cluster.seeds()))) {
                    new Nemesis(seed, run, plan, runMillis, null, cluster).go();
                }
            }
        }
        else {
            try (RedisNode redis = RedisNode.start(work, false, "--appendonly", "yes", "--appendfsync", "always");
                    FaultRun run = new FaultRun("nemesis seed " + seed, work, sender(redis))) {
                new Nemesis(seed, run, plan, runMillis, redis, null).go();
            }
        }
    }

    /** One run: the consumers, the faults' execution, the checker. */
    private static final class Nemesis {

        private final long seed;
        private final FaultRun run;
        private final List<Fault> plan;
        private final long runMillis;
        private final RedisNode redis;
        private final FaultScenariosTest.ClusterOfSix cluster;
        private final List<TcpProxy> proxies = new ArrayList<>();
        /** The live process of each consumer index (replaced by kills and restarts), and every one it ever had. */
        private final ConsumerProcess[] live = new ConsumerProcess[CONSUMERS]; // written by the fault of its index
        private final Map<Integer, List<ConsumerProcess>> incarnations = new ConcurrentHashMap<>();
        private final ReentrantLock[] locks = new ReentrantLock[CONSUMERS + 1];
        private final List<Done> done = new CopyOnWriteArrayList<>();
        private final List<String> skipped = new CopyOnWriteArrayList<>();
        private int started;
        private long startMillis;

        Nemesis(long seed, FaultRun run, List<Fault> plan, long runMillis, RedisNode redis,
                FaultScenariosTest.ClusterOfSix cluster) throws IOException {
            this.seed = seed;
            this.run = run;
            this.plan = plan;
            this.runMillis = runMillis;
            this.redis = redis;
            this.cluster = cluster;
            for (int i = 0; i <= CONSUMERS; i++) {
                locks[i] = new ReentrantLock();
            }
            if (redis != null) {
                for (int i = 0; i < CONSUMERS; i++) {
                    proxies.add(new TcpProxy(RedisNode.HOST, redis.port()));
                }
            }
        }

        /** Starts consumer {@code index}'s next process; several may start at once (one JVM start-up each). */
        private ConsumerProcess startConsumer(int index) throws IOException {
            Map<String, String> options = new HashMap<>(CONSUMER);
            if (cluster != null) {
                options.put("cluster", cluster.seedList());
            }
            else {
                options.put("redis", RedisNode.HOST + ":" + proxies.get(index).port());
            }
            int number;
            synchronized (this) {
                number = started++;
            }
            ConsumerProcess consumer;
            for (int attempt = 1;; attempt++) {
                try {
                    consumer = run.consumer("c" + index + "-" + number + (attempt > 1 ? "-" + attempt : ""), options);
                    break;
                }
                catch (IOException ex) {
                    // a JVM that starts while Redis refuses (a cluster down during a master fault) exits; started
                    // again, as a service's supervisor would
                    if (attempt == 5) {
                        throw ex;
                    }
                    System.out.println("[nemesis] consumer c" + index + " failed to start (attempt " + attempt
                            + "), started again: " + ex.getMessage().lines().findFirst().orElse(""));
                    Signals.sleep(1000);
                }
            }
            live[index] = consumer;
            incarnations.computeIfAbsent(index, i -> new CopyOnWriteArrayList<>()).add(consumer);
            return consumer;
        }

        void go() throws Exception {
            try {
                ExecutorService pool = Executors.newCachedThreadPool();
                List<Future<ConsumerProcess>> first = new ArrayList<>();
                for (int i = 0; i < CONSUMERS; i++) {
                    int index = i;
                    first.add(pool.submit(() -> startConsumer(index)));
                }
                for (Future<ConsumerProcess> consumer : first) {
                    consumer.get(2, TimeUnit.MINUTES);
                }
                int total = (int) (RATE * runMillis / 1000);
                startMillis = System.currentTimeMillis();
                run.send(total, RATE);
                List<Future<?>> running = new ArrayList<>();
                for (Fault fault : plan) {
                    long wait = startMillis + fault.atMillis() - System.currentTimeMillis();
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    running.add(pool.submit(() -> {
                        execute(fault);
                        return null;
                    }));
                }
                for (Future<?> future : running) {
                    future.get(5, TimeUnit.MINUTES);
                }
                pool.shutdown();
                run.awaitSent(Duration.ofMillis(Math.max(0, startMillis + runMillis - System.currentTimeMillis())
                        + 180_000));
                long sentAt = System.currentTimeMillis();
                run.refreshSenderTopology();
                FaultRun.Records records = run.awaitAllHandled(Duration.ofMinutes(3));
                check(records, sentAt);
            }
            finally {
                proxies.forEach(TcpProxy::close);
            }
        }

        private void execute(Fault fault) throws Exception {
            int target = fault.kind().onRedis() ? CONSUMERS : fault.target();
            ReentrantLock lock = locks[target];
            if (!lock.tryLock()) {
                skip(fault, "its target is still in an earlier fault");
                return;
            }
            try {
                long start = System.currentTimeMillis();
                String note = "";
                switch (fault.kind()) {
                    case KILL -> {
                        live[fault.target()].kill();
                        Thread.sleep(fault.durationMillis());
                        startConsumer(fault.target());
                    }
                    case FREEZE -> {
                        ConsumerProcess frozen = live[fault.target()];
                        frozen.freeze();
                        Thread.sleep(fault.durationMillis());
                        frozen.thaw();
                    }
                    case RESTART -> {
                        boolean stopped = live[fault.target()].stop(30);
                        note = stopped ? "" : "did not stop within 30 s";
                        startConsumer(fault.target());
                    }
                    case NET_STALL -> {
                        proxies.get(fault.target()).stall(fault.durationMillis());
                        Thread.sleep(fault.durationMillis());
                    }
                    case NET_LATENCY -> {
                        // (a blackhole of a direction, a link that stays dead until the client replaces its
                        // connection, slots in beside these once TcpProxy can swallow bytes: heal at the end)
                        proxies.get(fault.target()).latency(fault.latencyMillis());
                        Thread.sleep(fault.durationMillis());
                        proxies.get(fault.target()).latency(0);
                    }
                    case NET_RESET -> proxies.get(fault.target()).resetAll();
                    case REDIS_RESTART -> {
                        redis.kill();
                        Thread.sleep(fault.durationMillis());
                        redis.restart();
                    }
                    case REDIS_FREEZE -> {
                        redis.freeze();
                        Thread.sleep(fault.durationMillis());
                        redis.thaw();
                    }
                    case MASTER_KILL, MASTER_FREEZE -> note = masterFault(fault);
                }
                if (note.startsWith("skipped")) {
                    skip(fault, note);
                    return;
                }
                long end = System.currentTimeMillis();
                done.add(new Done(fault, start, end, note));
                System.out.printf(Locale.ROOT, "[nemesis] %s: done at t+%.1f s .. t+%.1f s %s%n", fault.describe(),
                        (start - startMillis) / 1000.0, (end - startMillis) / 1000.0, note);
            }
            finally {
                lock.unlock();
            }
        }

        private void skip(Fault fault, String why) {
            skipped.add(fault.describe() + ": " + why);
            System.out.println("[nemesis] skipped " + fault.describe() + ": " + why);
        }

        /** A fault on shard {@code target}'s current master, when its replica is in sync (else skipped). */
        private String masterFault(Fault fault) throws Exception {
            RedisNode a = cluster.masters.get(fault.target());
            RedisNode b = cluster.replicas.get(fault.target());
            RedisNode master = isMaster(a) ? a : b;
            RedisNode replica = master == a ? b : a;
            if (!isMaster(master) || !replicaInSync(master, replica)) {
                return "skipped: the shard has no replica in sync";
            }
            if (fault.kind() == Kind.MASTER_FREEZE) {
                master.freeze();
                Thread.sleep(fault.durationMillis());
                master.thaw();
                return "";
            }
            long killed = System.currentTimeMillis();
            master.kill();
            long deadline = killed + 60_000;
            while (!isMaster(replica) && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            long promoted = System.currentTimeMillis() - killed;
            Thread.sleep(fault.durationMillis());
            master.restart(); // its nodes.conf makes it rejoin, as a replica of the promoted one
            return "(replica promoted after " + promoted + " ms)";
        }

        private static boolean isMaster(RedisNode node) {
            try {
                Object role = call(node, c -> c.role().get(0));
                return "master".equals(String.valueOf(role));
            }
            catch (RuntimeException ex) {
                return false;
            }
        }

        private static boolean replicaInSync(RedisNode master, RedisNode replica) {
            try {
                String info = call(master, c -> c.info("replication"));
                long offset = Long.parseLong(info.replaceAll("(?s).*master_repl_offset:(\\d+).*", "$1"));
                return info.contains("port=" + replica.port() + ",state=online")
                        && call(replica, c -> c.info("replication")).contains("master_link_status:up")
                        && offset > 0;
            }
            catch (RuntimeException ex) {
                return false;
            }
        }

        private static <T> T call(RedisNode node,
                java.util.function.Function<io.lettuce.core.api.sync.RedisCommands<String, String>, T> action) {
            RedisClient client = RedisClient.create(resources, node.uri());
            client.setOptions(io.lettuce.core.ClientOptions.builder().timeoutOptions(
                    io.lettuce.core.TimeoutOptions.enabled(Duration.ofSeconds(2))).build());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                return action.apply(connection.sync());
            }
            finally {
                RedisNode.shutdown(client);
            }
        }

        // ---------------------------------------------------------------- the checker

        /** A delivery in a consumer's hands: from its handler's start to Redis's answer to its settlement. */
        private record InHand(String process, String id, long from, long to) {
        }

        private static List<InHand> inHand(ConsumerProcess process) throws IOException {
            Path file = Path.of(process.record() + ".held");
            List<InHand> out = new ArrayList<>();
            if (!Files.exists(file)) {
                return out;
            }
            Map<String, ArrayList<Long>> open = new HashMap<>();
            String name = process.record().getFileName().toString();
            String[] lines = Files.readString(file, StandardCharsets.UTF_8).split("\n", -1);
            for (int i = 0; i < lines.length - 1; i++) { // the last one is empty, or cut by a kill -9
                String[] f = lines[i].split(",");
                if (f.length < 3) {
                    continue;
                }
                long at = Long.parseLong(f[1]);
                if (f[0].equals("S")) {
                    open.computeIfAbsent(f[2], id -> new ArrayList<>()).add(at);
                }
                else {
                    List<Long> starts = open.get(f[2]);
                    if (starts != null && !starts.isEmpty()) {
                        out.add(new InHand(name, f[2], starts.remove(0), at));
                    }
                }
            }
            open.forEach((id, starts) -> starts.forEach(s -> out.add(new InHand(name, id, s, Long.MAX_VALUE))));
            return out;
        }

        /**
         * The ids of the deliveries the processes the fault hit held during it (for a master kill, also just before:
         * replication), each delivery once.
         */
        private List<String> held(Done d) throws IOException {
            List<ConsumerProcess> hit = new ArrayList<>();
            Predicate<String> ids = id -> true;
            long from = d.startMillis();
            if (d.fault().kind().onRedis()) {
                incarnations.values().forEach(hit::addAll);
                if (cluster != null) {
                    Set<Integer> slots = cluster.slotsOf(d.fault().target());
                    ids = id -> slots.contains(SlotHash.getSlot(run.prefix + ":{" + run.topic + ":"
                            + SlotRouter.slot(id.getBytes(StandardCharsets.UTF_8), run.slots) + "}:store"));
                    if (d.fault().kind() == Kind.MASTER_KILL) {
                        from -= REPLICATION_MILLIS;
                    }
                }
            }
            else {
                hit.addAll(incarnations.get(d.fault().target()));
            }
            List<String> held = new ArrayList<>();
            for (ConsumerProcess process : hit) {
                for (InHand h : inHand(process)) {
                    if (h.from() <= d.endMillis() && h.to() >= from && ids.test(h.id())) {
                        held.add(h.id());
                    }
                }
            }
            return held;
        }

        private void check(FaultRun.Records records, long sentAt) throws IOException {
            List<String> violations = new ArrayList<>();
            long lost = run.lost(records);
            List<String> lostIds = run.accepted().stream().filter(id -> !records.counts().containsKey(id)).sorted()
                    .limit(20).toList();
            if (lost > 0) {
                violations.add(lost + " accepted messages never handled, e.g. " + lostIds);
            }
            long left = run.leftInRedis();
            if (left > 0) {
                violations.add(left + " messages left waiting, in flight or dead at the end");
            }
            long duplicates = records.lines() - records.counts().size();
            long budget = run.failedSendAttempts();
            StringBuilder perFault = new StringBuilder();
            Map<Kind, Integer> byKind = new java.util.EnumMap<>(Kind.class);
            Set<String> anyHeld = new java.util.HashSet<>();
            for (Done d : done) {
                List<String> held = held(d);
                budget += held.size();
                anyHeld.addAll(held);
                byKind.merge(d.fault().kind(), 1, Integer::sum);
                long again = held.stream().distinct().filter(id -> records.counts().getOrDefault(id, 0) > 1).count();
                perFault.append(String.format(Locale.ROOT, "[nemesis]   %s: t+%.1f..%.1f s, held %d, of them"
                                + " handled more than once %d %s%n", d.fault().describe(),
                        (d.startMillis() - startMillis) / 1000.0, (d.endMillis() - startMillis) / 1000.0, held.size(),
                        again, d.note()));
            }
            if (duplicates > budget) {
                violations.add(duplicates + " duplicate handlings, more than the " + budget
                        + " the faulted processes held (+ failed send attempts)");
            }
            // and message by message: a message handled again must have been in the hands of a faulted process
            // (or be one a failed send attempt may have stored twice)
            Map<String, Integer> unheld = new java.util.TreeMap<>();
            records.counts().forEach((id, count) -> {
                if (count > 1 && !anyHeld.contains(id)) {
                    unheld.put(id, count);
                }
            });
            long unheldDuplicates = unheld.values().stream().mapToLong(c -> c - 1).sum();
            if (unheldDuplicates > run.failedSendAttempts()) {
                violations.add(unheldDuplicates + " duplicate handlings of messages no faulted process held (more than"
                        + " the " + run.failedSendAttempts() + " failed send attempts), e.g. "
                        + unheld.entrySet().stream().limit(10).toList());
            }
            // gaps in handling while messages fell due, outside every fault and its recovery bound
            List<Long> times = records.times().stream().map(FaultRun.Handled::atMillis)
                    .filter(t -> t >= startMillis).sorted().toList();
            long longestOutside = 0;
            long longestGap = 0;
            String stall = "";
            for (int i = 1; i < times.size(); i++) {
                long a = times.get(i - 1);
                long b = Math.min(times.get(i), sentAt);
                if (a >= sentAt) {
                    break;
                }
                longestGap = Math.max(longestGap, b - a);
                long uncovered = longestUncovered(a, b);
                if (uncovered > longestOutside) {
                    longestOutside = uncovered;
                    stall = String.format(Locale.ROOT, "t+%.1f s .. t+%.1f s", (a - startMillis) / 1000.0,
                            (b - startMillis) / 1000.0);
                }
            }
            if (longestOutside > STALL_MILLIS) {
                violations.add("no message handled for " + longestOutside + " ms outside every fault (" + stall + ")");
            }
            for (ConsumerProcess consumer : run.consumers()) {
                List<String> reports = consumer.errors().stream().filter(line -> line.contains("were not polled")
                        || line.contains("made no pass") || line.contains("poller thread has died")).toList();
                if (!reports.isEmpty()) {
                    violations.add("watchdog reports of a stalled listener: " + reports);
                }
            }
            String summary = String.format(Locale.ROOT, "nemesis seed %d (%s, %.2f min): %d faults done %s, %d"
                            + " skipped; sent %d, handled %d, lost %d, duplicates %d (bound %d: held %d + failed send"
                            + " attempts %d; of messages no faulted process held %d), left in Redis %d, longest pause"
                            + " outside faults %d ms (%s), longest pause of all %d ms%s", seed,
                    cluster != null ? "3+3 cluster" : "standalone", MINUTES, done.size(), byKind, skipped.size(),
                    run.acceptedCount(), records.counts().size(), lost,
                    duplicates, budget, budget - run.failedSendAttempts(), run.failedSendAttempts(), unheldDuplicates,
                    left, longestOutside, stall, longestGap, violations.isEmpty() ? "" : "; VIOLATIONS: " + violations);
            System.out.print("[nemesis] faults as done:\n" + perFault);
            if (!unheld.isEmpty()) {
                System.out.println("[nemesis] handled more than once, held by no faulted process (id=times): "
                        + unheld.entrySet().stream().limit(20).toList());
            }
            run.note(summary);
            assertThat(violations).as("the nemesis checker (seed %d): %s", seed, summary).isEmpty();
        }

        /** The longest stretch of [a, b] that no fault's window (plus its recovery bound) covers. */
        private long longestUncovered(long a, long b) {
            List<long[]> covers = new ArrayList<>();
            for (Done d : done) {
                covers.add(new long[] {d.startMillis(), d.endMillis() + d.fault().kind().recoveryMillis});
            }
            covers.sort((x, y) -> Long.compare(x[0], y[0]));
            long longest = 0;
            long at = a;
            for (long[] c : covers) {
                if (c[1] <= at) {
                    continue;
                }
                if (c[0] >= b) {
                    break;
                }
                longest = Math.max(longest, Math.max(0, c[0] - at));
                at = Math.max(at, c[1]);
            }
            return Math.max(longest, Math.max(0, b - at));
        }
    }
}
