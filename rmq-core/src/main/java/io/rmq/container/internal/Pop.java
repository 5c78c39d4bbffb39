package io.rmq.container.internal;

import java.util.concurrent.atomic.AtomicInteger;

import io.netty.util.Timeout;
import io.rmq.consumer.PollResult;

/**
 * The pop of one slot: how many it asked for, when it was sent (local ms), the cluster node it went to (null
 * standalone), and whether it has finished. What it asked for takes room in the buffer ({@code requested}) until it
 * finishes or, if it is slow, until the poller {@linkplain #discount() stops counting it}.
 * <p>
 * Every pop ends exactly once ({@link Ended}: the poller hears of it through one event), on whichever comes first of its reply, its error,
 * {@code commandTimeout} without a reply, or its abandonment (its slot moved to another cluster node, or the watchdog
 * gave it up): {@link #finish} decides once, on whichever thread comes first. Its other fields are final.
 */
final class Pop {

    private static final int COUNTED = 0;
    private static final int DISCOUNTED = 1;
    private static final int FINISHED = 2;

    final int slot;
    final int asked;
    final long sentMillis;
    final String node;
    private final AtomicInteger state = new AtomicInteger(COUNTED);
    /** The poller's count of messages asked for by pops not yet finished. */
    private final AtomicInteger requested;
    private final Ended ended;
    volatile Timeout deadline;

    Pop(int slot, int asked, long sentMillis, String node, AtomicInteger requested, Ended ended) {
        this.slot = slot;
        this.asked = asked;
        this.sentMillis = sentMillis;
        this.node = node;
        this.requested = requested;
        this.ended = ended;
    }

    boolean finished() {
        return state.get() == FINISHED;
    }

    /**
     * A pop without a reply for a while (its node may be dead or frozen) stops taking room in the buffer, so that
     * pops stuck on one node cannot keep the other slots from being polled (a dead master's pops asked for more than
     * half the buffer and held the healthy slots back until they were discounted). If slow pops answer after all, the
     * buffer holds at most a batch per slot more than its capacity for a while.
     */
    void discount() {
        if (state.compareAndSet(COUNTED, DISCOUNTED)) {
            requested.addAndGet(-asked);
        }
    }

    /** Ends the pop once, whatever ends it first; the poller hears of it through one event. */
    void finish(PollResult result, Throwable error) {
        int was = state.getAndSet(FINISHED);
        if (was == FINISHED) {
            return;
        }
        Timeout timer = deadline;
        if (timer != null) {
            timer.cancel();
        }
        if (was == COUNTED) {
            requested.addAndGet(-asked);
        }
        ended.ended(this, result, error);
    }

    /** Where a pop's end goes (the poller's event queue), on whichever thread ends it. */
    @FunctionalInterface
    interface Ended {

        void ended(Pop pop, PollResult result, Throwable error);
    }

    /** Ends a pop whose slot moved to another node (a failover): it is sent again at once, to the new node. */
    static final class SlotMoved extends RuntimeException {

        SlotMoved(int slot, String from, String to) {
            super("slot " + slot + " moved from cluster node " + from + " to " + to, null, false, false);
        }
    }
}
