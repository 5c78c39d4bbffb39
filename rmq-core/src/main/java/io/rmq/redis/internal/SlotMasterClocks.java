package io.rmq.redis.internal;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.rmq.core.internal.RmqKeys.SlotKeys;

/**
 * The send side's readings of the clock of each slot's master, so that native batch writes can compute RANGE_MERGE due
 * times ("Redis now + timeRange") without a script (and a lone send into a backlogged slot; other lone sends read
 * Redis's own clock in their script). Each slot's offset is read with one round trip and trusted for
 * {@link #REFRESH_NANOS}; the estimate is off by at most half a round trip plus the time the batch waits to be written
 * (both well under the 1 ms resolution of due times on a local network). Not the consuming side's estimate
 * ({@code io.rmq.container.internal.RedisClock}, bracketed by every pop and step), which must never run ahead of
 * Redis's clock; this one is read per slot and needs no bracket. Threads: the readings are a concurrent map; any
 * sending thread reads and refreshes them.
 */
final class SlotMasterClocks {

    /** How long an offset reading is used before it is read again (clocks drift, NTP steps them). */
    static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Redis ms minus local ms, and when it was read. */
    private record Reading(long offsetMillis, long readAtNanos) {
    }

    private final Function<SlotKeys, CompletableFuture<Long>> readRedisMillis;
    private final Map<SlotKeys, CompletableFuture<Reading>> readings = new ConcurrentHashMap<>();

    SlotMasterClocks(Function<SlotKeys, CompletableFuture<Long>> readRedisMillis) {
        this.readRedisMillis = readRedisMillis;
    }

    /** Redis's current time (ms) on the slot's master, as estimated here; completes at once after the first read. */
    CompletableFuture<Long> now(SlotKeys slot) {
        CompletableFuture<Reading> reading = readings.get(slot);
        if (reading != null && reading.isDone() && !reading.isCompletedExceptionally()) {
            Reading known = reading.join();
            if (System.nanoTime() - known.readAtNanos() > REFRESH_NANOS) {
                read(slot); // the stale reading serves this call; the fresh one the next
            }
            return CompletableFuture.completedFuture(System.currentTimeMillis() + known.offsetMillis());
        }
        if (reading == null || reading.isCompletedExceptionally()) {
            reading = read(slot);
        }
        return reading.thenApply(r -> System.currentTimeMillis() + r.offsetMillis());
    }

    private CompletableFuture<Reading> read(SlotKeys slot) {
        long localMillis = System.currentTimeMillis();
        long sentNanos = System.nanoTime();
        CompletableFuture<Reading> reading = readRedisMillis.apply(slot).thenApply(redisMillis -> {
            long receivedNanos = System.nanoTime();
            long halfTripMillis = TimeUnit.NANOSECONDS.toMillis(receivedNanos - sentNanos) / 2;
            return new Reading(redisMillis - (localMillis + halfTripMillis), receivedNanos);
        });
        readings.put(slot, reading);
        return reading;
    }
}
