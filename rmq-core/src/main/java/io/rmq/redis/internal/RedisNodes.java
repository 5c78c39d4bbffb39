package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). Used by listener containers' loop threads (which node
 * serves a slot, a refresh while a pop waits on a node that may have died), the health check's, the endpoint's and
 * the meters' threads, senders' threads on a failed send (how full the key's node is), and start-up. Its only state is
 * the on-demand refresh's (under {@code refreshLock}) and the set of clients already warned about (under its own
 * lock); the rest reads the client's current view of the cluster, so it is thread-safe.
 * <p>
 * The nodes behind a {@link RedisGateway}'s connection: which cluster master serves a key, following a failover (a
 * topology refresh on demand, at most one under way and at least {@link #REFRESH_ON_DEMAND_EVERY_MILLIS} apart; a
 * warning for a caller's cluster client that would not follow one), and the work that must reach a node by itself
 * rather than a key: the health check of every node (PING, the script cache), the commands of every node (INFO, SCAN)
 * and {@code INFO memory} of the node that serves a key. None of it is on a send's, pop's or ack's way; one per
 * engine ({@link RmqRedis#nodes()}), over its gateway.
 */
public final class RedisNodes {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RedisNodes.class);

    private final RedisGateway gateway;

    public RedisNodes(RedisGateway gateway) {
        this.gateway = gateway;
    }

    // ---------------------------------------------------------------- following a failover

    /**
     * Least time between two topology refreshes asked for through {@link #refreshTopology()}: while a pop waits on
     * a node that may have died, its container asks about once a second, so that the replica's promotion is seen
     * within about a second (the client's own periodic refresh is slower).
     */
    static final long REFRESH_ON_DEMAND_EVERY_MILLIS = 1000;
    private final Object refreshLock = new Object();
    private CompletableFuture<Void> refreshUnderWay = CompletableFuture.completedFuture(null); // refreshLock
    private long lastRefreshMillis;                                                               // refreshLock

    /**
     * The node id of the cluster master that serves {@code key} in the client's current view, or null (standalone or
     * Sentinel, or a slot no node serves).
     */
    public @Nullable String nodeOf(byte[] key) {
        RedisClusterNode node = gateway.masterServing(key);
        return node == null ? null : node.getNodeId();
    }


    /**
     * Asks a cluster client to reload its topology now, for callers that wait on a node that may have failed over.
     * At most one refresh is under way at a time and they start at least {@link #REFRESH_ON_DEMAND_EVERY_MILLIS}
     * apart: a caller in between gets the one under way (or the last one). The future completes, never
     * exceptionally, when the refresh is done, failed, or {@link RedisGateway#CALL_TIMEOUT_MILLIS} has passed.
     * Standalone: completed at once.
     */
    public CompletableFuture<Void> refreshTopology() {
        if (!(gateway.client() instanceof RedisClusterClient clusterClient) || gateway.connection() == null
                || gateway.isClosed()) {
            return CompletableFuture.completedFuture(null);
        }
        synchronized (refreshLock) {
            long now = System.currentTimeMillis();
            if (!refreshUnderWay.isDone() || now - lastRefreshMillis < REFRESH_ON_DEMAND_EVERY_MILLIS) {
                return refreshUnderWay;
            }
            lastRefreshMillis = now;
            CompletableFuture<Void> refresh;
            try {
                refresh = clusterClient.refreshPartitionsAsync().toCompletableFuture();
            }
            catch (RuntimeException ex) {
                refresh = CompletableFuture.failedFuture(ex);
            }
            refreshUnderWay = io.rmq.core.internal.Timeouts.within(refresh, RedisGateway.CALL_TIMEOUT_MILLIS,
                    () -> "refreshing the cluster topology").handle((v, error) -> {
                        if (error != null) {
                            log.debug("Refreshing the cluster topology failed: {}", String.valueOf(error));
                        }
                        return null;
                    });
            return refreshUnderWay;
        }
    }


    // ---------------------------------------------------------------- health

    /**
     * What a health check found on one Redis node (standalone: the server; cluster: each master).
     *
     * @param node            host:port (cluster), or "standalone"
     * @param reachable       it answered a PING within the timeout
     * @param latencyMillis   how long the PING took (-1 when it did not answer)
     * @param scriptsLoaded   every RMQ script is in its script cache (after reloading those it had lost)
     * @param scriptsReloaded how many scripts it had lost (a restart, SCRIPT FLUSH) and were loaded again
     * @param error           why it is not healthy, or null
     */
    public record NodeCheck(String node, boolean reachable, long latencyMillis, boolean scriptsLoaded,
            int scriptsReloaded, @Nullable String error) {
    }

    /**
     * Checks every node RMQ uses through its own connection: a PING and SCRIPT EXISTS of RMQ's scripts, each bounded
     * by {@code timeoutMillis}; scripts a node lost are loaded again (RMQ's calls would fall back to EVAL meanwhile).
     * Never throws: a node that does not answer is reported unreachable; before the first connection, the one node
     * reported is unreachable with the last reason.
     */
    public List<NodeCheck> checkNodes(long timeoutMillis) {
        StatefulConnection<byte[], byte[]> current = gateway.connection();
        if (current == null || gateway.isClosed()) {
            return List.of(new NodeCheck(gateway.isCluster() ? "cluster" : "standalone", false, -1, false, 0,
                    gateway.isClosed() ? "closed" : "not connected yet (" + gateway.lastFailure() + ")"));
        }
        if (!(current instanceof StatefulRedisClusterConnection<byte[], byte[]> clusterConnection)) {
            return List.of(checkNode("standalone", CompletableFuture.completedFuture(gateway.commands()), timeoutMillis)
                    .join());
        }
        List<RedisClusterNode> masters = new ArrayList<>();
        for (RedisClusterNode node : ((RedisClusterClient) gateway.client()).getPartitions()) {
            if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.is(RedisClusterNode.NodeFlag.FAIL)) {
                masters.add(node);
            }
        }
        if (masters.isEmpty()) {
            return List.of(new NodeCheck("cluster", false, -1, false, 0, "no master in the client's view"));
        }
        List<CompletableFuture<NodeCheck>> checks = new ArrayList<>(masters.size());
        for (RedisClusterNode master : masters) {
            String address = master.getUri().getHost() + ":" + master.getUri().getPort();
            checks.add(checkNode(address, reach(clusterConnection, master), timeoutMillis));
        }
        return checks.stream().map(CompletableFuture::join).toList(); // in parallel, each within the timeout
    }

    /**
     * The commands of one node: standalone, the server (node null); a cluster, the node of the client's current view
     * (a connection of its own, opened by Lettuce on first use). For reads that must reach every node (INFO, SCAN).
     */
    record NodeCommands(@Nullable RedisClusterNode node,
            CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> commands) {
    }

    /** Every node in the client's current view (masters and replicas); standalone, the one server. */
    List<NodeCommands> nodeCommands() {
        StatefulConnection<byte[], byte[]> current = gateway.connection();
        if (!(current instanceof StatefulRedisClusterConnection<byte[], byte[]> clusterConnection)) {
            return List.of(new NodeCommands(null, CompletableFuture.completedFuture(gateway.commands())));
        }
        List<NodeCommands> out = new ArrayList<>();
        for (RedisClusterNode node : ((RedisClusterClient) gateway.client()).getPartitions()) {
            out.add(new NodeCommands(node, reach(clusterConnection, node)));
        }
        return out;
    }

    /** The commands of one cluster node (its connection opened by Lettuce on first use); failing to ask fails them. */
    private static CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> reach(
            StatefulRedisClusterConnection<byte[], byte[]> clusterConnection, RedisClusterNode node) {
        try {
            return clusterConnection.getConnectionAsync(node.getNodeId())
                    .thenApply(c -> (RedisClusterAsyncCommands<byte[], byte[]>) c.async());
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    /** PING, then SCRIPT EXISTS (and SCRIPT LOAD of what is missing), within the timeout; never fails. */
    private static CompletableFuture<NodeCheck> checkNode(String name,
            CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> node, long timeoutMillis) {
        long[] latency = {-1};
        RmqScript[] scripts = RmqScript.values();
        String[] shas = new String[scripts.length];
        for (int i = 0; i < scripts.length; i++) {
            shas[i] = scripts[i].sha();
        }
        CompletableFuture<NodeCheck> check = node.thenCompose(commands -> {
            long sent = System.nanoTime();
            return commands.ping().toCompletableFuture().thenCompose(pong -> {
                latency[0] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
                return commands.scriptExists(shas).toCompletableFuture();
            }).thenCompose(exists -> {
                List<CompletableFuture<String>> loads = new ArrayList<>();
                for (int i = 0; i < scripts.length; i++) {
                    if (!Boolean.TRUE.equals(exists.get(i))) {
                        loads.add(commands.scriptLoad(scripts[i].source()).toCompletableFuture());
                    }
                }
                return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new)).thenApply(v -> {
                    if (!loads.isEmpty()) {
                        log.info("RMQ's health check loaded {} Lua script(s) again on Redis {} (restarted or"
                                + " flushed)", loads.size(), name);
                    }
                    return new NodeCheck(name, true, latency[0], true, loads.size(), null);
                });
            });
        });
        return check.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).exceptionally(ex -> {
            Throwable cause = RedisGateway.unwrap(ex);
            String error = cause instanceof TimeoutException ? "no reply within " + timeoutMillis + " ms"
                    : RedisGateway.describe(cause);
            return new NodeCheck(name, latency[0] >= 0, latency[0], false, 0, error);
        });
    }

    /**
     * {@code INFO memory} of the node that serves {@code key} (standalone: the server; a cluster: the master of the
     * key's slot in the client's view), parsed, with its name under {@code "node"} ("standalone" or host:port). INFO,
     * not CONFIG: managed Redis services often disable CONFIG. Fails after {@link RedisGateway#CALL_TIMEOUT_MILLIS}.
     */
    public CompletableFuture<java.util.Map<String, String>> memoryOf(byte[] key) {
        StatefulConnection<byte[], byte[]> current = gateway.connection();
        RedisClusterNode node = gateway.masterServing(key);
        String name;
        CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> reach;
        if (node != null && current instanceof StatefulRedisClusterConnection<byte[], byte[]> clusterConnection) {
            name = node.getUri().getHost() + ":" + node.getUri().getPort();
            reach = clusterConnection.getConnectionAsync(node.getNodeId())
                    .thenApply(c -> (RedisClusterAsyncCommands<byte[], byte[]>) c.async());
        }
        else {
            name = "standalone";
            reach = CompletableFuture.completedFuture(gateway.commands());
        }
        return reach.thenCompose(c -> c.info("memory").toCompletableFuture())
                .orTimeout(RedisGateway.CALL_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS).thenApply(text -> {
                    java.util.Map<String, String> info = parseInfo(text);
                    info.put("node", name);
                    return info;
                });
    }

    static java.util.Map<String, String> parseInfo(String info) {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                out.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return out;
    }
}
