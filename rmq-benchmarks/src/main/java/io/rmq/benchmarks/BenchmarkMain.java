package io.rmq.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TestRedisServers;

/**
 * Runs workloads W1-W3 (DESIGN.md) for RMQ and each available peer on one fresh Redis on loopback, each figure over
 * several runs, and prints (and writes) a table of medians, ranges and RMQ/peer ratios. Every workload runs in its
 * own peer process (PROTOCOL.md); Redis is flushed before each. {@code --workload ordered} runs the RMQ-only ORDERLY
 * workloads instead ({@link OrderedWorkloads}: ORDERLY vs CONCURRENT consume throughput, takeover after a kill).
 * {@code --propagate-context true} runs RMQ with trace context propagation on (see {@link RmqPeer}), {@code --sampling P}
 * with a share P of sampled traces.
 * {@code --workload scaling} runs RMQ's W1B and W1C on standalone Redis and on a 3-master Redis Cluster with 1 and 2
 * consumer JVMs ({@link ScalingWorkloads}). {@code --workload waited} runs RMQ's waited {@code sendBatch} against
 * Redisson's {@code addAll} on standalone Redis and on a 3-master Redis Cluster ({@link WaitedWorkloads}).
 */
public final class BenchmarkMain {

    /** A peer process: its command, why it cannot run (null: it can), and arguments added after the workload's. */
    record Peer(String name, List<String> command, String missing, List<String> args) {

        Peer(String name, List<String> command, String missing) {
            this(name, command, missing, List.of());
        }
    }

    /**
     * RMQ variants run only when {@code --peers} names them, beside plain RMQ in the same run: with its Micrometer
     * meters, its observations, or both on (as with Spring Boot Actuator: a SimpleMeterRegistry, observations recorded
     * as timers, no tracer), and with trace context propagation on.
     */
    static final Map<String, List<String>> RMQ_VARIANTS = new java.util.TreeMap<>(Map.of(
            "RMQ+metrics", List.of("--ops", "metrics"), "RMQ+obs", List.of("--ops", "observations"),
            "RMQ+ops", List.of("--ops", "metrics,observations"), "RMQ+ctx", List.of("--propagate-context", "true"),
            "RMQ+ctx10", List.of("--propagate-context", "true", "--sampling", "0.1")));

    /** One figure: its label, unit, and whether higher is better. */
    enum Metric {
        W1A_BATCH("W1A produce, batch API", "msgs/s", true),
        W1A_SINGLE("W1A produce, one at a time (async)", "msgs/s", true),
        W1A_BATCH_REDIS("W1A produce, batch API: Redis CPU per message", "µs", false),
        W1A_SINGLE_REDIS("W1A produce, one at a time: Redis CPU per message", "µs", false),
        W1A_WAITED_100("W1A produce, batches of 100, each waited for", "msgs/s", true),
        W1A_WAITED_1000("W1A produce, batches of 1,000, each waited for", "msgs/s", true),
        W1A_WAITED_10000("W1A produce, batches of 10,000, each waited for", "msgs/s", true),
        W1A_WAITED_100_REDIS("W1A batches of 100 waited: Redis CPU per message", "µs", false),
        W1A_WAITED_1000_REDIS("W1A batches of 1,000 waited: Redis CPU per message", "µs", false),
        W1A_WAITED_10000_REDIS("W1A batches of 10,000 waited: Redis CPU per message", "µs", false),
        W1A_WAITED_100_CLIENT("W1A batches of 100 waited: client CPU per message", "µs", false),
        W1A_WAITED_1000_CLIENT("W1A batches of 1,000 waited: client CPU per message", "µs", false),
        W1A_WAITED_10000_CLIENT("W1A batches of 10,000 waited: client CPU per message", "µs", false),
        W1A_SYNC_1("W1A synchronous sends, 1 thread", "msgs/s", true),
        W1A_SYNC_8("W1A synchronous sends, 8 threads", "msgs/s", true),
        W1A_SYNC_64("W1A synchronous sends, 64 threads", "msgs/s", true),
        W1A_SYNC_1_REDIS("W1A synchronous sends, 1 thread: Redis CPU per message", "µs", false),
        W1A_SYNC_8_REDIS("W1A synchronous sends, 8 threads: Redis CPU per message", "µs", false),
        W1A_SYNC_64_REDIS("W1A synchronous sends, 64 threads: Redis CPU per message", "µs", false),
        W1B_CONSUME("W1B consume, concurrency 8", "msgs/s", true),
        W1B_REDIS("W1B consume: Redis CPU per message", "µs", false),
        W1C_BOTH("W1C produce + consume at once", "msgs/s", true),
        W1C_REDIS("W1C produce + consume: Redis CPU per message", "µs", false),
        W2_BYTES("W2 Redis memory per queued message", "bytes", false),
        W3_P50("W3 lateness p50", "ms", false),
        W3_P99("W3 lateness p99", "ms", false),
        W3_MAX("W3 lateness max", "ms", false),
        W3_IDLE("W3 idle consumer Redis commands", "cmds/s", false),
        W3_WAKE_P50("W3 idle listener, send to handler p50 (RMQ only)", "ms", false),
        W3_WAKE_P99("W3 idle listener, send to handler p99 (RMQ only)", "ms", false);

