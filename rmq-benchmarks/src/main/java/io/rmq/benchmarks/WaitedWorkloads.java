package io.rmq.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.benchmarks.BenchmarkMain.Peer;
import io.rmq.test.PrivateCluster;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TestRedisServers;

/**
 * {@code BenchmarkMain --workload waited}: waited batch sends ({@code produce-waited}, PROTOCOL.md), RMQ's
 * {@code sendBatch} against Redisson's {@code addAll}, side by side on a standalone Redis ({@link TestRedisServers})
 * and on a Redis Cluster of {@code --masters} masters ({@link PrivateCluster}, started here, no replicas). RMQ's W1
 * topic (16 slots, hash tags {@code {bench:i}}) spreads over the masters; Redisson's queue is one list, on one master.
 * Each figure runs in a process of its own (the peers' commands of {@link BenchmarkMain}, default JIT, warm-up as
 * PROTOCOL.md), every node flushed before it; per run the topologies alternate their order, and within a topology RMQ
 * and Redisson alternate which goes first, so each pair of a round ran under about the same load. The ratio is the
 * median of the per-round RMQ/Redisson ratios. Besides the peers' own readings (rate, Redis CPU per message summed
 * over the masters, the peer process's CPU per message) it records the machine's load average before each figure and
 * its busy cores over the measured phase ({@code /proc/stat}). Runs on the thread that calls {@link #run}.
 *
 * <p>Options: {@code --topology standalone,cluster --masters 3 --batch 1000 --runs 3 --w1 200000 --warmup-seconds 3
 * --cap-seconds 90} ({@code --batch} takes a list: 100,1000,10000); {@code --peers rmq} runs RMQ alone.
 */
final class WaitedWorkloads {

    /** Long enough that a master busy on a loaded machine is never suspected by the others (no replicas anyway). */
    private static final Duration NODE_TIMEOUT = Duration.ofSeconds(30);

    /** One figure: a peer's waited batches of one size on one topology. */
    record Figure(String topology, int batch, String peer) {
    }

    /** One run of a figure. */
    record Sample(int round, double rate, double redisMicros, double busiestRedisMicros, double clientMicros,
            double load1, double busyCores) {
    }

    private final BenchmarkMain main;
    final Map<Figure, List<Sample>> samples = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private final Map<String, List<RedisEndpoint>> nodes = new LinkedHashMap<>();
    private final Map<RedisEndpoint, StatefulRedisConnection<String, String>> admin = new LinkedHashMap<>();
    private final List<PrivateCluster> clusters = new ArrayList<>();
    private final int masters;

    WaitedWorkloads(BenchmarkMain main) {
        this.main = main;
        this.masters = main.intOption("masters", 3);
    }

    String run() throws Exception {
        List<String> topologies = List.of(main.options.getOrDefault("topology", "standalone,cluster").split(","));
        List<Integer> batches = new ArrayList<>();
        for (String size : main.options.getOrDefault("batch", "1000").split(",")) {
            batches.add(Integer.parseInt(size.trim()));
        }
        int runs = main.intOption("runs", 3);
        // --peers rmq runs RMQ alone (the smoke test); a Redisson peer that is not built is said in the notes
        List<Peer> peers = new ArrayList<>();
        for (Peer peer : main.peers()) {
            if (!peer.name().equals("RMQ") && !peer.name().equals("Redisson")) {
                continue;
            }
            if (peer.missing() != null) {
                notes.add(peer.name() + " not run: " + peer.missing());
                continue;
            }
            peers.add(peer);
        }
        if (peers.stream().noneMatch(p -> p.name().equals("RMQ"))) {
            throw new IllegalStateException("the RMQ peer cannot run: " + main.peers());
        }
        RedisClient adminClient = RedisClient.create();
        try {
            for (String topology : topologies) {
                List<RedisEndpoint> endpoints;
                switch (topology.trim()) {
                    case "standalone" -> endpoints = List.of(TestRedisServers.standalone());
                    case "cluster" -> {
                        PrivateCluster cluster = PrivateCluster.start(masters, 0, NODE_TIMEOUT);
                        clusters.add(cluster);
                        endpoints = cluster.seeds().stream().map(u -> new RedisEndpoint(u.getHost(), u.getPort()))
                                .toList();
                    }
                    default -> throw new IllegalArgumentException("--topology standalone|cluster, not " + topology);
                }
                nodes.put(label(topology.trim()), endpoints);
                for (RedisEndpoint endpoint : endpoints) {
                    admin.put(endpoint, adminClient.connect(RedisURI.create(endpoint.host(), endpoint.port())));
                }
                if (topology.trim().equals("cluster")) {
                    SlotSpread spread = SlotSpread.of(RmqPeer.QUEUE, 16,
                            endpoints.stream().map(e -> admin.get(e).sync().clusterNodes()).toList());
                    notes.add(label("cluster") + " on " + endpoints + ": RMQ's topic " + spread.describe());
                }
            }
            for (int run = 1; run <= runs; run++) {
                List<String> order = new ArrayList<>(nodes.keySet());
                List<Peer> peerOrder = new ArrayList<>(peers);
                if (run % 2 == 0) {
                    java.util.Collections.reverse(order);
                    java.util.Collections.reverse(peerOrder);
                }
                for (String topology : order) {
                    for (int batch : batches) {
                        for (Peer peer : peerOrder) {
                            BenchmarkMain.log("run " + run + "/" + runs + ": " + peer.name() + ", " + topology
                                    + ", batches of " + batch);
                            Sample sample = measure(peer, topology, batch, run);
                            if (sample != null) {
                                samples.computeIfAbsent(new Figure(topology, batch, peer.name()),
                                        f -> new ArrayList<>()).add(sample);
                            }
                        }
                    }
                }
            }
            String version = "?";
            for (String line : admin.values().iterator().next().sync().info("server").split("\\r?\\n")) {
                if (line.startsWith("redis_version:")) {
                    version = line.substring(14).trim();
                }
            }
            return main.writeTable(table(version, runs, batches), "rmq-benchmarks/target/waited-results.md");
        }
        finally {
            admin.values().forEach(StatefulRedisConnection::close);
            adminClient.shutdown();
            clusters.forEach(PrivateCluster::close);
        }
    }

