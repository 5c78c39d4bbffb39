package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;

import io.rmq.core.internal.Timeouts;
import io.rmq.observe.RmqInstrumentation;
import org.slf4j.Logger;

/**
 * Checks every second, on the shared timer thread ({@link Timeouts#every}), what a container's invariants promise,
 * through the {@linkplain Check checks} the container supplies, and counts the repairs they make. It knows nothing of
 * the container's mode: each container says what to check (its poller, its slots, its handler threads).
 * <p>
 * Threads: the checks and {@link #lastCheckMillis} belong to the timer thread (one round at a time); {@link #add},
 * {@link #start} and {@link #stop} are called by the container's lifecycle (the checks are added before the start,
 * which publishes them to the timer thread); {@link #repaired} and {@link #repairs} are atomic, any thread.
 * <p>
 * A round whose gap to the last one is over three periods follows a pause of the whole JVM (a long GC, SIGSTOP): it
 * runs no check, only tells each one ({@link Check#jvmPaused}), so that a pause is never taken for a stall. A check
 * that throws (anything) is logged once per failure with the listener's id; the other checks and later rounds go on.
 */
final class ContainerWatchdog {

    static final long EVERY_MILLIS = 1000;

    /** One thing the watchdog checks each round. */
    interface Check {

        /**
         * Checks one invariant at local ms {@code now}. A broken one is logged as an ERROR naming the container,
         * repaired, and counted with {@link ContainerWatchdog#repaired()}.
         */
        void check(long now);

        /** The JVM stood still before this round: this round checks nothing; restart what measures silence. */
        default void jvmPaused(long now) {
        }
    }

    private final String id;
    private final String topic;
    private final Logger log;
    private final RmqInstrumentation instrumentation;
    private final List<Check> checks = new ArrayList<>();
    /** Stalls found and repaired (each one a broken invariant, logged as an ERROR by its check). */
    private final AtomicLong repairs = new AtomicLong();

    private ScheduledFuture<?> schedule;
    private volatile boolean stopped;
    /** Local ms of the last round (timer thread; set by {@link #start} before the first). */
    private long lastCheckMillis;

    /** {@code log}: the container's logger (operators tune one logger per container kind). */
    ContainerWatchdog(String id, String topic, Logger log, RmqInstrumentation instrumentation) {
        this.id = id;
        this.topic = topic;
        this.log = log;
        this.instrumentation = instrumentation;
    }

    /** The watchdog of container {@code id} as a background task (logs, and tests that make it fail). */
    static String task(String id) {
        return "watchdog of listener container '" + id + "'";
    }

    /** Adds a check, before {@link #start}. */
    void add(Check check) {
        checks.add(check);
    }

    void start() {
        lastCheckMillis = System.currentTimeMillis();
        stopped = false;
        schedule = Timeouts.every(task(id), EVERY_MILLIS, () -> round(System.currentTimeMillis()));
    }

    /** No check runs after this returns, but one under way may end. */
    void stop() {
        stopped = true;
        if (schedule != null) {
            schedule.cancel(false);
        }
    }

    /** How many stalls the checks found and repaired. */
    long repairs() {
        return repairs.get();
    }

    /** Counts a repair (a broken invariant, logged as an ERROR by the check that found it). */
    void repaired() {
        repairs.incrementAndGet();
        if (instrumentation != RmqInstrumentation.NONE) {
            instrumentation.watchdogRepaired(id, topic);
        }
    }

    /** One round at local ms {@code now} (the timer thread's; tests drive it directly). */
    void round(long now) {
        long sinceLastCheck = now - lastCheckMillis;
        lastCheckMillis = now;
        boolean jvmPaused = sinceLastCheck > 3 * EVERY_MILLIS;
        for (Check check : checks) {
            if (stopped) {
                return;
            }
            try {
                if (jvmPaused) {
                    check.jvmPaused(now);
                }
                else {
                    check.check(now);
                }
            }
            catch (Throwable ex) {
                // the timer thread is shared by every container: nothing may end it
                log.error("RMQ listener container '{}' (topic '{}'): watchdog check failed", id, topic, ex);
            }
        }
    }
}
