package io.rmq.benchmarks.peers.rqueue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** Process-wide counters shared by the listener and the workload driver (one workload per process). */
final class BenchStats {

    static final AtomicInteger HANDLED = new AtomicInteger();
    /** System.nanoTime() of the N-th handled message, 0 until then. */
    static final AtomicLong DONE_NANOS = new AtomicLong();
    /** System.nanoTime() of the first handled message, 0 until then. */
    static final AtomicLong FIRST_NANOS = new AtomicLong();
    /** System.nanoTime() when Rqueue's listener container reported it started, 0 until then. */
    static final AtomicLong CONTAINER_STARTED_NANOS = new AtomicLong();
    /** Opened by the first RqueueBootstrapEvent (startup); replaced by {@link #clear()}. */
    static volatile CountDownLatch CONTAINER_STARTED = new CountDownLatch(1);

    /** Messages to handle before {@link #DONE} opens. */
    static volatile int target = Integer.MAX_VALUE;
    static volatile CountDownLatch DONE = new CountDownLatch(1);

    /** delay workload: due time (epoch ms) per message id, and observed lateness (ms) per handled message. */
    static volatile long[] dueMillis;
    static volatile long[] lateness;

    private BenchStats() {
    }

    static void reset(int n) {
        target = n;
        DONE = new CountDownLatch(1);
    }

    /** Back to the process-start state, after the warm-up phase (its context is closed, its listener stopped). */
    static void clear() {
        HANDLED.set(0);
        DONE_NANOS.set(0);
        FIRST_NANOS.set(0);
        CONTAINER_STARTED_NANOS.set(0);
        CONTAINER_STARTED = new CountDownLatch(1);
        target = Integer.MAX_VALUE;
        DONE = new CountDownLatch(1);
        dueMillis = null;
        lateness = null;
    }

    static void onHandled(BenchMessage m) {
        long[] due = dueMillis;
        int k = HANDLED.incrementAndGet();
        if (k == 1) {
            FIRST_NANOS.compareAndSet(0, System.nanoTime());
        }
        if (due != null) {
            long late = System.currentTimeMillis() - due[m.getId()];
            long[] l = lateness;
            if (k <= l.length) {
                l[k - 1] = late;
            }
        }
        if (k == target) {
            DONE_NANOS.set(System.nanoTime());
            DONE.countDown();
        }
    }
}
