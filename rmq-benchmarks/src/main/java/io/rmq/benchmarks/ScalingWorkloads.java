package io.rmq.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.test.PrivateCluster;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TestRedisServers;

/**
 * {@code BenchmarkMain --workload scaling}: RMQ's W1B (consume a backlog) and W1C (produce one at a time while
 * consuming) on a standalone Redis ({@link TestRedisServers}, as the tests start it) and on Redis Clusters of 3, 6, ..
 * masters (one {@link PrivateCluster} per master count, started here, no replicas), with 1, 2, .. consumer JVMs:
 * separate processes, each a listener container of concurrency 8 on the same topic of {@code --slots} slots
 * ({@code RmqPeer consume-shared}). In W1C the first consumer process also sends. Per figure it records the rate (all
 * processes' messages over the time from GO, or the first send, to the last message any of them handled), the Redis
 * CPU per message summed over every master and each master's share ({@code INFO cpu}), and the machine's load
 * ({@code /proc/stat} busy cores during the figure, {@code /proc/loadavg} after it). Per cluster it records how the
 * topic's slots fall on its masters ({@link SlotSpread}). Runs on the thread that calls {@link #run}.
 *
 * <p>Options: {@code --topology standalone,cluster --masters 3,6 --slots 16 --consumer-jvms 1,2 --runs 2 --w1 200000
 * --warmup-seconds 3 --jit-quiet-seconds 30 --cap-seconds 90} (each consumer JVM warms up on a backlog of its own,
 * then waits at most {@code --jit-quiet-seconds} for its JIT to go quiet: {@code RmqPeer.sharedWarmUp}). Each master
 * count is a topology of its own in the rotation ({@code --masters} applies to {@code cluster}; default 3); the order
 * of the topologies alternates between runs.
 */
final class ScalingWorkloads {

    /** A Redis deployment of the rotation: {@code standalone} (one server), or a {@code cluster} of that many masters. */
    record Topology(String kind, int masters) {

        static final Topology STANDALONE = new Topology("standalone", 1);

        static Topology cluster(int masters) {
            return new Topology("cluster", masters);
        }

        String label() {
            return kind.equals("standalone") ? kind : masters + "-master cluster";
        }
    }

    /** One row of the table. */
    record Figure(String workload, int jvms, String topology, int masters) {

        Figure(String workload, int jvms, Topology topology) {
            this(workload, jvms, topology.kind(), topology.masters());
        }
    }

    /** One measurement of a figure; {@code masterCores}: each master's Redis cores, in the topology's order. */
    record Sample(double rate, long count, double redisMicrosPerMessage, double redisCores,
            double clientMicrosPerMessage, double jitMicrosPerMessage, double busyCores, double load1,
            List<Double> masterCores) {
    }

    /** Long enough that a master busy on a loaded machine is never suspected by the others (no replicas anyway). */
    private static final Duration NODE_TIMEOUT = Duration.ofSeconds(30);

    static final String W1B = "W1B consume";
    static final String W1C = "W1C produce + consume";

    private final BenchmarkMain main;
    final Map<Figure, List<Sample>> samples = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private final List<Topology> topologies;
    private final int slots;
    private final Map<Topology, List<RedisEndpoint>> nodes = new LinkedHashMap<>();
    /** How the topic's slots fall on each topology's masters. */
    final Map<Topology, SlotSpread> spreads = new LinkedHashMap<>();
    private final List<PrivateCluster> clusters = new ArrayList<>();
    private final Map<RedisEndpoint, StatefulRedisConnection<String, String>> admin = new LinkedHashMap<>();
    /** Made by {@link #run}, which shuts it down (a constructor that rejects its options leaves nothing open). */
    private RedisClient adminClient;

    ScalingWorkloads(BenchmarkMain main) {
        this.main = main;
        this.topologies = topologies(main.options);
        this.slots = main.intOption("slots", 16);
        if (slots < 1 || slots > 16384 || Integer.bitCount(slots) != 1) {
            // as a topic's slot amount must be (TopicDefinition): said here rather than by every consumer process
            throw new IllegalArgumentException("--slots must be a power of two from 1 to 16384, not " + slots);
        }
    }

