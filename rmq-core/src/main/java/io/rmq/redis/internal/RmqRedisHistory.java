package io.rmq.redis.internal;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.internal.RmqKeys;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice; applications use {@code RmqAdmin#history}). The
 * per-topic history of sent, handled, failed, dead, trimmed and expired counts: one hash per topic ({@link RmqKeys#history}), all under
 * the hash tag {@code {rmq-history}}, so that one script call files every topic's counts, also on a cluster. Used by
 * the engine's history flusher (its own thread) and by whatever thread reads a history; stateless, so thread-safe.
 */
public final class RmqRedisHistory {

    /** Counts in the order the scripts keep them. */
    public static final int SENT = 0;
    public static final int HANDLED = 1;
    public static final int FAILED = 2;
    public static final int DEAD = 3;
    /** Dead messages the dead-letter retention deleted (absent from what engines before it filed: 0). */
    public static final int TRIMMED = 4;
    /** Messages that expired before a handler saw them (absent from what engines before expiry filed: 0). */
    public static final int EXPIRED = 5;
    public static final int KINDS = 6;

    private final RedisGateway gateway;
    private final RmqKeys keys;

    public RmqRedisHistory(RmqRedis redis) {
        this.gateway = redis.gateway();
        this.keys = redis.keys();
    }

    /**
     * Adds counts to topics' histories (see history_flush.lua), filed under Redis's now, or under {@code at} (ms; tests
     * of the trim file counts in the past).
     *
     * @param topics the topics, each with {@link #KINDS} counts in {@code counts} (fewer: the rest are 0)
     * @return the time (ms) the counts were filed under
     */
    public CompletableFuture<Long> flush(List<String> topics, List<long[]> counts, @Nullable Long at) {
        byte[][] keyArgs = new byte[topics.size()][];
        byte[][] args = new byte[1 + KINDS * topics.size()][];
        args[0] = at == null ? new byte[0] : Replies.bytes(at);
        for (int i = 0; i < topics.size(); i++) {
            keyArgs[i] = keys.history(topics.get(i));
            long[] c = counts.get(i);
            for (int k = 0; k < KINDS; k++) {
                args[1 + KINDS * i + k] = Replies.bytes(k < c.length ? c[k] : 0);
            }
        }
        return gateway.eval(RmqScript.HISTORY_FLUSH, ScriptOutputType.INTEGER, keyArgs, args);
    }

    /**
     * A topic's history as stored.
     *
     * @param now     Redis's time (ms) when it was read
     * @param minutes counts by minute (ms / 60,000), {@link #KINDS} each
     * @param hours   counts by hour (ms / 3,600,000)
     */
    public record Reading(long now, Map<Long, long[]> minutes, Map<Long, long[]> hours) {
    }

    public CompletableFuture<Reading> read(String topic) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.HISTORY_READ, ScriptOutputType.MULTI,
                new byte[][] {keys.history(topic)});
        return reply.thenApply(items -> {
            Map<Long, long[]> minutes = new HashMap<>();
            Map<Long, long[]> hours = new HashMap<>();
            for (int i = 1; i + 1 < items.size(); i += 2) {
                String field = Replies.string((byte[]) items.get(i));
                Map<Long, long[]> into = field.startsWith("m") ? minutes : field.startsWith("h") ? hours : null;
                if (into != null) {
                    into.put(Long.parseLong(field.substring(1)), counts(Replies.string((byte[]) items.get(i + 1))));
                }
            }
            return new Reading((Long) items.get(0), minutes, hours);
        });
    }

    private static long[] counts(String value) {
        String[] parts = value.split(" ");
        long[] out = new long[KINDS];
        for (int k = 0; k < KINDS && k < parts.length; k++) {
            out[k] = Long.parseLong(parts[k]);
        }
        return out;
    }
}
