package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.ClusterPartitionParser;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice; applications use {@code RmqAdmin.redis()}). Used by
 * whatever thread asks (the Actuator endpoint, the dashboard); stateless, so thread-safe; every call waits for Redis.
 * <p>
 * What an operator wants to know about the Redis RMQ uses: version, mode, memory and clients ({@code INFO} of every
 * master), the cluster's nodes ({@code CLUSTER NODES}) and how many keys carry RMQ's prefix ({@code SCAN MATCH} on
 * every master, bounded: at most {@link #MAX_KEYS_EXAMINED} keys examined per call, so a large keyspace costs Redis a
 * bounded amount of work per request).
 */
public final class RmqRedisServer {

    /** Most keys the key count examines in one call, all masters together (SCAN's COUNT per step is 1000). */
    public static final int MAX_KEYS_EXAMINED = 100_000;
    private static final int SCAN_STEP = 1000;

    private final RedisGateway gateway;
    private final RedisNodes nodes;
    private final String prefix;

    public RmqRedisServer(RedisGateway gateway, RedisNodes nodes, String prefix) {
        this.gateway = gateway;
        this.nodes = nodes;
        this.prefix = prefix;
    }

    /**
     * One cluster node as CLUSTER NODES describes it.
     *
     * @param role  {@code master} or {@code replica}
     * @param slots its slot ranges ({@code 0-5460,10923}), empty for none
     * @param state {@code ok}, {@code fail} (agreed failing), {@code pfail} (this node's suspicion) or
     *              {@code disconnected}
     */
    public record Node(String id, String address, String role, String slots, String state) {
    }

    /**
     * The figures. Memory and clients are summed over the masters (one server standalone).
     *
     * @param version        redis_version of the first master
     * @param mode           {@code standalone} or {@code cluster}
     * @param rmqKeys        keys whose name starts with RMQ's prefix and a colon (counted by SCAN, see
     *                       {@code rmqKeysCapped})
     * @param rmqKeysCapped  the count stopped after {@link #MAX_KEYS_EXAMINED} keys examined: it is a lower bound
     * @param nodes          cluster nodes; empty standalone
     */
    public record Figures(String version, String mode, long usedMemory, long peakMemory, long clients, long rmqKeys,
            boolean rmqKeysCapped, List<Node> nodes) {
    }

    public Figures figures() {
        List<RedisNodes.NodeCommands> all = nodes.nodeCommands();
        List<RedisClusterAsyncCommands<byte[], byte[]>> masters = new ArrayList<>();
        for (RedisNodes.NodeCommands node : all) {
            if (node.node() == null || node.node().is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                masters.add(RedisGateway.await(node.commands(), "connecting to a Redis node"));
            }
        }
        String version = "";
        long used = 0;
        long peak = 0;
        long clients = 0;
        for (RedisClusterAsyncCommands<byte[], byte[]> master : masters) {
            Map<String, String> info = RedisNodes.parseInfo(RedisGateway.await(master.info().toCompletableFuture(),
                    "reading Redis INFO"));
            if (version.isEmpty()) {
                version = info.getOrDefault("redis_version", "");
            }
            used += number(info.get("used_memory"));
            peak += number(info.get("used_memory_peak"));
            clients += number(info.get("connected_clients"));
        }
        List<Node> nodes = List.of();
        if (gateway.isCluster() && !masters.isEmpty()) {
            nodes = nodes(RedisGateway.await(masters.get(0).clusterNodes().toCompletableFuture(),
                    "reading CLUSTER NODES"));
        }
        long[] counted = countKeys(masters);
        return new Figures(version, gateway.isCluster() ? "cluster" : "standalone", used, peak, clients, counted[0],
                counted[1] == 1, nodes);
    }

    /** {keys found, 1 when the bound stopped the walk}: SCAN of every master, MAX_KEYS_EXAMINED keys at most. */
    private long[] countKeys(List<RedisClusterAsyncCommands<byte[], byte[]>> masters) {
        ScanArgs args = ScanArgs.Builder.limit(SCAN_STEP).match(globEscape(prefix + ":").concat("*")
                .getBytes(StandardCharsets.UTF_8));
        long found = 0;
        long examined = 0;
        for (RedisClusterAsyncCommands<byte[], byte[]> master : masters) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                if (examined >= MAX_KEYS_EXAMINED) {
                    return new long[] {found, 1};
                }
                KeyScanCursor<byte[]> step = RedisGateway.await(master.scan(cursor, args).toCompletableFuture(),
                        "counting RMQ's keys");
                found += step.getKeys().size();
                examined += SCAN_STEP;
                cursor = step;
            } while (!cursor.isFinished());
        }
        return new long[] {found, 0};
    }

    /** Escapes SCAN's glob characters in a literal part of a pattern. */
    static String globEscape(String literal) {
        StringBuilder out = new StringBuilder(literal.length());
        for (char c : literal.toCharArray()) {
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }


    private static long number(@Nullable String value) {
        try {
            return value == null ? 0 : Long.parseLong(value);
        }
        catch (NumberFormatException ex) {
            return 0;
        }
    }

    static List<Node> nodes(String clusterNodes) {
        List<Node> out = new ArrayList<>();
        for (RedisClusterNode node : ClusterPartitionParser.parse(clusterNodes)) {
            String role = node.is(RedisClusterNode.NodeFlag.UPSTREAM) ? "master" : "replica";
            String state = node.is(RedisClusterNode.NodeFlag.FAIL) ? "fail"
                    : node.is(RedisClusterNode.NodeFlag.EVENTUAL_FAIL) ? "pfail"
                    : node.isConnected() ? "ok" : "disconnected";
            String address = node.getUri() == null ? "" : node.getUri().getHost() + ":" + node.getUri().getPort();
            out.add(new Node(node.getNodeId(), address, role, ranges(node.getSlots()), state));
        }
        out.sort(java.util.Comparator.comparing(Node::address));
        return out;
    }

    /** Slot numbers as ranges: {@code 0-5460,10923}. */
    static String ranges(List<Integer> slots) {
        List<Integer> sorted = new ArrayList<>(slots);
        sorted.sort(null);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < sorted.size(); ) {
            int start = sorted.get(i);
            int end = start;
            while (i + 1 < sorted.size() && sorted.get(i + 1) == end + 1) {
                end = sorted.get(++i);
            }
            i++;
            if (!out.isEmpty()) {
                out.append(',');
            }
            out.append(start);
            if (end != start) {
                out.append('-').append(end);
            }
        }
        return out.toString();
    }
}
