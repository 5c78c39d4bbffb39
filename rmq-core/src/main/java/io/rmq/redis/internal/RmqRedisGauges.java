package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.internal.RmqKeys;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). The queue-size figures a fleet shares, so that one
 * instance at a time reads a topic's slots and the others take what it wrote ({@link RmqKeys#gaugeSizes},
 * {@link RmqKeys#gaugeTurns}, gauges.lua). Stateless, so thread-safe.
 */
public final class RmqRedisGauges {

    private final RedisGateway gateway;
    private final RmqKeys keys;

    public RmqRedisGauges(RmqRedis redis) {
        this.gateway = redis.gateway();
        this.keys = redis.keys();
    }

    /**
     * What a call of gauges.lua answered.
     *
     * @param now     Redis's clock then (ms): the read time to write with the figures of the topics in {@code mine}
     * @param shared  per topic, the figures another instance (or this one) wrote last: { waiting, in flight, retrying,
     *                dead }; absent when none were written yet
     * @param mine    the topics this instance reads now (its turn)
     */
    public record Turns(long now, Map<String, long[]> shared, Set<String> mine) {
    }

    /** The shared figures of {@code topics}, and which of them are this caller's to read now. */
    public CompletableFuture<Turns> turns(long intervalMillis, List<String> topics) {
        byte[][] args = new byte[1 + topics.size()][];
        args[0] = Replies.bytes(intervalMillis);
        for (int i = 0; i < topics.size(); i++) {
            args[1 + i] = topics.get(i).getBytes(StandardCharsets.UTF_8);
        }
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.GAUGES, ScriptOutputType.MULTI,
                new byte[][] {keys.gaugeSizes(), keys.gaugeTurns()}, args);
        return reply.thenApply(items -> {
            Map<String, long[]> shared = new LinkedHashMap<>();
            Set<String> mine = new LinkedHashSet<>();
            for (int i = 0; i < topics.size(); i++) {
                long @Nullable [] figures = parse(Replies.string((byte[]) items.get(1 + 2 * i)));
                if (figures != null) {
                    shared.put(topics.get(i), figures);
                }
                if ((Long) items.get(2 + 2 * i) == 1L) {
                    mine.add(topics.get(i));
                }
            }
            return new Turns((Long) items.get(0), shared, mine);
        });
    }

    /**
     * Writes the figures this instance read (topic -&gt; { waiting, in flight, retrying, dead }) as read at
     * {@code readAt} (Redis ms, {@link Turns#now}); they live 10 intervals unless written again.
     */
    public CompletableFuture<Boolean> publish(Map<String, long[]> figures, long readAt, long intervalMillis) {
        Map<byte[], byte[]> fields = new LinkedHashMap<>();
        figures.forEach((topic, f) -> fields.put(topic.getBytes(StandardCharsets.UTF_8),
                (readAt + "|" + f[0] + "|" + f[1] + "|" + f[2] + "|" + f[3]).getBytes(StandardCharsets.US_ASCII)));
        if (fields.isEmpty()) {
            return CompletableFuture.completedFuture(false);
        }
        return gateway.commands().hset(keys.gaugeSizes(), fields).toCompletableFuture()
                .thenCompose(added -> gateway.commands().pexpire(keys.gaugeSizes(), 10 * intervalMillis)
                        .toCompletableFuture());
    }

    private static long @Nullable [] parse(String text) {
        if (text.isEmpty()) {
            return null;
        }
        String[] parts = text.split("\\|");
        if (parts.length != 5) {
            return null;
        }
        List<Long> values = new ArrayList<>(4);
        for (int i = 1; i < 5; i++) {
            values.add(Long.parseLong(parts[i]));
        }
        return values.stream().mapToLong(Long::longValue).toArray();
    }
}
