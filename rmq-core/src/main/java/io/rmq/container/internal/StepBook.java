package io.rmq.container.internal;

import java.nio.ByteBuffer;
import java.util.List;

import io.rmq.consumer.Delivery;

/**
 * The bookkeeping of an ORDERLY slot's steps: whether a step takes, the report it sends (moved out of the slot, put
 * back when the outcome is unknown), and what Redis answered (what it reported is no longer held; what it took joins
 * the lanes). Threads: no state of its own; called by the thread that has the slot marked {@code stepping} (a handler
 * thread, the thread settling a step's reply, the coordination thread or stop() giving the slot up), and by the
 * coordination thread for {@link #hasReport}; everything is read and changed under the lock of {@link OrderlySlots}.
 */
final class StepBook {

    private final OrderlySlots slots;
    private final OrderlyPauseGate gate;

    StepBook(OrderlySlots slots, OrderlyPauseGate gate) {
        this.slots = slots;
        this.gate = gate;
    }

    /** When {@code s} next wants a step that takes (local ms). */
    long dueAt(OrderlySlot s) {
        return slots.locked(() -> s.dueAt);
    }

    /** Whether {@code s}'s lanes handled something not reported yet. */
    boolean hasReport(OrderlySlot s) {
        return slots.locked(s::hasReport);
    }

    /** Whether a step of {@code s} should take messages: due, not paused nor given up, few queued in its lanes. */
    boolean wantsTake(OrderlySlot s, int batch) {
        return slots.locked(() -> {
            boolean take = !gate.isPaused() && !s.releasing && s.queued <= batch / 2
                    && (Math.min(s.dueAt, s.wokenAt) <= System.currentTimeMillis()
                            || s.takeWithReport && s.hasReport());
            if (take) {
                s.takeWithReport = false;
            }
            return take;
        });
    }

    /** A step that took found nothing: the next one that reports takes too (see {@link OrderlySlot#takeWithReport}). */
    void tookNothing(OrderlySlot s) {
        slots.locked(() -> s.takeWithReport = true);
    }

    /** The slot's report, moved out for a step to send. */
    StepReport drainReport(OrderlySlot s) {
        return slots.locked(() -> {
            StepReport report = s.report.drain();
            // a common-lane failure alone holds nothing: Redis suspends the lane or has moved the message on
            OrderlyLane common = s.lanes.get("");
            report.serial = common != null && (common.running || !common.queue.isEmpty());
            return report;
        });
    }

    /** Whether the next step of {@code s} hands out every held message first. */
    boolean resync(OrderlySlot s) {
        return slots.locked(() -> s.resync);
    }

    /**
     * A step whose outcome is unknown: its report goes back in front, sent again after {@code pauseMillis} (no tight
     * loop while Redis is away), and the next step resyncs.
     */
    void stepUnknown(OrderlySlot s, StepReport unsent, long pauseMillis) {
        slots.locked(() -> {
            s.report.restore(unsent);
            s.reportNotBefore = System.currentTimeMillis() + pauseMillis;
            s.resync = true;
            return null;
        });
    }

    /**
     * A step Redis has run: what it reported is no longer held here, the lanes whose failure it reported take
     * messages again, and (unless fenced) {@code deliveries} join their lanes in order — but not what is held here
     * already (handed out again), and not what comes for a lane whose failure is not reported yet (returned). Returns
     * how many of them are new deliveries (not held here, nor returned unstarted before).
     */
    int stepped(OrderlySlot s, StepReport sent, boolean resynced, boolean fenced, List<Delivery> deliveries) {
        slots.lock.lock();
        try {
            int fresh = 0;
            if (resynced) {
                s.resync = false;
            }
            for (Delivery d : sent.acked) {
                s.holding.remove(ByteBuffer.wrap(d.member()));
            }
            for (Delivery d : sent.returned) {
                s.holding.remove(ByteBuffer.wrap(d.member()));
                s.unstarted.add(ByteBuffer.wrap(d.member()));
            }
            for (StepReport.Failure failure : sent.failures) {
                s.holding.remove(ByteBuffer.wrap(failure.delivery().member()));
                OrderlyLane lane = s.lanes.get(laneOf(failure.delivery()));
                if (lane != null) {
                    lane.failedPending = false;
                    if (lane.idle()) {
                        s.lanes.remove(lane.group, lane);
                    }
                }
            }
            if (fenced) {
                return 0;
            }
            for (Delivery d : deliveries) {
                ByteBuffer member = ByteBuffer.wrap(d.member());
                if (!s.holding.add(member)) {
                    continue;
                }
                if (!s.unstarted.remove(member)) {
                    fresh++;
                }
                String group = laneOf(d);
                OrderlyLane lane = s.lanes.computeIfAbsent(group, OrderlyLane::new);
                if (lane.failedPending) {
                    s.report.returned.add(d);
                    s.report.added(System.currentTimeMillis());
                    continue;
                }
                lane.queue.add(d);
                s.queued++;
                if (!lane.running && !lane.ready) {
                    lane.ready = true;
                    s.ready.add(lane);
                }
            }
            slots.changed.signalAll();
            return fresh;
        }
        finally {
            slots.lock.unlock();
        }
    }

    /** The lane of a delivery: its group, or the slot's common lane for one stored without (as orderly_lane). */
    static String laneOf(Delivery d) {
        String group = d.group();
        return group == null ? "" : group;
    }
}