        final String label;
        final String unit;
        final boolean higherIsBetter;

        Metric(String label, String unit, boolean higherIsBetter) {
            this.label = label;
            this.unit = unit;
            this.higherIsBetter = higherIsBetter;
        }
    }

    /** The RMQ-only figures of {@code --workload ordered} (ORDERLY consumption, issue 13). */
    enum OrderedMetric {
        ORDERED("Ordered consume, 2 instances × concurrency 8, ORDERLY", "msgs/s"),
        CONCURRENT("Ordered consume workload in CONCURRENT mode (same backlog, 2 × 8)", "msgs/s"),
        RATIO("ORDERLY / CONCURRENT (per run)", "×"),
        ORDERED_SETTLE("ORDERLY start until the 16 slots are shared 8/8", "ms"),
        ORDERED_STEADY("ORDERLY rate after the slots are shared 8/8", "msgs/s"),
        ORDERED_VIOLATIONS("ORDERLY per-key order violations", "msgs"),
        CONCURRENT_VIOLATIONS("CONCURRENT per-key order violations", "msgs"),
        TAKEOVER_P50("Takeover: kill → first message of a killed slot handled, p50", "ms"),
        TAKEOVER_MAX("Takeover: kill → first message of a killed slot handled, max", "ms"),
        TAKEOVER_ALL_P50("Takeover: kill → every killed slot handled again, p50", "ms"),
        TAKEOVER_ALL_MAX("Takeover: kill → every killed slot handled again, max", "ms");

        final String label;
        final String unit;

        OrderedMetric(String label, String unit) {
            this.label = label;
            this.unit = unit;
        }
    }

    final Map<String, String> options;
    private final int runs;
    private final int w1;
    private final int w2;
    private final int w3;
    private final int cap;
    private final int delaySeconds;
    private final int idleSeconds;
    /** Messages of each produce-sync figure (one thread sending and waiting does ~10k/s). */
    private final int syncMessages;
    /** Lone messages sent to an idle listener for the wake-up latency (100 ms apart). */
    private final int wakeMessages;
    private final int warmupSeconds;
    private final Map<String, Map<Metric, List<Double>>> results = new LinkedHashMap<>();
    /** Cores busy on the machine over each figure's measured phase, by peer (PROTOCOL.md MEASURING). */
    private final Map<String, Map<Metric, List<Double>>> busy = new LinkedHashMap<>();
    private final Map<String, List<String>> notes = new LinkedHashMap<>();
    final Map<OrderedMetric, List<Double>> ordered = new LinkedHashMap<>();
    /** The RESULT fields of every ordered workload run, by "ORDERLY", "CONCURRENT" and "takeover" (for tests). */
    final Map<String, List<Map<String, String>>> orderedRuns = new LinkedHashMap<>();
    private final int orderedMessages;
    private final int kills;
    private final int ownershipMillis;
    private RedisCommands<String, String> redis;
    private RedisEndpoint endpoint;

    BenchmarkMain(Map<String, String> options) {
        this.options = options;
        this.runs = intOption("runs", 2);
        this.w1 = intOption("w1", 200_000);
        this.w2 = intOption("w2", 1_000_000);
        this.w3 = intOption("w3", 10_000);
        this.cap = intOption("cap-seconds", 90);
        this.delaySeconds = intOption("delay-seconds", 10);
        this.idleSeconds = intOption("idle-seconds", 10);
        this.warmupSeconds = intOption("warmup-seconds", 3);
        this.syncMessages = intOption("sync-messages", 30_000);
        this.wakeMessages = intOption("wake-messages", 200);
        this.orderedMessages = intOption("ordered-messages", 300_000);
        this.kills = intOption("kills", 10);
        this.ownershipMillis = intOption("ownership-ms", 2_000);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        BenchmarkMain main = new BenchmarkMain(options);
        String workload = options.getOrDefault("workload", "peers");
        String table = switch (workload) {
            case "peers" -> main.runAll();
            case "ordered" -> main.runOrdered();
            case "scaling" -> new ScalingWorkloads(main).run();
            case "waited" -> new WaitedWorkloads(main).run();
            default -> throw new IllegalArgumentException("--workload peers|ordered|scaling|waited, not " + workload);
        };
        System.out.println();
        System.out.println(table);
        System.exit(0);
    }

