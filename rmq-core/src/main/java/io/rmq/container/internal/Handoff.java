package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;

import io.rmq.consumer.Delivery;
import io.rmq.core.internal.Timeouts;

/**
 * Gathers the replies of one pop round and hands them to the {@link HandoffBuffer} together (sorted there), once
 * every pop has answered (reply or error) or {@link #GRACE_MILLIS} after the first reply, whichever comes first; what
 * answers later is handed over as it comes. Nothing is held longer than the grace: a pop that never answers costs the
 * others at most that, so a slot whose node is dead or frozen holds back only itself.
 * <p>
 * Threads: replies arrive on Lettuce's event loop (or the poller, for a pop that failed at once), the grace ends on the
 * deadline thread; the state is guarded by this object's monitor, and nothing is handed over under it.
 */
final class Handoff {

    /**
     * How long the first replies of a round wait for the others before they go to the handlers. Slots answer one by
     * one; handing each reply over on its own let a lower priority (or a later due time) from a quick slot start
     * before a higher one that came a moment later, so a backlog was no longer handled in taking order across slots.
     * The replies of one node's pipelined pops come within about a millisecond; a slot whose node is slow, frozen
     * or dead holds the others back by this much at most (the timer wheel ticks every 10 ms).
     */
    static final long GRACE_MILLIS = 20;

    private final HandoffBuffer buffer;
    private int waitingFor;
    private List<Delivery> gathered = new ArrayList<>();
    private boolean timerSet;

    Handoff(HandoffBuffer buffer, int pops) {
        this.buffer = buffer;
        this.waitingFor = pops;
    }

    /** One pop of the round answered; {@code late}: after its timeout. */
    void arrived(List<Delivery> deliveries, boolean late) {
        List<Delivery> now;
        synchronized (this) {
            waitingFor--;
            if (gathered == null) {
                now = deliveries; // the round was handed over already
            }
            else {
                gathered.addAll(deliveries);
                if (waitingFor > 0) {
                    if (!timerSet) {
                        timerSet = true;
                        Timeouts.after(GRACE_MILLIS, this::handOver);
                    }
                    return;
                }
                now = gathered;
                gathered = null;
            }
        }
        buffer.deliver(now, late);
    }

    private void handOver() {
        List<Delivery> now;
        synchronized (this) {
            now = gathered;
            gathered = null;
        }
        if (now != null) {
            buffer.deliver(now, false);
        }
    }
}
