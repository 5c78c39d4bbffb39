package io.rmq.spring.schedule;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.rmq.core.RmqException;
import org.jspecify.annotations.Nullable;

/**
 * The schedules' state in Redis: one hash per schedule, {@code <prefix>:{rmq-schedules}:<name>}, all under one hash tag
 * so that each script touches one Redis Cluster slot. Fields: {@code definition} (the fingerprint every instance must
 * share), {@code since} (when it was first registered), {@code seen} (when an instance holding it last said so),
 * {@code last} (the latest firing taken, epoch ms: the guard against double firing), {@code paused}, and the latest
 * outcome ({@code outcome}, {@code outcome_firing}, {@code outcome_at}, {@code outcome_ms}, {@code outcome_error}).
 * Times come from Redis's clock ({@code TIME} in the scripts), as the engine's due times do.
 * <p>
 * Talks to Redis through a connection of its own on the engine's Lettuce client (the engine offers no generic script
 * call); opened on first use, thread-safe (Lettuce's connection is), closed with the scheduler.
 */
final class ScheduleStore implements AutoCloseable {

    /**
     * Registers this instance's definition of a schedule. KEYS[1]: the schedule's hash; ARGV[1]: the fingerprint;
     * ARGV[2]: how long (ms) a definition stays held after its holders last said so. Reply: {'conflict', now,
     * registered definition, ms since it was last seen} or {'ok', now, last firing or '', since}.
     */
    private static final String REGISTER = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local def = redis.call('HGET', KEYS[1], 'definition')
            if def and def ~= ARGV[1] then
              local seen = tonumber(redis.call('HGET', KEYS[1], 'seen') or '0')
              if now - seen < tonumber(ARGV[2]) then
                return {'conflict', now, def, now - seen}
              end
            end
            if def ~= ARGV[1] then
              redis.call('HSET', KEYS[1], 'definition', ARGV[1], 'since', now)
            end
            redis.call('HSET', KEYS[1], 'seen', now)
            return {'ok', now, redis.call('HGET', KEYS[1], 'last') or '', redis.call('HGET', KEYS[1], 'since')}
            """;

    /**
     * Takes one firing: it may run only when it is later than the latest firing taken, which it then becomes (so each
     * firing time is taken once, and never after a later one). KEYS[1]: the schedule's hash; ARGV[1]: the firing (ms);
     * ARGV[2]: the firing after it (ms); ARGV[3]: the misfire threshold (ms); ARGV[4]: 'fire-once' or 'skip'. Reply:
     * {outcome, now}: 'stale' (taken before, or a later one was), 'paused', 'missed' (later than the threshold, and
     * skipped by the policy: 'skip' always, 'fire-once' when the next firing is due too) or 'fire'.
     */
    private static final String CLAIM = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local firing = tonumber(ARGV[1])
            local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '-1')
            if last >= firing then
              return {'stale', now}
            end
            redis.call('HSET', KEYS[1], 'last', ARGV[1])
            if redis.call('HEXISTS', KEYS[1], 'paused') == 1 then
              return {'paused', now}
            end
            if now - firing > tonumber(ARGV[3]) and (ARGV[4] == 'skip' or tonumber(ARGV[2]) <= now) then
              return {'missed', now}
            end
            return {'fire', now}
            """;

    static final String TAG = "{rmq-schedules}";
    private static final long TIMEOUT_MILLIS = 5_000;

    private final AbstractRedisClient client;
    private final String prefix;
    private @Nullable StatefulConnection<String, String> connection;
    private @Nullable RedisClusterAsyncCommands<String, String> commands;

    ScheduleStore(AbstractRedisClient client, String keyPrefix) {
        this.client = client;
        this.prefix = keyPrefix + ":" + TAG + ":";
    }

    String key(String name) {
        return prefix + name;
    }

    /** The outcome of {@link #register}. */
    record Registration(long now, boolean conflict, @Nullable String registered, long seenAgoMillis, long last,
            long since) {
    }

