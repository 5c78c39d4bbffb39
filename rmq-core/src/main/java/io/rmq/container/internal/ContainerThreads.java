package io.rmq.container.internal;

import java.util.concurrent.TimeUnit;

/** Thread helpers shared by the container kinds. */
final class ContainerThreads {

    private ContainerThreads() {
    }

    /** Waits for {@code thread} to end, at most until {@code deadlineNanos} ({@link System#nanoTime()}). */
    static void joinUntil(Thread thread, long deadlineNanos) {
        try {
            long millis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            thread.join(Math.max(1, millis));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
