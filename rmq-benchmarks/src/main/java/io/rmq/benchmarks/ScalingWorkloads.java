package io.rmq.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TestRedisServers;

/**
 * {@code BenchmarkMain --workload scaling}: RMQ's W1B (consume a backlog) and W1C (produce one at a time while
 * consuming) on a standalone Redis and on a 3-master Redis Cluster (both started here as the tests start them,
 * {@link TestRedisServers}), with 1, 2, .. consumer JVMs: separate processes, each a listener container of
 * concurrency 8 on the same 16-slot topic ({@code RmqPeer consume-shared}). In W1C the first consumer process also
 * sends. Per figure it records the rate (all processes' messages over the time from GO, or the first send, to the
 * last message any of them handled), the Redis CPU per message summed over every master ({@code INFO cpu}), and the
 * machine's load ({@code /proc/stat} busy cores during the figure, {@code /proc/loadavg} after it).
 *
 * <p>Options: {@code --topology standalone,cluster --consumer-jvms 1,2 --runs 2 --w1 200000 --warmup-seconds 3
 * --cap-seconds 90}; the order of the topologies alternates between runs.
 */
final class ScalingWorkloads {

    /** One row of the table. */
    record Figure(String workload, int jvms, String topology) {
    }

    /** One measurement of a figure. */
    record Sample(double rate, long count, double redisMicrosPerMessage, double redisCores,
            double clientMicrosPerMessage, double busyCores, double load1) {
    }

    static final String W1B = "W1B consume";
    static final String W1C = "W1C produce + consume";

    private final BenchmarkMain main;
    final Map<Figure, List<Sample>> samples = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private final Map<String, List<RedisEndpoint>> nodes = new LinkedHashMap<>();
    private final Map<RedisEndpoint, StatefulRedisConnection<String, String>> admin = new LinkedHashMap<>();
    private final RedisClient adminClient = RedisClient.create();

    ScalingWorkloads(BenchmarkMain main) {
        this.main = main;
    }

