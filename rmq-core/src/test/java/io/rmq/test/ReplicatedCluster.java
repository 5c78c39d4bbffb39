package io.rmq.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A Redis Cluster of a test's own, with a replica per master, for tests that kill a master and watch its replica take
 * over (the shared cluster of {@link TestRedisServers} has no replicas and must not be killed). Nodes are
 * {@code redis-server} processes found as the shared ones' are, on free loopback ports, with a short
 * {@code cluster-node-timeout} and {@code cluster-require-full-coverage no} (the live masters keep serving while one
 * is down). {@link #close()} kills them all (a shutdown hook too, should the test not get there).
 */
public final class ReplicatedCluster implements AutoCloseable {

    private static final long FORM_TIMEOUT_MILLIS = 60_000;

    private final Path dir;
    private final List<Node> masters = new ArrayList<>();
    private final List<Node> replicas = new ArrayList<>();
    private final Thread hook = new Thread(this::killAll, "rmq-test-replicated-cluster");

    private record Node(int port, Process process) {

        RedisURI uri() {
            return RedisURI.create(RedisServerProcess.HOST, port);
        }
    }

    private ReplicatedCluster(Path dir) {
        this.dir = dir;
    }

    /** Starts {@code masters} masters, each with one replica, and waits until the cluster is ok and in sync. */
    public static ReplicatedCluster start(int masters, Duration nodeTimeout) throws IOException {
        ReplicatedCluster cluster = new ReplicatedCluster(Files.createTempDirectory("rmq-replicated-cluster-"));
        Runtime.getRuntime().addShutdownHook(cluster.hook);
        try {
            for (int i = 0; i < masters; i++) {
                cluster.masters.add(cluster.launch(nodeTimeout));
                cluster.replicas.add(cluster.launch(nodeTimeout));
            }
            cluster.form();
            return cluster;
        }
        catch (IOException | RuntimeException ex) {
            cluster.close();
            throw ex;
        }
    }

    private Node launch(Duration nodeTimeout) throws IOException {
        int port = TestRedisServers.freePort(true);
        Path nodeDir = Files.createDirectories(dir.resolve(Integer.toString(port)));
        Process process = new ProcessBuilder(TestRedisServers.redisServerExecutable().toString(), "--port",
                Integer.toString(port), "--bind", RedisServerProcess.HOST, "--save", "", "--appendonly", "no",
                "--daemonize", "no", "--protected-mode", "no", "--dir", nodeDir.toString(), "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
                Long.toString(nodeTimeout.toMillis()), "--cluster-require-full-coverage", "no")
                .directory(nodeDir.toFile()).redirectErrorStream(true)
                .redirectOutput(nodeDir.resolve("redis.log").toFile()).start();
        Node node = new Node(port, process);
        await(() -> "PONG".equals(call(node, RedisCommands::ping)), "PING on " + port);
        return node;
    }

    private void form() {
        List<Node> all = new ArrayList<>(masters);
        all.addAll(replicas);
        for (int i = 0; i < masters.size(); i++) {
            int[] slots = TestRedisServers.slotRange(i, masters.size());
            call(masters.get(i), c -> c.clusterAddSlots(slots));
        }
        for (Node node : all.subList(1, all.size())) {
            call(all.get(0), c -> c.clusterMeet(RedisServerProcess.HOST, node.port()));
        }
        await(() -> all.stream().allMatch(n -> call(n, c -> c.clusterNodes().lines().count()) == all.size()), "MEET");
        for (int i = 0; i < masters.size(); i++) {
            String masterId = call(masters.get(i), RedisCommands::clusterMyId);
            Node replica = replicas.get(i);
            await(() -> "OK".equals(call(replica, c -> c.clusterReplicate(masterId))), "REPLICATE");
        }
        await(() -> all.stream().allMatch(n -> call(n, RedisCommands::clusterInfo).contains("cluster_state:ok"))
                && replicas.stream().allMatch(n -> call(n, c -> c.info("replication"))
                        .contains("master_link_status:up")), "cluster ok with replicas in sync");
    }

    /** Every node, masters first: seeds for a cluster client. */
    public List<RedisURI> seeds() {
        List<RedisURI> seeds = new ArrayList<>();
        masters.forEach(n -> seeds.add(n.uri()));
        replicas.forEach(n -> seeds.add(n.uri()));
        return seeds;
    }

    public int masterPort(int index) {
        return masters.get(index).port();
    }

    public String masterNodeId(int index) {
        return call(masters.get(index), RedisCommands::clusterMyId);
    }

    /** kill -9 of a master: its replica is promoted after the node timeout. */
    public void killMaster(int index) throws InterruptedException {
        Process process = masters.get(index).process();
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Whether the replica of master {@code index} has become a master. */
    public boolean replicaPromoted(int index) {
        try {
            return call(replicas.get(index), c -> c.info("replication")).contains("role:master");
        }
        catch (RuntimeException ex) {
            return false;
        }
    }

    private static <T> T call(Node node, Function<RedisCommands<String, String>, T> action) {
        RedisClient client = RedisClient.create(node.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return action.apply(connection.sync());
        }
        finally {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.currentTimeMillis() + FORM_TIMEOUT_MILLIS;
        while (System.currentTimeMillis() < deadline) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            }
            catch (RuntimeException ignored) {
                // not yet
            }
            try {
                Thread.sleep(100);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", ex);
            }
        }
        throw new IllegalStateException("replicated cluster: " + what + " not reached within "
                + FORM_TIMEOUT_MILLIS / 1000 + " s");
    }

    private void killAll() {
        for (Node node : masters) {
            node.process().destroyForcibly();
        }
        for (Node node : replicas) {
            node.process().destroyForcibly();
        }
    }

    @Override
    public void close() {
        killAll();
        for (Node node : masters) {
            waitQuietly(node.process());
        }
        for (Node node : replicas) {
            waitQuietly(node.process());
        }
        RedisServerProcess.deleteRecursively(dir);
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        catch (IllegalStateException ignored) {
            // the JVM is shutting down
        }
    }

    private static void waitQuietly(Process process) {
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
