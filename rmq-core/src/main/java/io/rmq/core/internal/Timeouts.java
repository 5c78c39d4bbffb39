package io.rmq.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.rmq.core.RmqTimeoutException;

/**
 * Bounds waits on the outside world. Every future the engine's progress depends on (a pop round, a lease
 * extension, a batch of acks or sends) is given a deadline here, so a reply that never comes (a frozen server, a
 * node that died with commands queued for it) ends the wait with a {@link RmqTimeoutException} instead of holding
 * a slot, a batch lane or a buffer place forever. Deadlines go on a hashed wheel (Netty's, 10 ms ticks: setting and
 * cancelling one is cheap enough for every batch call); periodic checks on one scheduled thread. Both are daemon
 * threads shared by the whole JVM; their tasks only complete futures and enqueue events.
 */
public final class Timeouts {

    private static final ScheduledThreadPoolExecutor TIMER = timer();
    private static final HashedWheelTimer WHEEL = new HashedWheelTimer(runnable -> {
        Thread thread = new Thread(runnable, "rmq-deadlines");
        thread.setDaemon(true);
        return thread;
    }, 10, TimeUnit.MILLISECONDS, 512);

    private Timeouts() {
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "rmq-timer");
            thread.setDaemon(true);
            return thread;
        });
        // most deadlines are cancelled long before they fire: do not let them pile up in the queue
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /**
     * A future that completes as {@code future} does, or exceptionally with {@link RmqTimeoutException} after
     * {@code millis}, whichever comes first. {@code future} itself is left alone (its late result is still seen by
     * whoever else waits on it).
     */
    public static <T> CompletableFuture<T> within(CompletableFuture<T> future, long millis, Supplier<String> what) {
        if (future.isDone()) {
            return future;
        }
        CompletableFuture<T> bounded = new CompletableFuture<>();
        Timeout deadline = WHEEL.newTimeout(timeout -> bounded.completeExceptionally(
                new RmqTimeoutException(what.get() + ": no reply from Redis within " + millis + " ms, so its outcome is"
                        + " unknown (it may or may not have been applied)")),
                millis, TimeUnit.MILLISECONDS);
        future.whenComplete((value, error) -> {
            deadline.cancel();
            if (error != null) {
                bounded.completeExceptionally(error);
            }
            else {
                bounded.complete(value);
            }
        });
        return bounded;
    }

    /** Runs {@code task} once after {@code millis} on the deadline thread (it must be short and must not block). */
    public static Timeout after(long millis, Runnable task) {
        return WHEEL.newTimeout(timeout -> task.run(), millis, TimeUnit.MILLISECONDS);
    }

    /**
     * Runs {@code task} every {@code millis} on the timer thread (short and non-blocking), guarded as the background
     * task {@code name}: nothing it throws ends its schedule, nor the timer thread every engine of the JVM shares.
     */
    public static ScheduledFuture<?> every(String name, long millis, Runnable task) {
        return TIMER.scheduleWithFixedDelay(BackgroundTask.of(name, task).runnable(), millis, millis,
                TimeUnit.MILLISECONDS);
    }
}