    /** {@code --topology standalone,cluster} with {@code --masters 3,6}: standalone, 3-master cluster, 6-master cluster. */
    static List<Topology> topologies(Map<String, String> options) {
        List<Integer> masters = integers(options.getOrDefault("masters", "3"), "--masters");
        List<Topology> topologies = new ArrayList<>();
        for (String kind : options.getOrDefault("topology", "standalone,cluster").split(",")) {
            switch (kind.trim()) {
                case "standalone" -> topologies.add(Topology.STANDALONE);
                case "cluster" -> masters.forEach(m -> topologies.add(Topology.cluster(m)));
                default -> throw new IllegalArgumentException("--topology standalone|cluster, not " + kind);
            }
        }
        if (options.containsKey("masters") && topologies.stream().noneMatch(t -> t.kind().equals("cluster"))) {
            throw new IllegalArgumentException("--masters applies to the cluster topology: add cluster to --topology");
        }
        return List.copyOf(new java.util.LinkedHashSet<>(topologies)); // --masters 3,3: one 3-master cluster
    }

    private static List<Integer> integers(String list, String option) {
        List<Integer> values = new ArrayList<>();
        for (String k : list.split(",")) {
            int value = Integer.parseInt(k.trim());
            if (value < 1) {
                throw new IllegalArgumentException(option + " takes counts of at least 1, not " + value);
            }
            values.add(value);
        }
        return values;
    }

    String run() throws Exception {
        List<Integer> jvms = integers(main.options.getOrDefault("consumer-jvms", "1,2"), "--consumer-jvms");
        int runs = main.intOption("runs", 2);
        adminClient = RedisClient.create();
        try {
            for (Topology topology : topologies) {
                start(topology);
            }
            String version = info(admin.keySet().iterator().next(), "server", "redis_version");
            BenchmarkMain.log("Redis " + version + ", topologies " + nodes + ", " + slots + "-slot topic, consumer JVMs "
                    + jvms + ", " + runs + " run(s)");
            for (int run = 1; run <= runs; run++) {
                List<Topology> order = new ArrayList<>(topologies);
                if (run % 2 == 0) {
                    java.util.Collections.reverse(order);
                }
                for (Topology topology : order) {
                    for (int k : jvms) {
                        for (String workload : List.of(W1B, W1C)) {
                            BenchmarkMain.log("run " + run + "/" + runs + ": " + workload + ", " + topology.label()
                                    + ", " + k + " consumer JVM(s)");
                            Sample sample = measure(workload, topology, k);
                            if (sample != null) {
                                samples.computeIfAbsent(new Figure(workload, k, topology), f -> new ArrayList<>())
                                        .add(sample);
                            }
                        }
                    }
                }
            }
            return main.writeTable(table(version, runs), "rmq-benchmarks/target/scaling-results.md");
        }
        finally {
            admin.values().forEach(StatefulRedisConnection::close);
            adminClient.shutdown();
            clusters.forEach(PrivateCluster::close);
        }
    }

    /** Starts (or, standalone, finds) the topology's Redis, connects to each master and works out the slot spread. */
    private void start(Topology topology) throws IOException {
        List<RedisEndpoint> endpoints;
        if (topology.kind().equals("standalone")) {
            endpoints = List.of(TestRedisServers.standalone());
        }
        else {
            PrivateCluster cluster = PrivateCluster.start(topology.masters(), 0, NODE_TIMEOUT);
            clusters.add(cluster);
            endpoints = cluster.seeds().stream().map(u -> new RedisEndpoint(u.getHost(), u.getPort())).toList();
        }
        nodes.put(topology, endpoints);
        for (RedisEndpoint endpoint : endpoints) {
            admin.put(endpoint, adminClient.connect(RedisURI.create(endpoint.host(), endpoint.port())));
        }
        SlotSpread spread = topology.kind().equals("standalone") ? SlotSpread.standalone(slots)
                : SlotSpread.of(RmqPeer.QUEUE, slots, endpoints.stream().map(e -> admin.get(e).sync().clusterNodes())
                        .toList());
        spreads.put(topology, spread);
        BenchmarkMain.log(topology.label() + " on " + endpoints + ": " + spread.describe());
    }

    /** A consumer process and what it reported so far. */
    private static final class Consumer {
        final Process process;
        final CountDownLatch ready = new CountDownLatch(1);
        volatile long handled;
        final CompletableFuture<String> result = new CompletableFuture<>();
        final List<String> tail = new ArrayList<>();

