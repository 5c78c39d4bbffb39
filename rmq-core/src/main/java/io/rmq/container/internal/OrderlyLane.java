package io.rmq.container.internal;

import java.util.ArrayDeque;

import io.rmq.consumer.Delivery;

/**
 * One lane of an owned ORDERLY slot: the messages of one group (or the slot's common lane, {@code ""}, for messages
 * stored without one) that this owner holds, handled strictly in order by one handler thread at a time while other
 * lanes of the slot run on other threads. Threads: guarded by the lock of {@link OrderlySlots}.
 */
final class OrderlyLane {

    final String group;
    /** Taken and not started, in handling order. */
    final ArrayDeque<Delivery> queue = new ArrayDeque<>();
    /** A handler thread runs it now. */
    boolean running;
    /** In the slot's ready queue (not running, something queued). */
    boolean ready;
    /**
     * A failure of this lane is not reported yet: whatever comes for it meanwhile goes back unstarted (Redis keeps the
     * failed message at the lane's head, and hands the rest out again after it).
     */
    boolean failedPending;

    OrderlyLane(String group) {
        this.group = group;
    }

    /** Nothing held, nothing to report: the slot may forget it. */
    boolean idle() {
        return queue.isEmpty() && !running && !failedPending;
    }
}
