package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.RmqRedisFullException;
import org.jspecify.annotations.Nullable;

/**
 * Stateless. Recognises Redis's refusal of a write over {@code maxmemory} ({@code OOM command not allowed when used
 * memory > 'maxmemory'}, as a native command's error or inside a script's) and turns it into an
 * {@link RmqRedisFullException} with the figures of the node that refused, read with one {@code INFO memory} when the
 * refusal arrives (sends are refused at their first write, so whatever such a call was to write was not stored: see
 * write_when_full in _common.lua). Also reads every master's memory settings, for the start-up check and the health
 * indicator.
 */
public final class RedisFull {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RedisFull.class);

    private static final String OOM = "OOM command not allowed";
    /** Policies that may evict any key, RMQ's included. */
    private static final String ALLKEYS = "allkeys-";
    /** Policies that evict only keys with a TTL. */
    private static final String VOLATILE = "volatile-";

    private RedisFull() {
    }

    /** Whether {@code failure} (or one of its causes) is Redis refusing a write over maxmemory. */
    public static boolean isOom(@Nullable Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (String.valueOf(t.getMessage()).contains(OOM)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code failure} itself unless it is a refusal over maxmemory; then an {@link RmqRedisFullException} with the
     * figures of the node serving {@code key} ("?" where INFO could not be read). Never fails.
     *
     * @param notStored     what was not stored, e.g. "the message was NOT stored"
     * @param storedIndexes positions in a batch of the messages that were stored
     */
    public static CompletableFuture<Throwable> explain(RedisNodes nodes, Throwable failure, byte[] key,
            String operation, String notStored, List<Integer> storedIndexes) {
        Throwable cause = RedisGateway.unwrap(failure);
        if (!isOom(cause)) {
            return CompletableFuture.completedFuture(cause);
        }
        CompletableFuture<Map<String, String>> memory;
        try {
            memory = nodes.memoryOf(key);
        }
        catch (RuntimeException ex) {
            memory = CompletableFuture.failedFuture(ex);
        }
        return memory.handle((info, error) -> {
            Map<String, String> figures = info == null ? Map.of() : info;
            return new RmqRedisFullException(figures.getOrDefault("node", "?"),
                    figures.getOrDefault("used_memory_human", "?"), figures.getOrDefault("maxmemory_human", "?"),
                    figures.getOrDefault("maxmemory_policy", "?"), operation, notStored, storedIndexes, cause);
        });
    }

    /**
     * One node's memory settings.
     *
     * @param node       "standalone" or host:port
     * @param usedMemory used_memory in bytes
     * @param maxMemory  maxmemory in bytes (0: no limit)
     * @param human      used_memory_human and maxmemory_human, e.g. "20.01M of 20.00M"
     * @param policy     maxmemory_policy
     */
    public record Memory(String node, long usedMemory, long maxMemory, String human, String policy) {

        /** Over its maxmemory: it refuses writes that grow memory (with noeviction). */
        public boolean full() {
            return maxMemory > 0 && usedMemory >= maxMemory;
        }

        /**
         * What the policy may evict of RMQ's keys, or null when nothing: allkeys-* any key (waiting, in-flight and
         * dead messages, ownership and membership: messages lost, leases gone); volatile-* the keys RMQ gives a TTL.
         */
        public @Nullable String evicts() {
            if (policy.startsWith(ALLKEYS)) {
                return "any key, RMQ's included: waiting, in-flight and dead messages would be lost without a trace,"
                        + " and ORDERLY ownership, consumer membership and lease sequences could vanish";
            }
            if (policy.startsWith(VOLATILE)) {
                return "the keys RMQ gives a TTL: lease sequences (a delivery's fencing token could repeat), instance"
                        + " descriptions, rate-limit buckets and history counts; messages themselves carry no TTL";
            }
            return null;
        }
    }

    /** INFO memory of every master (standalone: the server); nodes that do not answer are left out. */
    public static List<Memory> masters(RedisNodes nodes) {
        return masters(nodes, RedisGateway.CALL_TIMEOUT_MILLIS);
    }

    /** As {@link #masters(RedisGateway)}, waiting at most {@code timeoutMillis} for each node. */
    public static List<Memory> masters(RedisNodes nodes, long timeoutMillis) {
        List<Memory> out = new ArrayList<>();
        for (RedisNodes.NodeCommands node : nodes.nodeCommands()) {
            if (node.node() != null && !node.node().is(io.lettuce.core.cluster.models.partitions.RedisClusterNode
                    .NodeFlag.UPSTREAM)) {
                continue;
            }
            String name = node.node() == null ? "standalone"
                    : node.node().getUri().getHost() + ":" + node.node().getUri().getPort();
            try {
                String text = node.commands().thenCompose(c -> c.info("memory").toCompletableFuture())
                        .get(timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
                Map<String, String> info = RedisNodes.parseInfo(text);
                out.add(new Memory(name, number(info.get("used_memory")), number(info.get("maxmemory")),
                        info.getOrDefault("used_memory_human", "?") + " of "
                                + info.getOrDefault("maxmemory_human", "?"),
                        info.getOrDefault("maxmemory_policy", "?")));
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return out;
            }
            catch (Exception ex) {
                // unreachable now: the health check reports that node on its own
            }
        }
        return out;
    }

    /**
     * Logs a WARN for each master whose maxmemory-policy may evict RMQ's keys, and for each that is full already
     * (start-up; never throws: a node that does not answer is left to the health check).
     */
    public static void warnIfEvicting(RedisNodes nodes) {
        try {
            for (Memory node : masters(nodes)) {
                String evicts = node.evicts();
                if (evicts != null) {
                    log.warn("Redis {} has maxmemory-policy {}: when it reaches maxmemory it may evict {}. RMQ needs"
                            + " maxmemory-policy noeviction (a full Redis then refuses sends with RmqRedisFullException"
                            + " while consumers drain it; see docs/configuration.md, \"Redis settings\")", node.node(),
                            node.policy(), evicts);
                }
                if (node.full()) {
                    log.warn("Redis {} is full ({}, maxmemory-policy {}): sends to its slots fail with"
                            + " RmqRedisFullException until consumers have drained it or maxmemory is raised",
                            node.node(), node.human(), node.policy());
                }
            }
        }
        catch (RuntimeException ex) {
            log.debug("Could not read Redis's memory settings: {}", String.valueOf(ex));
        }
    }

    private static long number(@Nullable String value) {
        try {
            return value == null ? 0 : Long.parseLong(value.trim());
        }
        catch (NumberFormatException ex) {
            return 0;
        }
    }
}