        Consumer(Process process) {
            this.process = process;
            Thread reader = new Thread(this::read, "consumer-output");
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith("HANDLED ")) {
                        handled = Long.parseLong(line.substring(8).trim());
                    }
                    else if (line.startsWith("RESULT ")) {
                        result.complete(line.substring(7).trim());
                    }
                    else if (line.trim().equals("READY")) {
                        ready.countDown();
                    }
                    else {
                        synchronized (tail) {
                            tail.add(line);
                            if (tail.size() > 15) {
                                tail.remove(0);
                            }
                        }
                    }
                }
            }
            catch (IOException ex) {
                // the process ended
            }
            result.complete(null);
            ready.countDown();
        }

        void send(String line) {
            try {
                OutputStream in = process.getOutputStream();
                in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
            }
            catch (IOException ex) {
                // it ended; its result (or its absence) says so
            }
        }

        void logTail() {
            synchronized (tail) {
                tail.forEach(l -> BenchmarkMain.log("    | " + l));
            }
        }
    }

    private List<String> peerCommand(String workload, Topology topology) {
        List<RedisEndpoint> endpoints = nodes.get(topology);
        List<String> command = new ArrayList<>(main.rmqPeer().command());
        command.addAll(List.of(workload, "--host", endpoints.get(0).host(), "--port",
                Integer.toString(endpoints.get(0).port()), "--messages", Integer.toString(main.intOption("w1", 200_000)),
                "--concurrency", "8", "--slots", Integer.toString(slots)));
        if (topology.kind().equals("cluster")) {
            command.addAll(List.of("--cluster",
                    endpoints.stream().map(RedisEndpoint::hostPort).collect(Collectors.joining(","))));
        }
        return command;
    }

    private Sample measure(String workload, Topology topology, int jvms) throws Exception {
        int n = main.intOption("w1", 200_000);
        int cap = main.intOption("cap-seconds", 90);
        int warmup = main.intOption("warmup-seconds", 3);
        for (RedisEndpoint endpoint : nodes.get(topology)) {
            admin.get(endpoint).sync().flushall();
        }
        List<Consumer> consumers = new ArrayList<>();
        try {
            for (int i = 0; i < jvms; i++) {
                List<String> command = peerCommand("consume-shared", topology);
                command.addAll(List.of("--seconds", Integer.toString(cap), "--warmup-seconds", Integer.toString(warmup),
                        "--jit-quiet-seconds", Integer.toString(main.intOption("jit-quiet-seconds", 30)),
                        "--produce", Boolean.toString(workload.equals(W1C) && i == 0)));
                consumers.add(new Consumer(new ProcessBuilder(command).redirectErrorStream(true).start()));
            }
            for (Consumer consumer : consumers) {
                // the warm-up, a last round of up to 30 s past it and the wait for a quiet JIT (RmqPeer.sharedWarmUp)
                long readyWithin = warmup * 3L + main.intOption("jit-quiet-seconds", 30) + 150;
                if (!consumer.ready.await(readyWithin, TimeUnit.SECONDS) || !consumer.process.isAlive()) {
                    consumer.logTail();
                    notes.add(workload + ", " + topology.label() + ", " + jvms + " JVM(s): a consumer did not start");
                    return null;
                }
            }
            if (workload.equals(W1B) && !fill(topology)) {
                notes.add(workload + ", " + topology.label() + ", " + jvms + " JVM(s): the backlog was not sent");
                return null;
            }
            Map<RedisEndpoint, Double> cpuBefore = redisCpu(topology);
            long[] statBefore = BenchmarkMain.procStat();
            long clientBefore = processTicks(consumers);
            CompilerTicks jit = new CompilerTicks(consumers.stream().map(c -> c.process.pid()).toList());
            long wallBefore = System.nanoTime();
            consumers.forEach(c -> c.send("GO"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(cap);
            long nextJitSample = System.nanoTime();
            while (consumers.stream().mapToLong(c -> c.handled).sum() < n && System.nanoTime() < deadline
                    && consumers.stream().allMatch(c -> c.process.isAlive())) {
                if (System.nanoTime() >= nextJitSample) {
                    jit.sample();
                    nextJitSample = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(250);
                }
                Thread.sleep(10);
            }
            jit.sample();
            long wallAfter = System.nanoTime();
            Map<RedisEndpoint, Double> cpuAfter = redisCpu(topology);
            long[] statAfter = BenchmarkMain.procStat();
            long clientTicks = processTicks(consumers) - clientBefore;
            double load1 = load1();
            consumers.forEach(c -> c.send("STOP"));
            long count = 0;
            long start = Long.MAX_VALUE;
            long last = 0;
            for (int i = 0; i < consumers.size(); i++) {
                Consumer consumer = consumers.get(i);
                String line = consumer.result.get(cap + 60L, TimeUnit.SECONDS);
                if (line == null) {
                    consumer.logTail();
                    notes.add(workload + ", " + topology.label() + ", " + jvms + " JVM(s): consumer " + i + " failed");
                    return null;
                }
                Map<String, String> r = BenchmarkMain.parse(line);
                count += (long) BenchmarkMain.number(r, "count");
                last = Math.max(last, (long) BenchmarkMain.number(r, "last"));
                long started = (long) BenchmarkMain.number(r, "start");
                // W1C: the clock starts at the first send (consumer 0 sends); W1B: at the first GO
                start = workload.equals(W1C) ? (i == 0 ? started : start) : Math.min(start, started);
            }
            if (count < n) {
                notes.add(workload + ", " + topology.label() + ", " + jvms + " JVM(s): stopped at the " + cap + " s cap after "
                        + count + " of " + n + " messages");
            }
            double wallSeconds = (wallAfter - wallBefore) / 1e9;
            double redisSeconds = 0;
            List<Double> masterCores = new ArrayList<>();
            for (RedisEndpoint endpoint : cpuBefore.keySet()) {
                double seconds = cpuAfter.get(endpoint) - cpuBefore.get(endpoint);
                redisSeconds += seconds;
                masterCores.add(seconds / wallSeconds);
            }
            double busyCores = BenchmarkMain.busyCores(statBefore, statAfter);
            Sample sample = new Sample(count / ((last - start) / 1e6), count, redisSeconds * 1e6 / count,
                    redisSeconds / wallSeconds, clientTicks < 0 ? Double.NaN : clientTicks * 1e6 / TICKS / count,
                    jit.ticks() < 0 ? Double.NaN : jit.ticks() * 1e6 / TICKS / count, busyCores, load1,
                    List.copyOf(masterCores));
            BenchmarkMain.log(String.format(Locale.ROOT, "  %,.0f msgs/s (%d msgs), Redis %.2f µs/msg (%.2f cores: %s),"
                    + " consumer JVMs %.1f µs/msg (JIT compiler threads %.1f), machine %.2f cores busy, load %.2f",
                    sample.rate(), count, sample.redisMicrosPerMessage(), sample.redisCores(),
                    perMaster(List.of(sample)), sample.clientMicrosPerMessage(), sample.jitMicrosPerMessage(), busyCores,
                    load1));
            return sample;
        }
        finally {
            for (Consumer consumer : consumers) {
                if (!consumer.process.waitFor(30, TimeUnit.SECONDS)) {
                    consumer.process.destroyForcibly();
                }
            }
        }
    }

    /** W1B's backlog: one {@code produce-batch} process sends N messages (no warm-up: its rate is not recorded). */
    private boolean fill(Topology topology) throws Exception {
        List<String> command = peerCommand("produce-batch", topology);
        command.addAll(List.of("--warmup-seconds", "0"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(300, TimeUnit.SECONDS) || process.exitValue() != 0 || !output.contains("RESULT ")) {
            output.lines().forEach(l -> BenchmarkMain.log("    | " + l));
            return false;
        }
        return true;
    }

    /** used_cpu_sys + used_cpu_user of every master of the topology, in seconds. */
    private Map<RedisEndpoint, Double> redisCpu(Topology topology) {
        Map<RedisEndpoint, Double> cpu = new LinkedHashMap<>();
        for (RedisEndpoint endpoint : nodes.get(topology)) {
            cpu.put(endpoint, WaitedBatches.redisCpuSeconds(admin.get(endpoint).sync().info("cpu")));
        }
        return cpu;
    }

    private String info(RedisEndpoint endpoint, String section, String field) {
        for (String line : admin.get(endpoint).sync().info(section).split("\\r?\\n")) {
            if (line.startsWith(field + ":")) {
                return line.substring(field.length() + 1).trim();
            }
        }
        throw new IllegalStateException("no " + field + " in INFO " + section + " of " + endpoint);
    }

    /** Clock ticks per second of /proc (USER_HZ, 100 on Linux). */
    static final double TICKS = 100;

    /** utime + stime of the consumer processes so far, in clock ticks (/proc/pid/stat); -1 where unreadable. */
    static long processTicks(List<Consumer> consumers) {
        long ticks = 0;
        for (Consumer consumer : consumers) {
            try {
                ticks += CompilerTicks.ticks(
                        Files.readString(Path.of("/proc", Long.toString(consumer.process.pid()), "stat")));
            }
            catch (IOException | RuntimeException ex) {
                return -1;
            }
        }
        return ticks;
    }

    /** The 1-minute load average, or NaN where /proc/loadavg is absent. */
    static double load1() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        }
        catch (IOException | RuntimeException ex) {
            return Double.NaN;
        }
    }

    String table(String version, int runs) {
        List<Integer> clusterMasters = topologies.stream().filter(t -> t.kind().equals("cluster"))
                .map(Topology::masters).distinct().toList();
        String clusters = and(clusterMasters.stream().map(Object::toString).toList());
        List<String> deployments = new ArrayList<>();
        if (topologies.contains(Topology.STANDALONE)) {
            deployments.add("standalone Redis");
        }
        if (!clusterMasters.isEmpty()) {
            deployments.add((clusterMasters.size() == 1 ? "a Redis Cluster of " : "Redis Clusters of ") + clusters
                    + " masters");
        }
        StringBuilder out = new StringBuilder();
        out.append("## RMQ on ").append(String.join(" and on ", deployments)).append(", 1 and more consumer JVMs\n\n");
        out.append(String.format(Locale.ROOT, "Redis %s on loopback (%s; all on the same machine), flushed before every"
                + " figure; %d run(s) per figure: median (min–max). Machine: %d cores, Java %s, JVM options %s. %,d"
                + " messages on a %d-slot RANGE_MERGE topic; every consumer JVM is its own"
                + " process with one listener container of concurrency 8, batch 64, after a %d s warm-up. W1B: the"
                + " backlog is sent by another process before GO; W1C: the first consumer JVM sends one message per"
                + " call (async) from the start. Redis CPU: used_cpu_sys + used_cpu_user summed over every master,"
                + " per message handled (W1C: sending included), and in cores (CPU seconds per second), also per"
                + " master in the order of the slot spread. Consumer JVMs'"
                + " CPU: user + system time of the consumer processes (all threads, the sender's included) per"
                + " message; of which JIT: the CPU of those processes' JIT compiler threads (/proc/<pid>/task, sampled"
                + " every 250 ms) over the same phase, per message: a cost paid once per process start that a short"
                + " run reads as CPU per message. Machine:"
                + " cores busy during the figure (/proc/stat, all processes, steal not counted) and the 1-minute load average after"
                + " it.%n%n", version, clusterMasters.isEmpty() ? "standalone: one redis-server"
                        : "cluster: " + clusters + " masters, each master count its own cluster started for the run,"
                        + " no replicas", runs, Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), String.join(" ", main.jvm()), main.intOption("w1", 200_000), slots,
                main.intOption("warmup-seconds", 3)));
        if (!clusterMasters.isEmpty()) {
            out.append("Slots per master (RMQ slot i of the topic is the hash tag {").append(RmqPeer.QUEUE)
                    .append(":i}, on the master that serves CRC16 of it; the busiest master bounds the topic):");
            spreads.forEach((topology, spread) -> {
                if (topology.kind().equals("cluster")) {
                    out.append(' ').append(topology.masters()).append(" masters ").append(spread.describe())
                            .append(';');
                }
            });
            out.setLength(out.length() - 1);
            out.append(".\n\n");
        }
        out.append("| figure | consumer JVMs | topology | masters | slots per master | msgs/s | Redis CPU µs/msg"
                + " | Redis cores | Redis cores per master | consumer JVMs' CPU µs/msg | of which JIT µs/msg"
                + " | machine cores busy | load 1 min |\n| --- | ---: | --- | ---: | --- | ---: | ---: | ---: | --- | ---: |"
                + " ---: | ---: | ---: |\n");
        List<Figure> figures = new ArrayList<>(samples.keySet());
        figures.sort(Comparator.comparing(Figure::workload).thenComparing(Figure::jvms)
                .thenComparing(Figure::masters).thenComparing(Figure::topology, Comparator.reverseOrder()));
        for (Figure figure : figures) {
            List<Sample> list = samples.get(figure);
            SlotSpread spread = spreads.get(new Topology(figure.topology(), figure.masters()));
            out.append("| ").append(figure.workload()).append(" | ").append(figure.jvms()).append(" | ")
                    .append(figure.topology()).append(" | ").append(figure.masters()).append(" | ")
                    .append(spread == null ? "n/a" : spread.counts() + " of " + spread.slots()).append(" | ")
                    .append(BenchmarkMain.cell(list.stream().map(Sample::rate).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::redisMicrosPerMessage).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::redisCores).toList())).append(" | ")
                    .append(perMaster(list)).append(" | ")
                    .append(two(list.stream().map(Sample::clientMicrosPerMessage).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::jitMicrosPerMessage).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::busyCores).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::load1).toList())).append(" |\n");
        }
        appendRates(out, figures);
        if (!notes.isEmpty()) {
            out.append("\nNotes:\n");
            notes.forEach(n -> out.append("- ").append(n).append('\n'));
        }
        return out.toString();
    }

    /**
     * The same rates read against masters (columns) and consumer JVMs (rows): medians, and on a larger cluster its
     * ratio to the smallest cluster measured in the same row.
     */
    private void appendRates(StringBuilder out, List<Figure> figures) {
        List<Topology> columns = new ArrayList<>(topologies);
        columns.sort(Comparator.comparing(Topology::masters).thenComparing(Topology::kind, Comparator.reverseOrder()));
        out.append("\nmsgs/s, median, by topology and consumer JVMs:\n\n| figure | consumer JVMs |");
        columns.forEach(t -> out.append(' ').append(t.label()).append(" |"));
        out.append("\n| --- | ---: |").append(" ---: |".repeat(columns.size())).append('\n');
        figures.stream().map(f -> Map.entry(f.workload(), f.jvms())).distinct().forEach(row -> {
            out.append("| ").append(row.getKey()).append(" | ").append(row.getValue()).append(" |");
            double base = Double.NaN;
            for (Topology column : columns) {
                List<Sample> list = samples.get(new Figure(row.getKey(), row.getValue(), column));
                double rate = list == null ? Double.NaN : BenchmarkMain.median(list.stream().map(Sample::rate).toList());
                if (Double.isNaN(rate)) {
                    out.append(" n/a |");
                    continue;
                }
                out.append(String.format(Locale.ROOT, " %,.0f", rate));
                if (column.kind().equals("cluster")) {
                    if (Double.isNaN(base)) {
                        base = rate;
                    }
                    else {
                        out.append(String.format(Locale.ROOT, " (%.2f×)", rate / base));
                    }
                }
                out.append(" |");
            }
            out.append('\n');
        });
    }

    /** {@code 3, 6 and 12}. */
    private static String and(List<String> items) {
        return items.size() < 2 ? String.join("", items)
                : String.join(", ", items.subList(0, items.size() - 1)) + " and " + items.get(items.size() - 1);
    }

    /** Each master's Redis cores, median over the samples: {@code 0.41/0.52/0.40}. */
    private static String perMaster(List<Sample> list) {
        int masters = list.get(0).masterCores().size();
        List<String> cells = new ArrayList<>();
        for (int m = 0; m < masters; m++) {
            int index = m;
            cells.add(String.format(Locale.ROOT, "%.2f",
                    BenchmarkMain.median(list.stream().map(s -> s.masterCores().get(index)).toList())));
        }
        return String.join("/", cells);
    }

    /** Median (min–max) with two decimals. */
    private static String two(List<Double> values) {
        List<Double> valid = values.stream().filter(v -> !v.isNaN() && !v.isInfinite()).sorted().toList();
        if (valid.isEmpty()) {
            return "n/a";
        }
        String median = String.format(Locale.ROOT, "%.2f", BenchmarkMain.median(valid));
        return valid.size() < 2 ? median : median + String.format(Locale.ROOT, " (%.2f–%.2f)", valid.get(0),
                valid.get(valid.size() - 1));
    }
}
