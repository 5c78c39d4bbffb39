package io.rmq.core.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one guard around every background task of RMQ (the instance heartbeat, the history flush, the queue-size
 * gauges, the wake-up check, the container watchdogs, the schedule top-up, the connect loop). A
 * {@code ScheduledExecutorService} ends a periodic task for good, and silently, the first time a run throws; an
 * {@link Error} (a {@code NoClassDefFoundError} of an optional dependency, a {@code StackOverflowError} in a user's
 * callback, an {@code OutOfMemoryError} that passed) got through the tasks' own {@code catch (RuntimeException)}, and
 * an instance heartbeat that stopped that way stopped applying cluster-wide pauses without a word. A guarded run
 * catches anything, logs it with the task's name and returns, so the schedule goes on.
 * <p>
 * Logged once per streak: the first failure of a streak at ERROR with its stack trace (whatever reaches the guard is a
 * bug or a broken JVM: the tasks log expected failures, Redis unreachable, themselves), the following ones at DEBUG,
 * and the first run that completes after a streak at INFO. State: {@link #failing}, written by whichever thread runs
 * the task (one at a time: each task has one scheduled thread or one loop).
 */
public final class BackgroundTask {

    private static final Logger log = LoggerFactory.getLogger(BackgroundTask.class);

    /** Throwables that tests make the next run of a named task throw; empty in production (one read per run). */
    private static final Map<String, Throwable> INJECTED = new ConcurrentHashMap<>();

    private final String name;
    private final Runnable body;
    private volatile boolean failing;

    private BackgroundTask(String name, Runnable body) {
        this.name = name;
        this.body = body;
    }

    /** {@code body} guarded as the task {@code name} (e.g. "instance heartbeat"), for a scheduler to run. */
    public static BackgroundTask of(String name, Runnable body) {
        return new BackgroundTask(name, body);
    }

    /** A {@link Runnable} of {@link #runOnce()}, for {@code ScheduledExecutorService}. */
    public Runnable runnable() {
        return this::runOnce;
    }

    /** Runs the body once; false when it threw (logged here), true when it completed. Never throws. */
    public boolean runOnce() {
        try {
            Throwable injected = INJECTED.isEmpty() ? null : INJECTED.remove(name);
            if (injected != null) {
                throw injected;
            }
            body.run();
            if (failing) {
                failing = false;
                log.info("RMQ background task '{}' runs again", name);
            }
            return true;
        }
        catch (Throwable ex) {
            if (!failing) {
                failing = true;
                log.error("RMQ background task '{}' failed; it keeps its schedule and runs again", name, ex);
            }
            else {
                log.debug("RMQ background task '{}' failed again", name, ex);
            }
            return false;
        }
    }

    public String name() {
        return name;
    }

    /**
     * For tests: the next run of the task named {@code name} throws {@code failure} instead of running its body (as a
     * bug in the body would). Replaces an earlier injection for that name that no run has taken yet.
     */
    public static void failNextRun(String name, Throwable failure) {
        INJECTED.put(name, failure);
    }

    /** For tests: whether an injection for {@code name} is still waiting for a run. */
    public static boolean injectionPending(String name) {
        return INJECTED.containsKey(name);
    }

    /** For tests: drops an injection no run took (a test that ends early leaves nothing for the next one). */
    public static @Nullable Throwable clearInjection(String name) {
        return INJECTED.remove(name);
    }
}