    String run() throws Exception {
        List<String> topologies = List.of(main.options.getOrDefault("topology", "standalone,cluster").split(","));
        List<Integer> jvms = new ArrayList<>();
        for (String k : main.options.getOrDefault("consumer-jvms", "1,2").split(",")) {
            jvms.add(Integer.parseInt(k.trim()));
        }
        int runs = main.intOption("runs", 2);
        try {
            for (String topology : topologies) {
                List<RedisEndpoint> endpoints = switch (topology) {
                    case "standalone" -> List.of(TestRedisServers.standalone());
                    case "cluster" -> TestRedisServers.clusterNodes();
                    default -> throw new IllegalArgumentException("--topology standalone|cluster, not " + topology);
                };
                nodes.put(topology, endpoints);
                for (RedisEndpoint endpoint : endpoints) {
                    admin.put(endpoint, adminClient.connect(RedisURI.create(endpoint.host(), endpoint.port())));
                }
            }
            String version = info(admin.keySet().iterator().next(), "server", "redis_version");
            BenchmarkMain.log("Redis " + version + ", topologies " + nodes + ", consumer JVMs " + jvms + ", " + runs
                    + " run(s)");
            for (int run = 1; run <= runs; run++) {
                List<String> order = new ArrayList<>(topologies);
                if (run % 2 == 0) {
                    java.util.Collections.reverse(order);
                }
                for (String topology : order) {
                    for (int k : jvms) {
                        for (String workload : List.of(W1B, W1C)) {
                            BenchmarkMain.log("run " + run + "/" + runs + ": " + workload + ", " + topology + ", " + k
                                    + " consumer JVM(s)");
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
        }
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

    private List<String> peerCommand(String workload, String topology) {
        List<RedisEndpoint> endpoints = nodes.get(topology);
        List<String> command = new ArrayList<>(main.rmqPeer().command());
        command.addAll(List.of(workload, "--host", endpoints.get(0).host(), "--port",
                Integer.toString(endpoints.get(0).port()), "--messages", Integer.toString(main.intOption("w1", 200_000)),
                "--concurrency", "8"));
        if (topology.equals("cluster")) {
            command.addAll(List.of("--cluster",
                    endpoints.stream().map(RedisEndpoint::hostPort).collect(Collectors.joining(","))));
        }
        return command;
    }

    private Sample measure(String workload, String topology, int jvms) throws Exception {
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
                        "--produce", Boolean.toString(workload.equals(W1C) && i == 0)));
                consumers.add(new Consumer(new ProcessBuilder(command).redirectErrorStream(true).start()));
            }
            for (Consumer consumer : consumers) {
                if (!consumer.ready.await(warmup * 3L + 120, TimeUnit.SECONDS) || !consumer.process.isAlive()) {
                    consumer.logTail();
                    notes.add(workload + ", " + topology + ", " + jvms + " JVM(s): a consumer did not start");
                    return null;
                }
            }
            if (workload.equals(W1B) && !fill(topology)) {
                notes.add(workload + ", " + topology + ", " + jvms + " JVM(s): the backlog was not sent");
                return null;
            }
            Map<RedisEndpoint, Double> cpuBefore = redisCpu(topology);
            long[] statBefore = BenchmarkMain.procStat();
            long clientBefore = processTicks(consumers);
            long wallBefore = System.nanoTime();
            consumers.forEach(c -> c.send("GO"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(cap);
            while (consumers.stream().mapToLong(c -> c.handled).sum() < n && System.nanoTime() < deadline
                    && consumers.stream().allMatch(c -> c.process.isAlive())) {
                Thread.sleep(10);
            }
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
                    notes.add(workload + ", " + topology + ", " + jvms + " JVM(s): consumer " + i + " failed");
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
                notes.add(workload + ", " + topology + ", " + jvms + " JVM(s): stopped at the " + cap + " s cap after "
                        + count + " of " + n + " messages");
            }
            double redisSeconds = 0;
            for (RedisEndpoint endpoint : cpuBefore.keySet()) {
                redisSeconds += cpuAfter.get(endpoint) - cpuBefore.get(endpoint);
            }
            double wallSeconds = (wallAfter - wallBefore) / 1e9;
            double busyCores = BenchmarkMain.busyCores(statBefore, statAfter);
            Sample sample = new Sample(count / ((last - start) / 1e6), count, redisSeconds * 1e6 / count,
                    redisSeconds / wallSeconds, clientTicks < 0 ? Double.NaN : clientTicks * 1e6 / TICKS / count,
                    busyCores, load1);
            BenchmarkMain.log(String.format(Locale.ROOT, "  %,.0f msgs/s (%d msgs), Redis %.2f µs/msg (%.2f cores),"
                    + " consumer JVMs %.1f µs/msg, machine %.2f cores busy, load %.2f", sample.rate(), count,
                    sample.redisMicrosPerMessage(), sample.redisCores(), sample.clientMicrosPerMessage(), busyCores,
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
    private boolean fill(String topology) throws Exception {
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
    private Map<RedisEndpoint, Double> redisCpu(String topology) {
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
                String stat = Files.readString(Path.of("/proc", Long.toString(consumer.process.pid()), "stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15: utime, stime
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
        StringBuilder out = new StringBuilder();
        out.append("## RMQ on standalone Redis and on a 3-master Redis Cluster, 1 and more consumer JVMs\n\n");
        out.append(String.format(Locale.ROOT, "Redis %s on loopback (cluster: 3 masters, no replicas, on the same"
                + " machine), flushed before every figure; %d run(s) per figure: median (min–max). Machine: %d cores,"
                + " Java %s, JVM options %s. %,d messages on a 16-slot RANGE_MERGE topic; every consumer JVM is its own"
                + " process with one listener container of concurrency 8, batch 64, after a %d s warm-up. W1B: the"
                + " backlog is sent by another process before GO; W1C: the first consumer JVM sends one message per"
                + " call (async) from the start. Redis CPU: used_cpu_sys + used_cpu_user summed over every master,"
                + " per message handled (W1C: sending included), and in cores (CPU seconds per second). Consumer JVMs'"
                + " CPU: user + system time of the consumer processes (all threads, the sender's included) per"
                + " message. Machine:"
                + " cores busy during the figure (/proc/stat, all processes, steal not counted) and the 1-minute load average after"
                + " it.%n%n", version, runs, Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), String.join(" ", main.jvm()), main.intOption("w1", 200_000),
                main.intOption("warmup-seconds", 3)));
        out.append("| figure | consumer JVMs | topology | msgs/s | Redis CPU µs/msg | Redis cores | consumer JVMs' CPU"
                + " µs/msg | machine cores busy | load 1 min |\n| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        List<Figure> figures = new ArrayList<>(samples.keySet());
        figures.sort(java.util.Comparator.comparing(Figure::workload).thenComparing(Figure::jvms)
                .thenComparing(Figure::topology, java.util.Comparator.reverseOrder()));
        for (Figure figure : figures) {
            List<Sample> list = samples.get(figure);
            out.append("| ").append(figure.workload()).append(" | ").append(figure.jvms()).append(" | ")
                    .append(figure.topology()).append(" | ")
                    .append(BenchmarkMain.cell(list.stream().map(Sample::rate).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::redisMicrosPerMessage).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::redisCores).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::clientMicrosPerMessage).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::busyCores).toList())).append(" | ")
                    .append(two(list.stream().map(Sample::load1).toList())).append(" |\n");
        }
        if (!notes.isEmpty()) {
            out.append("\nNotes:\n");
            notes.forEach(n -> out.append("- ").append(n).append('\n'));
        }
        return out.toString();
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
