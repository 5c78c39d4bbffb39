package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.KeyValue;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.rmq.core.internal.RmqKeys;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). The running instances and the cluster-wide pauses
 * ({@link RmqKeys#instancesLive}, {@link RmqKeys#instance}, {@link RmqKeys#instancesPaused}), all under the hash tag
 * {@code {rmq-instances}}: a heartbeat is one script, reads are plain commands on that one slot. Used by the instance
 * registry's heartbeat thread and by whoever reads the fleet (endpoint, dashboard); stateless, so thread-safe.
 */
public final class RmqRedisInstances {

    private final RedisGateway gateway;
    private final RmqKeys keys;

    public RmqRedisInstances(RmqRedis redis) {
        this.gateway = redis.gateway();
        this.keys = redis.keys();
    }

    /**
     * What a heartbeat brought back.
     *
     * @param now    Redis's clock when it ran (ms)
     * @param pauses the cluster-wide pauses: "listener:&lt;id&gt;" / "topic:&lt;name&gt;" -&gt; "&lt;since ms&gt;|&lt;by&gt;"
     */
    public record Beat(long now, Map<String, String> pauses) {
    }

    /** Renews the instance's entry and description for {@code ttlMillis} and reads the pauses (instance_beat.lua). */
    public CompletableFuture<Beat> beat(String id, String description, long ttlMillis) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.INSTANCE_BEAT, ScriptOutputType.MULTI,
                new byte[][] {keys.instancesLive(), keys.instance(id), keys.instancesPaused()}, Replies.bytes(id),
                Replies.bytes(description), Replies.bytes(ttlMillis));
        return reply.thenApply(items -> {
            Map<String, String> pauses = new LinkedHashMap<>();
            for (int i = 1; i + 1 < items.size(); i += 2) {
                pauses.put(Replies.string((byte[]) items.get(i)), Replies.string((byte[]) items.get(i + 1)));
            }
            return new Beat((Long) items.get(0), pauses);
        });
    }

    /** Takes the instance off the live list and deletes its description (instance_leave.lua). */
    public CompletableFuture<Long> leave(String id) {
        return gateway.eval(RmqScript.INSTANCE_LEAVE, ScriptOutputType.INTEGER,
                new byte[][] {keys.instancesLive(), keys.instance(id)}, Replies.bytes(id));
    }

    /** Redis's clock now (ms): what a report's age is measured against. */
    public CompletableFuture<Long> now() {
        return gateway.commands().time().toCompletableFuture().thenApply(t -> Long.parseLong(Replies.string(t.get(0)))
                * 1000 + Long.parseLong(Replies.string(t.get(1))) / 1000);
    }

    /** The live list: instance id -&gt; alive until (Redis ms), including entries that ran out and were not swept. */
    public CompletableFuture<Map<String, Long>> live() {
        return gateway.commands().zrangeWithScores(keys.instancesLive(), 0, -1).toCompletableFuture()
                .thenApply(entries -> {
                    Map<String, Long> out = new LinkedHashMap<>();
                    for (ScoredValue<byte[]> entry : entries) {
                        out.put(Replies.string(entry.getValue()), (long) entry.getScore());
                    }
                    return out;
                });
    }

    /** The descriptions of these instances, in order; null where one has expired (the instance is gone). */
    public CompletableFuture<List<String>> descriptions(List<String> ids) {
        if (ids.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        byte[][] all = ids.stream().map(keys::instance).toArray(byte[][]::new);
        // one hash tag: a single MGET even on a cluster
        return gateway.commands().mget(all).toCompletableFuture().thenApply(values -> {
            List<String> out = new ArrayList<>(values.size());
            for (KeyValue<byte[], byte[]> value : values) {
                out.add(value.hasValue() ? Replies.string(value.getValue()) : null);
            }
            return out;
        });
    }

    /** Sets a cluster-wide pause ({@code field}: "listener:&lt;id&gt;" or "topic:&lt;name&gt;"); true when it is new. */
    public CompletableFuture<Boolean> pause(String field, String value) {
        return gateway.commands().hsetnx(keys.instancesPaused(), Replies.bytes(field), Replies.bytes(value))
                .toCompletableFuture();
    }

    /** Lifts a cluster-wide pause; true when there was one. */
    public CompletableFuture<Boolean> resume(String field) {
        return gateway.commands().hdel(keys.instancesPaused(), Replies.bytes(field)).toCompletableFuture()
                .thenApply(removed -> removed > 0);
    }

    /** The cluster-wide pauses, as {@link Beat#pauses()}. */
    public CompletableFuture<Map<String, String>> pauses() {
        return gateway.commands().hgetall(keys.instancesPaused()).toCompletableFuture().thenApply(raw -> {
            Map<String, String> out = new LinkedHashMap<>();
            raw.forEach((field, value) -> out.put(Replies.string(field), Replies.string(value)));
            return out;
        });
    }
}
