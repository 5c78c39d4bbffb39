package io.rmq.redis.internal;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.internal.RmqKeys;
import org.jspecify.annotations.Nullable;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). The cluster-wide state of periodic schedules, one hash
 * per schedule ({@link RmqKeys#schedule}): the definition every instance must share, the latest firing taken (the
 * guard against running a firing twice), the pause flag and the latest run's outcome. Used by the Spring layer's
 * scheduler from its start-up thread and the listener threads that take firings; stateless, so thread-safe. Methods
 * are asynchronous, as the rest of this package's.
 */
public final class RmqRedisSchedules {

    private final RedisGateway gateway;
    private final RmqKeys keys;

    public RmqRedisSchedules(RmqRedis redis) {
        this.gateway = redis.gateway();
        this.keys = redis.keys();
    }

    /**
     * What registering a definition found (see schedule_register.lua).
     *
     * @param registered    with a conflict, the definition an instance seen within the liveness window holds
     * @param seenAgoMillis with a conflict, how long ago a holder of it last said so
     * @param last          without one, the latest firing taken (ms), -1 for none
     * @param since         without one, when the definition was registered (Redis ms)
     */
    public record Registration(long now, boolean conflict, @Nullable String registered, long seenAgoMillis, long last,
            long since) {
    }

    public CompletableFuture<Registration> register(String name, String fingerprint, long livenessMillis) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.SCHEDULE_REGISTER, ScriptOutputType.MULTI,
                new byte[][] {keys.schedule(name)}, Replies.bytes(fingerprint), Replies.bytes(livenessMillis));
        return reply.thenApply(items -> {
            long now = (Long) items.get(1);
            if ("conflict".equals(text(items.get(0)))) {
                return new Registration(now, true, text(items.get(2)), (Long) items.get(3), -1, -1);
            }
            String last = text(items.get(2));
            return new Registration(now, false, null, 0, last.isEmpty() ? -1 : Long.parseLong(last),
                    Long.parseLong(text(items.get(3))));
        });
    }

    /** What taking a firing decided (see schedule_claim.lua). */
    public enum Outcome { FIRE, MISSED, PAUSED, STALE }

    public record Claim(Outcome outcome, long now) {
    }

    /**
     * Takes a firing (ms) of a schedule, given the firing after it (ms; {@link Long#MAX_VALUE} for none), the misfire
     * threshold and the policy ({@code fire-once} or {@code skip}).
     */
    public CompletableFuture<Claim> claim(String name, long firing, long next, long thresholdMillis, String misfire) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.SCHEDULE_CLAIM, ScriptOutputType.MULTI,
                new byte[][] {keys.schedule(name)}, Replies.bytes(firing), Replies.bytes(next),
                Replies.bytes(thresholdMillis), Replies.bytes(misfire));
        return reply.thenApply(items -> new Claim(
                Outcome.valueOf(text(items.get(0)).toUpperCase(java.util.Locale.ROOT)), (Long) items.get(1)));
    }

    /** Sets fields of a schedule's hash (the latest run's outcome, the pause flag). */
    public CompletableFuture<Long> set(String name, Map<String, String> fields) {
        Map<byte[], byte[]> raw = new LinkedHashMap<>();
        fields.forEach((field, value) -> raw.put(Replies.bytes(field), Replies.bytes(value)));
        return gateway.commands().hset(keys.schedule(name), raw).toCompletableFuture();
    }

    public CompletableFuture<Long> remove(String name, String field) {
        return gateway.commands().hdel(keys.schedule(name), Replies.bytes(field)).toCompletableFuture();
    }

    /** Every field of a schedule's hash (empty when it has none). */
    public CompletableFuture<Map<String, String>> read(String name) {
        return gateway.commands().hgetall(keys.schedule(name)).toCompletableFuture().thenApply(raw -> {
            Map<String, String> out = new LinkedHashMap<>();
            raw.forEach((field, value) -> out.put(Replies.string(field), Replies.string(value)));
            return out;
        });
    }

    /** A bulk string of a script's reply (the scripts reply text as bulk strings, numbers as integers). */
    private static String text(Object reply) {
        return Replies.string((byte[]) reply);
    }
}
