package io.rmq.test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;

/**
 * A Redis Cluster of a test's own (not the shared one of {@link TestRedisServers}, which has no replicas and must not
 * be frozen or killed), for tests that freeze, kill or fail over its nodes: {@code masters} masters splitting the hash
 * slots as redis-cli does, each with {@code replicasPerMaster} replicas. Nodes are {@code redis-server} processes found
 * like the shared ones', on free loopback ports, stopped by {@link #close()} (and by the JVM's shutdown hook, should
 * the test not get there). Freezing and thawing go by PID ({@code kill -STOP/-CONT}); {@link #killMaster} is a
 * kill -9, after which the master's replica is promoted once the cluster's node timeout has passed.
 */
public final class PrivateCluster implements AutoCloseable {

    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(60);

    private final List<RedisServerProcess> masters = new ArrayList<>();
    private final List<RedisServerProcess> replicas = new ArrayList<>();

    private PrivateCluster() {
    }

    /**
     * Starts and forms the cluster. {@code nodeTimeout} is {@code cluster-node-timeout} (how long until a silent
     * master counts as failed and its replica is promoted). The cluster keeps serving the slots of live masters while
     * one is down ({@code cluster-require-full-coverage no}), as a production cluster that wants partial availability
     * does.
     */
    public static PrivateCluster start(int masters, int replicasPerMaster, Duration nodeTimeout) throws IOException {
        PrivateCluster cluster = new PrivateCluster();
        List<String> args = List.of("--cluster-node-timeout", Long.toString(nodeTimeout.toMillis()),
                "--cluster-require-full-coverage", "no");
        try {
            for (int i = 0; i < masters; i++) {
                cluster.masters.add(cluster.launch(args));
            }
            for (int i = 0; i < masters * replicasPerMaster; i++) {
                cluster.replicas.add(cluster.launch(args));
            }
            cluster.form(replicasPerMaster);
            return cluster;
        }
        catch (IOException | RuntimeException ex) {
            cluster.close();
            throw ex;
        }
    }

    private RedisServerProcess launch(List<String> args) throws IOException {
        RedisServerProcess server = RedisServerProcess.start(TestRedisServers.redisServerExecutable(),
                TestRedisServers.workRoot(), true, args);
        TestRedisServers.track(server);
        return server;
    }

    private void form(int replicasPerMaster) {
        long deadline = System.nanoTime() + FORM_TIMEOUT.toNanos();
        List<RedisServerProcess> all = new ArrayList<>(masters);
        all.addAll(replicas);
        for (int i = 0; i < masters.size(); i++) {
            int index = i;
            call(masters.get(i), c -> {
                try {
                    c.clusterSetConfigEpoch(index + 1);
                }
                catch (RuntimeException ignored) {
                    // only an optimisation
                }
                return c.clusterAddSlots(TestRedisServers.slotRange(index, masters.size()));
            });
        }
        for (RedisServerProcess node : all.subList(1, all.size())) {
            call(all.get(0), c -> c.clusterMeet(node.endpoint().host(), node.endpoint().port()));
        }
        await(deadline, "every node knows every other", () -> all.stream().allMatch(
                n -> call(n, c -> c.clusterNodes().lines().filter(l -> !l.contains("handshake")).count()) == all.size()));
        for (int r = 0; r < replicas.size(); r++) {
            String masterId = call(masters.get(r / replicasPerMaster), RedisCommands::clusterMyId);
            RedisServerProcess replica = replicas.get(r);
            await(deadline, "REPLICATE", () -> {
                try {
                    return "OK".equals(call(replica, c -> c.clusterReplicate(masterId)));
                }
                catch (RuntimeException ex) {
                    return false; // the replica does not know the master yet
                }
            });
        }
        await(deadline, "cluster_state:ok everywhere, replicas in sync", () -> all.stream()
                .allMatch(n -> call(n, RedisCommands::clusterInfo).contains("cluster_state:ok"))
                && replicas.stream().allMatch(n -> call(n, c -> c.info("replication"))
                        .contains("master_link_status:up")));
        // a cluster client sees every master serving its slots (gossip has spread to the node it asks)
        await(deadline, "a cluster client works", () -> {
            RedisClusterClient client = newClient();
            try {
                return client.getPartitions().size() == all.size() && coversEverySlot(client)
                        && client.connect().sync().ping().equals("PONG");
            }
            finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        });
    }