    Registration register(String name, String fingerprint, Duration liveness) {
        List<Object> reply = await(commands().eval(REGISTER, ScriptOutputType.MULTI, new String[] {key(name)},
                fingerprint, Long.toString(liveness.toMillis())), "registering schedule '" + name + "'");
        long now = (Long) reply.get(1);
        if ("conflict".equals(reply.get(0))) {
            return new Registration(now, true, (String) reply.get(2), (Long) reply.get(3), -1, -1);
        }
        String last = (String) reply.get(2);
        return new Registration(now, false, null, 0, last.isEmpty() ? -1 : Long.parseLong(last),
                Long.parseLong((String) reply.get(3)));
    }

    enum Outcome { FIRE, MISSED, PAUSED, STALE }

    record Claim(Outcome outcome, long now) {
    }

    Claim claim(ScheduleDefinition schedule, long firing, long next) {
        List<Object> reply = await(commands().eval(CLAIM, ScriptOutputType.MULTI, new String[] {key(schedule.name())},
                Long.toString(firing), Long.toString(next == FiringTimes.NONE ? Long.MAX_VALUE : next),
                Long.toString(schedule.thresholdMillis()), schedule.misfire().value()),
                "taking a firing of schedule '" + schedule.name() + "'");
        return new Claim(Outcome.valueOf(((String) reply.get(0)).toUpperCase(java.util.Locale.ROOT)),
                (Long) reply.get(1));
    }

    /** Records how the latest firing that ran ended. */
    void recordOutcome(String name, long firing, boolean success, long at, long tookMillis, @Nullable String error) {
        String key = key(name);
        var fields = new java.util.LinkedHashMap<String, String>();
        fields.put("outcome", success ? "success" : "failure");
        fields.put("outcome_firing", Long.toString(firing));
        fields.put("outcome_at", Long.toString(at));
        fields.put("outcome_ms", Long.toString(tookMillis));
        fields.put("outcome_error", error == null ? "" : error);
        await(commands().hset(key, fields), "recording the outcome of schedule '" + name + "'");
    }

    void setPaused(String name, boolean paused) {
        if (paused) {
            await(commands().hset(key(name), "paused", "1"), "pausing schedule '" + name + "'");
        }
        else {
            await(commands().hdel(key(name), "paused"), "resuming schedule '" + name + "'");
        }
    }

    Map<String, String> read(String name) {
        return await(commands().hgetall(key(name)), "reading schedule '" + name + "'");
    }

    private synchronized RedisClusterAsyncCommands<String, String> commands() {
        RedisClusterAsyncCommands<String, String> opened = commands;
        if (opened != null) {
            return opened;
        }
        try {
            StatefulConnection<String, String> connected = client instanceof RedisClusterClient cluster
                    ? cluster.connect(StringCodec.UTF8) : ((RedisClient) client).connect(StringCodec.UTF8);
            connection = connected;
            opened = connected instanceof StatefulRedisClusterConnection<String, String> c ? c.async()
                    : ((StatefulRedisConnection<String, String>) connected).async();
            commands = opened;
            return opened;
        }
        catch (RuntimeException ex) {
            throw new RmqException("RMQ cannot reach Redis for its schedules: " + ex.getMessage(), ex);
        }
    }

    private static <T> T await(java.util.concurrent.CompletionStage<T> future, String what) {
        try {
            return future.toCompletableFuture().get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RmqException("interrupted while " + what, ex);
        }
        catch (java.util.concurrent.TimeoutException ex) {
            throw new RmqException("Redis did not answer within " + TIMEOUT_MILLIS + " ms while " + what,
                    ex);
        }
        catch (java.util.concurrent.ExecutionException ex) {
            throw new RmqException("Redis failed while " + what + ": " + ex.getCause().getMessage(),
                    ex.getCause());
        }
    }

    @Override
    public synchronized void close() {
        StatefulConnection<String, String> opened = connection;
        connection = null;
        commands = null;
        if (opened != null) {
            opened.close();
        }
    }
}
