package io.rmq.spring.schedule;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.rmq.Rmq;
import io.rmq.internal.RmqInternals;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisSchedules;
import org.jspecify.annotations.Nullable;

/**
 * The schedules' state in Redis, as the scheduler and the firing handlers use it: synchronous calls over the engine's
 * {@link RmqRedisSchedules} (one hash per schedule, {@code <prefix>:{rmq-schedules}:<name>}; its scripts say how a
 * firing is taken at most once). Called from the start-up thread, the top-up timer and the listener threads that take
 * firings; stateless, so thread-safe.
 */
final class ScheduleStore {

    private final RmqRedisSchedules schedules;

    ScheduleStore(Rmq rmq) {
        this.schedules = new RmqRedisSchedules(RmqInternals.redis(rmq));
    }

    /** The outcome of {@link #register}. */
    record Registration(long now, boolean conflict, @Nullable String registered, long seenAgoMillis, long last,
            long since) {
    }

    Registration register(String name, String fingerprint, Duration liveness) {
        RmqRedisSchedules.Registration r = await(schedules.register(name, fingerprint, liveness.toMillis()),
                "registering schedule '" + name + "'");
        return new Registration(r.now(), r.conflict(), r.registered(), r.seenAgoMillis(), r.last(), r.since());
    }

    enum Outcome { FIRE, MISSED, PAUSED, STALE }

    record Claim(Outcome outcome, long now) {
    }

    Claim claim(ScheduleDefinition schedule, long firing, long next) {
        RmqRedisSchedules.Claim claim = await(schedules.claim(schedule.name(), firing,
                next == FiringTimes.NONE ? Long.MAX_VALUE : next, schedule.thresholdMillis(),
                schedule.misfire().value()), "taking a firing of schedule '" + schedule.name() + "'");
        return new Claim(Outcome.valueOf(claim.outcome().name()), claim.now());
    }

    /** Records how the latest firing that ran ended. */
    void recordOutcome(String name, long firing, boolean success, long at, long tookMillis, @Nullable String error) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("outcome", success ? "success" : "failure");
        fields.put("outcome_firing", Long.toString(firing));
        fields.put("outcome_at", Long.toString(at));
        fields.put("outcome_ms", Long.toString(tookMillis));
        fields.put("outcome_error", error == null ? "" : error);
        await(schedules.set(name, fields), "recording the outcome of schedule '" + name + "'");
    }

    void setPaused(String name, boolean paused) {
        if (paused) {
            await(schedules.set(name, Map.of("paused", "1")), "pausing schedule '" + name + "'");
        }
        else {
            await(schedules.remove(name, "paused"), "resuming schedule '" + name + "'");
        }
    }

    Map<String, String> read(String name) {
        return await(schedules.read(name), "reading schedule '" + name + "'");
    }

    /** Calls on the start-up thread and in firing handlers: a Redis that does not answer fails them soon. */
    private static final long TIMEOUT_MILLIS = 5_000;

    private static <T> T await(CompletableFuture<T> future, String what) {
        return RedisGateway.await(future, what, TIMEOUT_MILLIS);
    }
}