    private String label(String topology) {
        return topology.equals("standalone") ? "standalone" : masters + "-master cluster";
    }

    private Sample measure(Peer peer, String topology, int batch, int round) throws Exception {
        List<RedisEndpoint> endpoints = nodes.get(topology);
        for (RedisEndpoint endpoint : endpoints) {
            admin.get(endpoint).sync().flushall();
        }
        int n = main.intOption("w1", 200_000);
        int cap = main.intOption("cap-seconds", 90);
        int warmup = main.intOption("warmup-seconds", 3);
        List<String> command = new ArrayList<>(peer.command());
        command.addAll(List.of("produce-waited", "--host", endpoints.get(0).host(), "--port",
                Integer.toString(endpoints.get(0).port()), "--messages", Integer.toString(n), "--batch",
                Integer.toString(batch), "--seconds", Integer.toString(cap), "--warmup-seconds",
                Integer.toString(warmup)));
        if (!topology.equals("standalone")) {
            command.addAll(List.of("--cluster",
                    endpoints.stream().map(RedisEndpoint::hostPort).collect(Collectors.joining(","))));
        }
        double load1 = load1();
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        long[][] stat = new long[2][];
        CompletableFuture<String> result = CompletableFuture.supplyAsync(() -> read(process, stat));
        long timeout = cap * 3L + warmup * 2L + 180;
        if (!process.waitFor(timeout, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            notes.add(peer.name() + ", " + topology + ", batches of " + batch + ": timed out after " + timeout + " s");
            return null;
        }
        String line = result.get(10, TimeUnit.SECONDS);
        if (line == null || process.exitValue() != 0) {
            notes.add(peer.name() + ", " + topology + ", batches of " + batch + ": failed (exit "
                    + process.exitValue() + ")");
            return null;
        }
        Map<String, String> r = BenchmarkMain.parse(line);
        double busy = BenchmarkMain.busyCores(stat[0], stat[1]);
        BenchmarkMain.log(String.format(Locale.ROOT, "  %s [load1 before %.2f, %.2f cores busy]", line, load1, busy));
        return new Sample(round, BenchmarkMain.number(r, "rate"), BenchmarkMain.number(r, "redisUsPerMsg"),
                BenchmarkMain.number(r, "busiestRedisUsPerMsg"), BenchmarkMain.number(r, "clientUsPerMsg"), load1,
                busy);
    }

    /** The peer's output until its RESULT line ({@code stat}: /proc/stat at MEASURING and at RESULT). */
    private static String read(Process process, long[][] stat) {
        List<String> tail = new ArrayList<>();
        String result = null;
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.trim().equals("MEASURING")) {
                    stat[0] = BenchmarkMain.procStat();
                }
                else if (line.startsWith("RESULT ") && result == null) {
                    stat[1] = BenchmarkMain.procStat();
                    result = line.substring(7).trim();
                }
                else if (line.startsWith("produce-waited:")) {
                    BenchmarkMain.log("    " + line); // RMQ's commandstats per 1,000 messages
                }
                else {
                    tail.add(line);
                    if (tail.size() > 15) {
                        tail.remove(0);
                    }
                }
            }
        }
        catch (IOException ex) {
            // the process ended
        }
        if (result == null) {
            tail.forEach(l -> BenchmarkMain.log("    | " + l));
        }
        return result;
    }

    private static double load1() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        }
        catch (IOException | RuntimeException ex) {
            return Double.NaN;
        }
    }

    String table(String version, int runs, List<Integer> batches) {
        StringBuilder out = new StringBuilder();
        out.append("## Waited batch sends: RMQ sendBatch vs Redisson addAll, standalone and cluster\n\n");
        out.append(String.format(Locale.ROOT, "Redis %s on loopback; cluster: %d masters, no replicas, started for the"
                + " run. %d run(s) per figure, each figure its own JVM (%s, default JIT, %d s warm-up), every node"
                + " flushed before it; %,d messages per figure in waited batches. Cells: median (min–max). Ratio: the"
                + " median (min–max) of the per-round RMQ/Redisson rate ratios. Redis CPU: summed over the masters"
                + " RMQ's busiest master in brackets; Redisson's queue is one list, on one master. Load: 1-minute load average before each figure; busy: cores the"
                + " machine kept busy over the measured phase (of %d).%n%n", version, masters, runs,
                String.join(" ", main.jvm()), main.intOption("warmup-seconds", 3), main.intOption("w1", 200_000),
                Runtime.getRuntime().availableProcessors()));
        out.append("| topology | batch | RMQ msgs/s | Redisson msgs/s | RMQ/Redisson | Redis µs/msg RMQ (busiest) |"
                + " Redis µs/msg Redisson | client µs/msg RMQ / Redisson | load 1 min | busy cores |\n");
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
        for (String topology : nodes.keySet()) {
            for (int batch : batches) {
                List<Sample> rmq = samples.getOrDefault(new Figure(topology, batch, "RMQ"), List.of());
                List<Sample> redisson = samples.getOrDefault(new Figure(topology, batch, "Redisson"), List.of());
                List<Double> ratios = new ArrayList<>();
                for (Sample a : rmq) {
                    for (Sample b : redisson) {
                        if (a.round() == b.round()) {
                            ratios.add(a.rate() / b.rate());
                        }
                    }
                }
                List<Double> loads = new ArrayList<>();
                List<Double> busy = new ArrayList<>();
                for (Sample s : rmq) {
                    loads.add(s.load1());
                    busy.add(s.busyCores());
                }
                for (Sample s : redisson) {
                    loads.add(s.load1());
                    busy.add(s.busyCores());
                }
                out.append(String.format(Locale.ROOT, "| %s | %,d | %s | %s | %s | %s (%s) | %s | %s / %s | %s | %s |%n",
                        topology, batch, BenchmarkMain.cell(values(rmq, Sample::rate)),
                        BenchmarkMain.cell(values(redisson, Sample::rate)), ratio(ratios),
                        micros(values(rmq, Sample::redisMicros)), micros(values(rmq, Sample::busiestRedisMicros)),
                        micros(values(redisson, Sample::redisMicros)),
                        micros(values(rmq, Sample::clientMicros)), micros(values(redisson, Sample::clientMicros)),
                        range(loads), range(busy)));
            }
        }
        out.append("\nPer round (msgs/s, RMQ / Redisson, ratio):\n\n");
        for (String topology : nodes.keySet()) {
            for (int batch : batches) {
                List<Sample> rmq = samples.getOrDefault(new Figure(topology, batch, "RMQ"), List.of());
                List<Sample> redisson = samples.getOrDefault(new Figure(topology, batch, "Redisson"), List.of());
                for (Sample a : rmq) {
                    for (Sample b : redisson) {
                        if (a.round() == b.round()) {
                            out.append(String.format(Locale.ROOT, "- %s, %,d, round %d: %,.0f / %,.0f = %.2f (load"
                                    + " %.2f / %.2f)%n", topology, batch, a.round(), a.rate(), b.rate(),
                                    a.rate() / b.rate(), a.load1(), b.load1()));
                        }
                    }
                }
            }
        }
        if (!notes.isEmpty()) {
            out.append("\nNotes:\n");
            notes.forEach(n -> out.append("- ").append(n).append('\n'));
        }
        return out.toString();
    }

    private static List<Double> values(List<Sample> samples, java.util.function.ToDoubleFunction<Sample> field) {
        return samples.stream().map(s -> field.applyAsDouble(s)).toList();
    }

    /** Medians with two decimals (µs figures are small). */
    private static String micros(List<Double> values) {
        List<Double> valid = values.stream().filter(v -> !v.isNaN()).sorted().toList();
        if (valid.isEmpty()) {
            return "n/a";
        }
        String median = String.format(Locale.ROOT, "%.2f", BenchmarkMain.median(valid));
        return valid.size() < 2 ? median : median + String.format(Locale.ROOT, " (%.2f–%.2f)", valid.get(0),
                valid.get(valid.size() - 1));
    }

    private static String ratio(List<Double> values) {
        return micros(values);
    }

    private static String range(List<Double> values) {
        List<Double> valid = values.stream().filter(v -> !v.isNaN()).sorted().toList();
        return valid.isEmpty() ? "n/a" : String.format(Locale.ROOT, "%.1f–%.1f", valid.get(0),
                valid.get(valid.size() - 1));
    }
}