    int intOption(String name, int fallback) {
        return Integer.parseInt(options.getOrDefault(name, Integer.toString(fallback)));
    }

    String runAll() throws Exception {
        endpoint = TestRedisServers.standalone();
        RedisClient client = RedisClient.create(RedisURI.create(endpoint.host(), endpoint.port()));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            redis = connection.sync();
            String version = info("server", "redis_version");
            log("Redis " + version + " on " + endpoint.host() + ":" + endpoint.port() + ", " + runs + " run(s)");
            List<Peer> peers = peers();
            for (Peer peer : peers) {
                if (peer.missing() != null) {
                    log("skipping " + peer.name() + ": " + peer.missing());
                    note(peer.name(), "not run: " + peer.missing());
                }
            }
            for (int run = 1; run <= runs; run++) {
                for (Peer peer : peers) {
                    if (peer.missing() == null) {
                        log("run " + run + "/" + runs + ": " + peer.name());
                        runPeer(peer);
                    }
                }
            }
            String table = table(version, peers);
            return writeTable(table, "rmq-benchmarks/target/benchmark-results.md");
        }
        finally {
            client.shutdown();
        }
    }

    // ------------------------------------------------------------------ peers

    /**
     * JVM options of every Java peer alike: the JVM's default JIT (tiered, C1 then C2), as a user would run them.
     * Capping the JIT favours some peers over others (it halves client-bound paths), so it is never the default.
     */
    List<String> jvm() {
        return List.of(options.getOrDefault("jvm-opts", "-Xmx2g").trim().split("\\s+"));
    }

    List<Peer> peers() {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path root = Path.of(options.getOrDefault("root", "."));
        List<Peer> all = new ArrayList<>();
        all.add(rmqPeer());
        all.add(jarPeer("Redisson", java, root.resolve("rmq-benchmarks/peers/redisson/target/redisson-peer.jar")));
        Path bullmq = root.resolve("rmq-benchmarks/peers/bullmq");
        all.add(new Peer("BullMQ", List.of("node", bullmq.resolve("peer.mjs").toString()),
                Files.isDirectory(bullmq.resolve("node_modules/bullmq")) ? null
                        : "npm packages not installed (" + bullmq + "/node_modules)"));
        all.add(jarPeer("Rqueue", java, root.resolve("rmq-benchmarks/peers/rqueue/target/rqueue-peer.jar")));
        all.add(jarPeer("dyno-queues", java, root.resolve("rmq-benchmarks/peers/dyno/target/dyno-peer.jar")));
        Peer rmq = all.get(0);
        RMQ_VARIANTS.forEach((name, args) -> all.add(new Peer(name, rmq.command(), null, args)));
        String only = options.get("peers");
        if (only == null) {
            all.removeIf(p -> RMQ_VARIANTS.containsKey(p.name()));
        }
        if (only != null) {
            List<String> wanted = List.of(only.toLowerCase(Locale.ROOT).split(","));
            all.removeIf(p -> !wanted.contains(p.name().toLowerCase(Locale.ROOT)));
        }
        return all;
    }

    Peer rmqPeer() {
        List<String> rmq = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        rmq.addAll(jvm());
        rmq.addAll(List.of("-cp", System.getProperty("java.class.path"), RmqPeer.class.getName()));
        return new Peer("RMQ", rmq, null);
    }

    private Peer jarPeer(String name, String java, Path jar) {
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(jvm());
        command.addAll(List.of("-jar", jar.toString()));
        return new Peer(name, command, Files.isRegularFile(jar) ? null : "not built (" + jar + ")");
    }

    private void runPeer(Peer peer) throws Exception {
        if (options.getOrDefault("figures", "all").equals("idle")) {
            idleFigures(peer);
            return;
        }
        Map<String, String> r;
        flush();
        r = workload(peer, "produce-batch", w1, cap);
        double batchRate = number(r, "rate");
        recordMeasured(peer, Metric.W1A_BATCH, Metric.W1A_BATCH_REDIS, r);
        if (r != null) {
            r = workload(peer, "consume", w1, cap);
            recordMeasured(peer, Metric.W1B_CONSUME, Metric.W1B_REDIS, r);
            capped(peer, "W1B", r, w1);
        }
        flush();
        r = workload(peer, "produce-single", w1, cap);
        recordMeasured(peer, Metric.W1A_SINGLE, Metric.W1A_SINGLE_REDIS, r);
        if (peer.name().startsWith("RMQ") || peer.name().equals("Redisson")) {
            // the batch sizes users write, each call waited for (PROTOCOL.md produce-waited); peers with a bulk API
            for (int size : new int[] {100, 1_000, 10_000}) {
                flush();
                r = workload(peer, "produce-waited", w1, cap, "--batch", Integer.toString(size));
                record(peer, Metric.valueOf("W1A_WAITED_" + size), number(r, "rate"));
                recordBusy(peer, r, Metric.valueOf("W1A_WAITED_" + size));
                record(peer, Metric.valueOf("W1A_WAITED_" + size + "_REDIS"), number(r, "redisUsPerMsg"));
                record(peer, Metric.valueOf("W1A_WAITED_" + size + "_CLIENT"), number(r, "clientUsPerMsg"));
            }
            // one message per call, each waited for, from 1, 8 and 64 threads (PROTOCOL.md produce-sync)
            for (int threads : new int[] {1, 8, 64}) {
                flush();
                r = workload(peer, "produce-sync", Math.min(w1, syncMessages), cap, "--threads",
                        Integer.toString(threads));
                record(peer, Metric.valueOf("W1A_SYNC_" + threads), number(r, "rate"));
                recordBusy(peer, r, Metric.valueOf("W1A_SYNC_" + threads));
                record(peer, Metric.valueOf("W1A_SYNC_" + threads + "_REDIS"), number(r, "redisUsPerMsg"));
            }
        }
        flush();
        r = workload(peer, "produce-consume", w1, cap);
        recordMeasured(peer, Metric.W1C_BOTH, Metric.W1C_REDIS, r);
        capped(peer, "W1C", r, w1);

        flush();
        int fill = w2;
        if (batchRate > 0 && w2 / batchRate > 60) {
            fill = (int) Math.max(10_000, Math.min(w2, batchRate * 60));
            note(peer.name(), "W2 measured with " + fill + " messages (its batch produce rate would need "
                    + Math.round(w2 / batchRate) + " s for " + w2 + ")");
        }
        long before = Long.parseLong(info("memory", "used_memory"));
        r = workload(peer, "fill", fill, cap);
        long after = Long.parseLong(info("memory", "used_memory"));
        double filled = number(r, "count");
        record(peer, Metric.W2_BYTES, filled > 0 ? (after - before) / filled : Double.NaN);

        flush();
        r = workload(peer, "delay", w3, delaySeconds);
        record(peer, Metric.W3_P50, number(r, "p50"));
        record(peer, Metric.W3_P99, number(r, "p99"));
        record(peer, Metric.W3_MAX, number(r, "max"));
        recordBusy(peer, r, Metric.W3_P50, Metric.W3_P99, Metric.W3_MAX);
        if (r != null && number(r, "count") < w3) {
            note(peer.name(), "W3 handled only " + Math.round(number(r, "count")) + " of " + w3 + " in time");
        }

        idleFigures(peer);
    }

    /**
     * The idle figures: Redis commands of an idle consumer over {@code --idle-seconds}, and for RMQ how soon an idle
     * listener handles a lone message (issue 22 item 3: cheap idling with the same wake-up latency). Alone with
     * {@code --figures idle} (e.g. with {@code --idle-seconds 35}, past the 30 s idle check).
     */
    private void idleFigures(Peer peer) throws Exception {
        flush();
        record(peer, Metric.W3_IDLE, idle(peer));
        if (peer.name().startsWith("RMQ")) {
            flush();
            Map<String, String> r = workload(peer, "wake-latency", wakeMessages, cap);
            record(peer, Metric.W3_WAKE_P50, number(r, "p50"));
            record(peer, Metric.W3_WAKE_P99, number(r, "p99"));
        }
    }

    private void capped(Peer peer, String what, Map<String, String> r, int expected) {
        if (r != null && number(r, "count") < expected) {
            note(peer.name(), what + " stopped at the " + cap + " s cap after " + Math.round(number(r, "count"))
                    + " of " + expected + " messages (rate over that time)");
        }
    }

    /** Runs one workload process; returns its RESULT fields, or null when it failed or timed out. */
    private Map<String, String> workload(Peer peer, String workload, int messages, int seconds, String... extra)
            throws Exception {
        List<String> command = new ArrayList<>(peer.command());
        command.addAll(List.of(workload, "--host", endpoint.host(), "--port", Integer.toString(endpoint.port()),
                "--messages", Integer.toString(messages), "--concurrency", "8", "--seconds", Integer.toString(seconds)));
        command.addAll(List.of(extra));
        command.addAll(peer.args());
        if (peer.name().equals("RMQ") && options.containsKey("propagate-context")) {
            // RMQ with trace context propagation on (RmqPeer --propagate-context): every send stores a traceparent
            command.addAll(List.of("--propagate-context", options.get("propagate-context")));
            if (options.containsKey("sampling")) {
                command.addAll(List.of("--sampling", options.get("sampling")));
            }
        }
        if (!workload.equals("fill")) {
            command.addAll(List.of("--warmup-seconds", Integer.toString(warmupSeconds)));
        }
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        MeasuredWindow window = new MeasuredWindow();
        CompletableFuture<String> result = readResult(process, null, window);
        long timeout = seconds * 3L + warmupSeconds * 2L + 180;
        if (!process.waitFor(timeout, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            log("  " + workload + ": timed out after " + timeout + " s");
            note(peer.name(), workload + " timed out after " + timeout + " s");
            return null;
        }
        String line = result.get(10, TimeUnit.SECONDS);
        if (line == null || process.exitValue() != 0) {
            log("  " + workload + ": failed (exit " + process.exitValue() + ")");
            note(peer.name(), workload + " failed (exit " + process.exitValue() + ")");
            return null;
        }
        Map<String, String> fields = parse(line);
        window.addTo(fields);
        log("  " + workload + " " + line + window.describe());
        return fields;
    }

    /**
     * What the orchestrator itself reads over a peer's measured phase: from the peer's {@code MEASURING} line to its
     * {@code RESULT} line (PROTOCOL.md), Redis's CPU ({@code INFO cpu}) and the machine's CPU ({@code /proc/stat}).
     * Both readings happen on the output reader's thread, while the orchestrator's own thread only waits.
     */
    private final class MeasuredWindow {
        private double redisStart = Double.NaN;
        private long[] statStart;
        private double redisSeconds = Double.NaN;
        private double busyCores = Double.NaN;

        void start() {
            redisStart = redisCpuSeconds();
            statStart = procStat();
        }

        void end() {
            if (Double.isNaN(redisStart)) {
                return; // the peer printed no MEASURING: no figure
            }
            redisSeconds = redisCpuSeconds() - redisStart;
            busyCores = busyCores(statStart, procStat());
        }

        /** Adds {@code _redisSeconds} and {@code _busyCores} (orchestrator's readings) to a RESULT's fields. */
        void addTo(Map<String, String> fields) {
            if (!Double.isNaN(redisSeconds)) {
                fields.put("_redisSeconds", Double.toString(redisSeconds));
            }
            if (!Double.isNaN(busyCores)) {
                fields.put("_busyCores", Double.toString(busyCores));
            }
        }

        String describe() {
            return Double.isNaN(redisSeconds) ? ""
                    : String.format(Locale.ROOT, " [Redis CPU %.3f s, machine %.2f cores busy]", redisSeconds, busyCores);
        }
    }

    private double redisCpuSeconds() {
        return WaitedBatches.redisCpuSeconds(redis.info("cpu"));
    }

    /** The machine's aggregate CPU line of {@code /proc/stat} (ticks), or null where there is none. */
    static long[] procStat() {
        try {
            String[] fields = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long[] ticks = new long[fields.length - 1];
            for (int i = 1; i < fields.length; i++) {
                ticks[i - 1] = Long.parseLong(fields[i]);
            }
            return ticks;
        }
        catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    /**
     * Cores kept busy between two {@code /proc/stat} readings: (user + nice + system + irq + softirq) over all
     * ticks, times the cores. Steal and guest time are not counted as busy; NaN without readings. The scaling
     * workload reads the machine the same way.
     */
    static double busyCores(long[] before, long[] after) {
        if (before == null || after == null || before.length < 8 || after.length < 8) {
            return Double.NaN;
        }
        long busy = 0;
        long total = 0;
        for (int i = 0; i < 8; i++) { // user nice system idle iowait irq softirq steal (guest is inside user)
            long delta = after[i] - before[i];
            total += delta;
            if (i != 3 && i != 4 && i != 7) {
                busy += delta;
            }
        }
        return total <= 0 ? Double.NaN : busy * (double) Runtime.getRuntime().availableProcessors() / total;
    }

    /**
     * Reads a peer's output until its RESULT line; calls {@code onReady} at READY and opens and closes {@code window}
     * (if any) at MEASURING and RESULT. Keeps the last lines for errors.
     */
    private CompletableFuture<String> readResult(Process process, Runnable onReady, MeasuredWindow window) {
        return CompletableFuture.supplyAsync(() -> {
            List<String> tail = new ArrayList<>();
            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                String result = null;
                while ((line = reader.readLine()) != null) {
                    if (line.startsWith("RESULT ")) {
                        if (window != null && result == null) {
                            window.end();
                        }
                        result = line.substring(7).trim();
                    }
                    else if (line.trim().equals("MEASURING") && window != null) {
                        window.start();
                    }
                    else if (line.trim().equals("READY") && onReady != null) {
                        onReady.run();
                    }
                    else {
                        tail.add(line);
                        if (tail.size() > 15) {
                            tail.remove(0);
                        }
                    }
                }
                if (result == null) {
                    tail.forEach(l -> log("    | " + l));
                }
                return result;
            }
            catch (IOException ex) {
                return null;
            }
        });
    }

    /** Starts the idle workload and counts Redis commands over the measuring window after READY. */
    private double idle(Peer peer) throws Exception {
        List<String> command = new ArrayList<>(peer.command());
        command.addAll(List.of("idle", "--host", endpoint.host(), "--port", Integer.toString(endpoint.port()),
                "--concurrency", "8", "--seconds", Integer.toString(idleSeconds + 4)));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<Void> ready = new CompletableFuture<>();
        CompletableFuture<String> result = readResult(process, () -> ready.complete(null), null);
        try {
            ready.get(120, TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            process.destroyForcibly();
            note(peer.name(), "idle: no READY");
            return Double.NaN;
        }
        long start = Long.parseLong(info("stats", "total_commands_processed"));
        Thread.sleep(idleSeconds * 1000L);
        long end = Long.parseLong(info("stats", "total_commands_processed"));
        double perSecond = (end - start - 1) / (double) idleSeconds; // minus our own INFO
        process.waitFor(idleSeconds + 120L, TimeUnit.SECONDS);
        result.getNow(null);
        log(String.format(Locale.ROOT, "  idle %.1f cmds/s", perSecond));
        return perSecond;
    }

    // ------------------------------------------------------------------ ordered consumption (RMQ only)

    /**
     * {@code --workload ordered}: per run, the ordered-consume workload in ORDERLY and in CONCURRENT mode (alternating
     * which goes first), then the takeover workload ({@code --kills} kills); FLUSHALL before each. RMQ only.
     */
    String runOrdered() throws Exception {
        endpoint = TestRedisServers.standalone();
        RedisClient client = RedisClient.create(RedisURI.create(endpoint.host(), endpoint.port()));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            redis = connection.sync();
            String version = info("server", "redis_version");
            log("Redis " + version + " on " + endpoint.host() + ":" + endpoint.port() + ", " + runs
                    + " run(s) of the ordered workloads");
            Peer rmq = rmqPeer();
            for (int run = 1; run <= runs; run++) {
                List<String> modes = run % 2 == 1 ? List.of("ORDERLY", "CONCURRENT") : List.of("CONCURRENT", "ORDERLY");
                Map<String, Double> rates = new LinkedHashMap<>();
                for (String mode : modes) {
                    log("run " + run + "/" + runs + ": ordered-consume " + mode);
                    flush();
                    Map<String, String> r = workload(rmq, "ordered-consume", orderedMessages, cap, "--mode", mode);
                    rates.put(mode, number(r, "rate"));
                    orderedRuns.computeIfAbsent(mode, m -> new ArrayList<>()).add(r);
                    if (r != null && number(r, "count") < orderedMessages) {
                        note("RMQ", mode + " consume stopped at the " + cap + " s cap after "
                                + Math.round(number(r, "count")) + " of " + orderedMessages + " messages");
                    }
                    boolean orderly = mode.equals("ORDERLY");
                    recordOrdered(orderly ? OrderedMetric.ORDERED : OrderedMetric.CONCURRENT, number(r, "rate"));
                    recordOrdered(orderly ? OrderedMetric.ORDERED_VIOLATIONS : OrderedMetric.CONCURRENT_VIOLATIONS,
                            number(r, "violations"));
                    if (orderly) {
                        double settle = number(r, "settle");
                        recordOrdered(OrderedMetric.ORDERED_SETTLE, settle < 0 ? Double.NaN : settle);
                        recordOrdered(OrderedMetric.ORDERED_STEADY, number(r, "steady"));
                        if (settle < 0 && r != null) {
                            note("RMQ", "ORDERLY run " + run + ": all handled before the slots were shared 8/8");
                        }
                    }
                }
                recordOrdered(OrderedMetric.RATIO, rates.get("ORDERLY") / rates.get("CONCURRENT"));
                log("run " + run + "/" + runs + ": takeover, " + kills + " kill(s)");
                flush();
                Map<String, String> r = workload(rmq, "takeover", 0, kills * 20 + 60, "--kills", Integer.toString(kills),
                        "--ownership-ms", Integer.toString(ownershipMillis));
                orderedRuns.computeIfAbsent("takeover", m -> new ArrayList<>()).add(r);
                recordOrdered(OrderedMetric.TAKEOVER_P50, number(r, "p50"));
                recordOrdered(OrderedMetric.TAKEOVER_MAX, number(r, "max"));
                recordOrdered(OrderedMetric.TAKEOVER_ALL_P50, number(r, "allP50"));
                recordOrdered(OrderedMetric.TAKEOVER_ALL_MAX, number(r, "allMax"));
                if (r != null && (number(r, "left") > 0 || number(r, "dead") > 0 || number(r, "sendFailures") > 0)) {
                    note("RMQ", "takeover run " + run + ": " + Math.round(number(r, "left")) + " message(s) left unhandled, "
                            + Math.round(number(r, "dead")) + " dead, " + Math.round(number(r, "sendFailures"))
                            + " failed send(s)");
                }
            }
            String table = orderedTable(version);
            return writeTable(table, "rmq-benchmarks/target/ordered-results.md");
        }
        finally {
            client.shutdown();
        }
    }

    /** Writes a results table to {@code --out} (default {@code defaultOut}) and returns it. */
    String writeTable(String table, String defaultOut) throws IOException {
        Path out = Path.of(options.getOrDefault("out", defaultOut));
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, table);
        log("table written to " + out);
        return table;
    }

    private void recordOrdered(OrderedMetric metric, double value) {
        ordered.computeIfAbsent(metric, m -> new ArrayList<>()).add(value);
    }

    String orderedTable(String version) {
        StringBuilder out = new StringBuilder();
        out.append("## RMQ ORDERLY consumption (issue 13)\n\n");
        out.append(String.format(Locale.ROOT, "Redis %s on loopback, flushed before every workload; %d run(s) per figure:"
                + " median (min–max). Machine: %d cores, Java %s, JVM options %s. Consume: a backlog of %,d ~100-byte"
                + " messages on a 16-slot FIXED_TIME topic (slot basis over 1,000 keys), 2 instances (own engine and"
                + " Lettuce client each, one process) × concurrency 8, batch size 64, %d s warm-up in the same mode;"
                + " container start to the last message handled. Takeover: %d kill(s) per run (SIGKILL of a separate"
                + " victim JVM), ownership timeout %d ms, one message to every slot every %d ms.%n%n", version, runs,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), String.join(" ", jvm()),
                orderedMessages, warmupSeconds, kills, ownershipMillis, OrderedWorkloads.SEND_EVERY_MILLIS));
        out.append("| figure | unit | RMQ |\n| --- | --- | ---: |\n");
        for (OrderedMetric metric : OrderedMetric.values()) {
            List<Double> values = ordered.get(metric);
            String cell = metric == OrderedMetric.RATIO && values != null
                    ? ratioCell(values) : cell(values);
            out.append("| ").append(metric.label).append(" | ").append(metric.unit).append(" | ").append(cell)
                    .append(" |\n");
        }
        if (!notes.isEmpty()) {
            out.append("\nNotes:\n");
            notes.forEach((peer, list) -> list.forEach(n -> out.append("- ").append(peer).append(": ").append(n).append('\n')));
        }
        return out.toString();
    }

    private static String ratioCell(List<Double> values) {
        List<Double> valid = values.stream().filter(v -> !v.isNaN() && !v.isInfinite()).sorted().toList();
        if (valid.isEmpty()) {
            return "n/a";
        }
        String median = String.format(Locale.ROOT, "%.2f", median(valid));
        return valid.size() < 2 ? median : median + String.format(Locale.ROOT, " (%.2f–%.2f)", valid.get(0),
                valid.get(valid.size() - 1));
    }

    // ------------------------------------------------------------------ results

    private void record(Peer peer, Metric metric, double value) {
        results.computeIfAbsent(peer.name(), p -> new LinkedHashMap<>())
                .computeIfAbsent(metric, m -> new ArrayList<>()).add(value);
    }

    /**
     * A throughput figure, Redis CPU per message over its measured phase (the orchestrator's reading, divided by the
     * RESULT's count) and the machine's load then.
     */
    private void recordMeasured(Peer peer, Metric rate, Metric redisPerMessage, Map<String, String> r) {
        record(peer, rate, number(r, "rate"));
        double count = number(r, "count");
        record(peer, redisPerMessage, count > 0 ? number(r, "_redisSeconds") * 1e6 / count : Double.NaN);
        recordBusy(peer, r, rate);
    }

    /** The cores the machine kept busy over the measured phase of the run behind {@code metrics}. */
    private void recordBusy(Peer peer, Map<String, String> r, Metric... metrics) {
        for (Metric metric : metrics) {
            busy.computeIfAbsent(peer.name(), p -> new LinkedHashMap<>())
                    .computeIfAbsent(metric, m -> new ArrayList<>()).add(number(r, "_busyCores"));
        }
    }

    private void note(String peer, String text) {
        List<String> list = notes.computeIfAbsent(peer, p -> new ArrayList<>());
        if (!list.contains(text)) {
            list.add(text);
        }
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().filter(v -> !v.isNaN()).sorted().toList();
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    static String format(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        if (Math.abs(value) >= 100) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        return String.format(Locale.ROOT, "%.1f", value);
    }

    static String cell(List<Double> values) {
        if (values == null || values.stream().allMatch(v -> v.isNaN())) {
            return "n/a";
        }
        List<Double> valid = values.stream().filter(v -> !v.isNaN()).sorted().toList();
        String median = format(median(valid));
        return valid.size() < 2 ? median : median + " (" + format(valid.get(0)) + "–" + format(valid.get(valid.size() - 1)) + ")";
    }

    String table(String version, List<Peer> peers) {
        List<String> measured = peers.stream().filter(p -> p.missing() == null).map(Peer::name).toList();
        StringBuilder out = new StringBuilder();
        out.append("## RMQ and peers, W1-W3 (DESIGN.md)\n\n");
        out.append(String.format(Locale.ROOT, "Redis %s on loopback, flushed before every workload; %d run(s) per figure: median"
                + " (min–max). Machine: %d cores, Java %s. Ratio = RMQ / peer (for bytes, ms and cmds/s lower is"
                + " better, so a ratio below 1 favours RMQ there). Java peers run with %s. Every peer warms up for %d s"
                + " (same operations, own keys, not measured) before each W1 and W3 workload. Redis CPU per message of"
                + " the W1A batch/one-at-a-time, W1B and W1C rows: `INFO cpu` (sys + user) read by this orchestrator"
                + " over the peer's measured phase (its MEASURING to its RESULT line, so it includes the consumer's"
                + " stop), divided by the messages; those of the waited and synchronous rows are the peer's own readings"
                + " (PROTOCOL.md). Last column: the cores the whole machine kept busy over each figure's measured phase"
                + " (`/proc/stat` user + nice + system + irq + softirq, steal not counted; of %d), median per peer in"
                + " column order.%n%n", version, runs,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), String.join(" ", jvm()),
                warmupSeconds, Runtime.getRuntime().availableProcessors()));
        out.append("| figure | unit |");
        for (String name : measured) {
            out.append(' ').append(name).append(" |");
            if (!name.equals("RMQ")) {
                out.append(" RMQ/").append(name).append(" |");
            }
        }
        out.append(" machine: cores busy (").append(String.join(" / ", measured)).append(") |");
        out.append('\n').append("| --- | --- |");
        for (String name : measured) {
            out.append(" ---: |");
            if (!name.equals("RMQ")) {
                out.append(" ---: |");
            }
        }
        out.append(" ---: |");
        out.append('\n');
        Map<Metric, List<Double>> rmq = results.getOrDefault("RMQ", Map.of());
        for (Metric metric : Metric.values()) {
            out.append("| ").append(metric.label).append(" | ").append(metric.unit).append(" |");
            double rmqMedian = rmq.containsKey(metric) ? median(rmq.get(metric)) : Double.NaN;
            for (String name : measured) {
                List<Double> values = results.getOrDefault(name, Map.of()).get(metric);
                out.append(' ').append(cell(values)).append(" |");
                if (!name.equals("RMQ")) {
                    double peerMedian = values == null ? Double.NaN : median(values);
                    double ratio = rmqMedian / peerMedian;
                    out.append(' ').append(Double.isNaN(ratio) || Double.isInfinite(ratio) ? "n/a"
                            : String.format(Locale.ROOT, "%.2f", ratio)).append(" |");
                }
            }
            out.append(' ').append(busyCell(metric, measured)).append(" |");
            out.append('\n');
        }
        if (!notes.isEmpty()) {
            out.append("\nNotes:\n");
            notes.forEach((peer, list) -> list.forEach(n -> out.append("- ").append(peer).append(": ").append(n).append('\n')));
        }
        return out.toString();
    }

    /** "1.9 / 1.7 / 1.2": the median cores busy per peer over this figure's measured phases; blank without any. */
    private String busyCell(Metric metric, List<String> measured) {
        List<String> cells = new ArrayList<>();
        boolean any = false;
        for (String name : measured) {
            double median = median(busy.getOrDefault(name, Map.of()).getOrDefault(metric, List.of()));
            any |= !Double.isNaN(median);
            cells.add(Double.isNaN(median) ? "n/a" : String.format(Locale.ROOT, "%.1f", median));
        }
        return any ? String.join(" / ", cells) : "";
    }

    // ------------------------------------------------------------------ helpers

    private void flush() {
        redis.flushall();
    }

    private String info(String section, String field) {
        for (String line : redis.info(section).split("\\r?\\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        throw new IllegalStateException("no " + field + " in INFO " + section);
    }

    private static final Pattern FIELD = Pattern.compile("\"(\\w+)\"\\s*:\\s*\"?([-0-9.eE]+)\"?");

    static Map<String, String> parse(String json) {
        Map<String, String> fields = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(json);
        while (m.find()) {
            fields.put(m.group(1), m.group(2));
        }
        return fields;
    }

    static double number(Map<String, String> fields, String name) {
        if (fields == null || !fields.containsKey(name)) {
            return Double.NaN;
        }
        return Double.parseDouble(fields.get(name));
    }

    static void log(String text) {
        System.err.println("[bench] " + text);
    }
}
