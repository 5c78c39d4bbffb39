package io.rmq.observe.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.rmq.core.internal.BackgroundTask;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisHistory;

/**
 * Writes what {@link HistoryCounter} counted to Redis, every flush interval, in one script call for all topics
 * (history_flush.lua, which files the counts under Redis's clock and trims what has left the window). Nothing is
 * written when nothing was counted. A write that fails (Redis down, a timeout) keeps its counts and adds the next
 * interval's to them: memory stays at four numbers per topic, and nothing waits on Redis but this thread.
 * <p>
 * Its state ({@code pending}) is owned by its one thread, {@code rmq-history}; {@link #close} stops that thread and
 * only then makes the last write on the closing thread.
 */
public final class HistoryFlusher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HistoryFlusher.class);

    /** The flush's name as a background task (logs, and tests that make it fail). */
    public static final String TASK = "history flush";

    /** Longest a write is waited for (a shorter interval waits that long). */
    private static final long MAX_WAIT_MILLIS = 5_000;

    /** How long {@link #close} waits for a write under way and for the last one. */
    private static final long CLOSE_WAIT_MILLIS = 2_000;

    private final HistoryCounter counter;
    private final RmqRedisHistory redis;
    private final long intervalMillis;
    private final ScheduledExecutorService thread;
    /** Counts taken from the counter and not written yet, by topic; rmq-history's (then the closing thread's). */
    private final Map<String, long[]> pending = new LinkedHashMap<>();
    /** Whether the last write failed (one WARN per outage, one INFO when it ends). */
    private boolean failing;

    public HistoryFlusher(HistoryCounter counter, RmqRedisHistory redis, Duration interval) {
        this.counter = counter;
        this.redis = redis;
        this.intervalMillis = interval.toMillis();
        this.thread = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread t = new Thread(task, "rmq-history");
            t.setDaemon(true);
            return t;
        });
        // the guard never lets the schedule die: counts taken stay pending for the next interval
        thread.scheduleWithFixedDelay(BackgroundTask.of(TASK, () -> flush(Math.min(intervalMillis, MAX_WAIT_MILLIS)))
                .runnable(), intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
    }

    /** Takes the counts and writes them with what is pending; false when there was nothing to write. */
    private boolean flush(long waitMillis) {
        for (HistoryCounter.TopicCounts counts : counter.topics()) {
            long[] into = pending.get(counts.topic);
            if (into == null) {
                into = new long[RmqRedisHistory.KINDS];
                if (counts.takeInto(into)) {
                    pending.put(counts.topic, into);
                }
            }
            else {
                counts.takeInto(into);
            }
        }
        if (pending.isEmpty()) {
            return false;
        }
        List<String> topics = new ArrayList<>(pending.keySet());
        List<long[]> values = new ArrayList<>(pending.values());
        try {
            RedisGateway.await(redis.flush(topics, values, null), "writing the history counts", waitMillis);
        }
        catch (RuntimeException ex) {
            // kept and written with the next interval's counts (a write that timed out after Redis applied it is
            // counted twice: the history is for people, an exact record would need a token per write)
            if (!failing) {
                failing = true;
                log.warn("RMQ could not write the history counts of {} topic(s) ({}); keeping them and trying again"
                        + " every {} ms", topics.size(), RedisGateway.describe(ex), intervalMillis);
            }
            else {
                log.debug("RMQ history write failed again", ex);
            }
            return true;
        }
        pending.clear();
        if (failing) {
            failing = false;
            log.info("RMQ wrote the history counts again");
        }
        return true;
    }

    /** Stops the schedule and writes what was counted since the last write (waiting at most 2 s for Redis). */
    @Override
    public void close() {
        thread.shutdown(); // a write under way finishes; no new one starts
        try {
            if (!thread.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                return; // a write still under way owns the state: leave it
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return;
        }
        try {
            flush(CLOSE_WAIT_MILLIS);
        }
        catch (RuntimeException ex) {
            log.debug("RMQ could not write the last history counts", ex);
        }
    }
}