    /** Seed URIs: every node. */
    public List<RedisURI> seeds() {
        List<RedisURI> seeds = new ArrayList<>();
        masters.forEach(n -> seeds.add(RedisURI.create(n.endpoint().host(), n.endpoint().port())));
        replicas.forEach(n -> seeds.add(RedisURI.create(n.endpoint().host(), n.endpoint().port())));
        return seeds;
    }

    /**
     * A new cluster client on the shared test client resources, its topology covering every hash slot; the caller
     * shuts it down. (A client's first topology is one node's view; on a loaded machine a view taken just after the
     * cluster formed could miss a slot's owner, and the first command for that slot fails with "Cannot determine a
     * partition": seen once in a CI run.)
     */
    public RedisClusterClient newClient() {
        RedisClusterClient client = RedisClusterClient.create(TestRedisServers.resources(), seeds());
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!coversEverySlot(client) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
            client.refreshPartitions();
        }
        return client;
    }

    private static boolean coversEverySlot(RedisClusterClient client) {
        for (int slot = 0; slot < 16384; slot++) {
            if (client.getPartitions().getPartitionBySlot(slot) == null) {
                return false;
            }
        }
        return true;
    }

    /** Index of the master that serves hash slot {@code clusterSlot} as formed (before any failover). */
    public int masterOf(int clusterSlot) {
        for (int i = 0; i < masters.size(); i++) {
            int[] range = TestRedisServers.slotRange(i, masters.size());
            if (clusterSlot >= range[0] && clusterSlot <= range[range.length - 1]) {
                return i;
            }
        }
        throw new IllegalArgumentException("hash slot " + clusterSlot);
    }

    public long masterPid(int index) {
        return masters.get(index).pid();
    }

    public int masterPort(int index) {
        return masters.get(index).endpoint().port();
    }

    public String masterNodeId(int index) {
        return call(masters.get(index), RedisCommands::clusterMyId);
    }

    /** kill -9 of master {@code index}: its replica is promoted after the node timeout (see {@link #replicaPromoted}). */
    public void killMaster(int index) {
        masters.get(index).kill();
    }

    /** Whether a replica of master {@code index} has become a master (false while it cannot be asked). */
    public boolean replicaPromoted(int index) {
        int perMaster = replicas.size() / masters.size();
        return replicas.subList(index * perMaster, (index + 1) * perMaster).stream().anyMatch(replica -> {
            try {
                return call(replica, c -> c.info("replication")).contains("role:master");
            }
            catch (RuntimeException ex) {
                return false;
            }
        });
    }

    /** SIGSTOP: the master keeps its connections open and answers nothing until {@link #thawMaster}. */
    public void freezeMaster(int index) {
        signal(masterPid(index), "STOP");
    }

    /** SIGCONT. */
    public void thawMaster(int index) {
        signal(masterPid(index), "CONT");
    }

    private static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
            }
        }
        catch (IOException ex) {
            throw new IllegalStateException("kill -" + signal + " " + pid + ": " + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }

    private static <T> T call(RedisServerProcess node, Function<RedisCommands<String, String>, T> action) {
        RedisClient client = RedisClient.create(TestRedisServers.resources(),
                RedisURI.create(node.endpoint().host(), node.endpoint().port()));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return action.apply(connection.sync());
        }
        finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static void await(long deadlineNanos, String what, java.util.function.BooleanSupplier condition) {
        while (System.nanoTime() < deadlineNanos) {
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
        throw new IllegalStateException("private cluster: " + what + " not reached within " + FORM_TIMEOUT);
    }

    /** Thaws (in case a test left a node frozen) and stops every node that is still alive. */
    @Override
    public void close() {
        List<RedisServerProcess> all = new ArrayList<>(masters);
        all.addAll(replicas);
        for (RedisServerProcess node : all) {
            if (node.isAlive()) {
                try {
                    signal(node.pid(), "CONT");
                }
                catch (RuntimeException ignored) {
                    // gone meanwhile
                }
            }
            node.stopQuietly();
            TestRedisServers.untrack(node);
        }
    }
}
