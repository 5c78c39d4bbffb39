package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.rmq.consumer.Delivery;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import org.jspecify.annotations.Nullable;

/**
 * Hands an {@link OrderlyListenerContainer}'s handler threads their work and takes it back: which slot to step or
 * which lane to run next, the end of a step or a lane's run (what it handled joins the slot's report), and the
 * wake-ups that make a slot due. Threads: no state of its own; handler threads call {@link #takeWork},
 * {@link #finishLane}, {@link #reportMidRun} and {@link #finishStep} (a step's thread, which may be the thread settling
 * a reply), the wake-up subscriber {@link #wake} and {@link #wakeAll}; everything is read and changed under the lock
 * of {@link OrderlySlots}.
 *
 * <h2>Invariant 2</h2>
 * At most one thread steps a slot at a time ({@code stepping}), and at most one runs each of its lanes
 * ({@code running}), marked under the lock by {@link #takeWork}, {@link #finishLane}, {@link #reportMidRun} and
 * {@link OwnershipChanges#takeForRelease}, cleared by {@link #finishStep} and {@link #finishLane} only (a slot given
 * up or lost leaves the map still marked). A lane's deliveries are handed to its thread in order, and a lane whose
 * failure is not reported yet gets none ({@link StepBook#stepped}). No lane starts and no step takes on a slot being
 * given up, nor on one whose number an earlier, lost slot object still runs ({@link OrderlySlots#runsElsewhere}).
 * Waits are bounded by {@link #WAIT_BOUND_MILLIS}.
 */
final class LaneScheduler {

    private static final long WAIT_BOUND_MILLIS = 1000;

    private final OrderlySlots slots;
    private final OrderlyPauseGate gate;

    LaneScheduler(OrderlySlots slots, OrderlyPauseGate gate) {
        this.slots = slots;
        this.gate = gate;
    }

    /** What a handler thread does next: run {@code lane} of {@code slot}, or (null) step it. */
    record Work(OrderlySlot slot, @Nullable LaneRun lane) {
    }

    /** A lane marked running, and the deliveries its run handles in order. */
    record LaneRun(OrderlyLane lane, List<Delivery> deliveries) {
    }

    /** What follows a lane's run: the caller's action, and the next ready lane of the slot it runs (or null). */
    record LaneEnd(AfterLane after, @Nullable LaneRun next) {
    }

    /** What {@link #finishLane} asks of the thread that ran the lane. */
    enum AfterLane {
        NOTHING, STEP, GIVE_UP
    }

    /** Under the lock: marks the slot's first ready lane running and hands its queue out. */
    private LaneRun startLane(OrderlySlot s) {
        OrderlyLane lane = s.ready.poll();
        lane.ready = false;
        lane.running = true;
        s.lanesRunning++;
        List<Delivery> deliveries = new ArrayList<>(lane.queue);
        lane.queue.clear();
        s.queued -= deliveries.size();
        return new LaneRun(lane, deliveries);
    }

    /**
     * Waits for work and marks it: a slot whose report is urgent ({@link OrderlySlot#reportUrgent}; marked stepping),
     * else a ready lane of a slot that may start handlers (marked running, its queue handed out), else a slot due for a
     * step that takes messages, with few queued ({@code queued <= batch / 2}; marked stepping). Null once run
     * {@code generation} is no longer {@linkplain OrderlySlots#isCurrent current} (stopping, or started again). While
     * paused, lanes still run what was taken (the container finishes what it has in hand) and steps only report.
     */
    @Nullable Work takeWork(long generation, int batch, Predicate<OrderlySlot> mayStart) throws InterruptedException {
        slots.lock.lock();
        try {
            while (slots.isCurrent(generation)) {
                long now = System.currentTimeMillis();
                boolean paused = gate.isPaused();
                OrderlySlot report = null;
                OrderlySlot laneSlot = null;
                OrderlySlot take = null;
                long earliest = paused ? now + WAIT_BOUND_MILLIS : Long.MAX_VALUE; // resume() signals
                for (OrderlySlot s : slots.owned.values()) {
                    if (s.releasing || slots.runsElsewhere(s)) {
                        continue;
                    }
                    if (!s.stepping && s.reportUrgent(batch, now)) {
                        if (s.reportNotBefore <= now) {
                            report = s;
                            break;
                        }
                        earliest = Math.min(earliest, s.reportNotBefore);
                    }
                    else if (!s.stepping) {
                        earliest = Math.min(earliest, s.reportDueAt()); // its acks are due soon however busy it is
                    }
                    // lanes: of the slot with the fewest running, so that threads spread over the slots
                    if (!s.ready.isEmpty() && (laneSlot == null || s.lanesRunning < laneSlot.lanesRunning)
                            && mayStart.test(s)) {
                        laneSlot = s;
                    }
                    if (s.stepping || paused || s.queued > batch / 2) {
                        continue;
                    }
                    if (s.dueAt <= now && (take == null || s.dueAt < take.dueAt)) {
                        take = s;
                    }
                    earliest = Math.min(earliest, s.dueAt);
                }
                if (report != null) {
                    report.stepping = true;
                    return new Work(report, null);
                }
                if (laneSlot != null) {
                    return new Work(laneSlot, startLane(laneSlot));
                }
                if (take != null) {
                    take.stepping = true;
                    take.wokenAt = Long.MAX_VALUE;
                    return new Work(take, null);
                }
                slots.changed.await(Math.max(1, Math.min(earliest - now, WAIT_BOUND_MILLIS)), TimeUnit.MILLISECONDS);
            }
            return null;
        }
        finally {
            slots.lock.unlock();
        }
    }

    /**
     * Ends a step: the slot is due at {@code nextDue} (or sooner, if announced meanwhile). True when it is being given
     * up and nothing runs it any more: it stays marked stepping, and the caller gives it up.
     */
    boolean finishStep(OrderlySlot s, long nextDue) {
        slots.lock.lock();
        try {
            s.stepping = false;
            // an announcement that came while the slot stepped may be sooner than what its step said
            s.dueAt = Math.min(nextDue, s.wokenAt);
            s.wokenAt = Long.MAX_VALUE;
            return slots.ended(s);
        }
        finally {
            slots.lock.unlock();
        }
    }

    /**
     * Ends a lane's run: {@code acked} (with their scopes) and {@code failure} go into the slot's report; after a
     * failure, what the lane still holds ({@code notStarted} and its queue) is returned unstarted; without one,
     * {@code notStarted} (the run stopped early: the guard, the epoch, a stop) is queued again in front. Its action is
     * STEP when the caller sends the slot's report now ({@link OrderlySlot#reportUrgent}; it is marked stepping: acks
     * do not wait for the slot's next turn), GIVE_UP when the slot is being given up and nothing runs it any more.
     * With {@code mayStart} (the run ended normally) and nothing to do first, the caller goes on with the slot's next
     * ready lane (marked running here: one hold of the lock for both, where short handlers spend most of their time);
     * the other lanes stay in the ready queue for any thread, so a slow lane holds back no other.
     */
    LaneEnd finishLane(OrderlySlot s, OrderlyLane lane, List<Delivery> acked, List<HandleScope> ackedScopes,
            StepReport.@Nullable Failure failure, List<Delivery> notStarted, int batch,
            @Nullable Predicate<OrderlySlot> mayStart) {
        slots.lock.lock();
        try {
            long now = System.currentTimeMillis();
            s.report.acked.addAll(acked);
            s.report.ackedScopes.addAll(ackedScopes);
            if (failure != null) {
                s.report.failures.add(failure);
                lane.failedPending = true;
                s.report.returned.addAll(notStarted);
                s.report.returned.addAll(lane.queue);
                s.queued -= lane.queue.size();
                lane.queue.clear();
            }
            else if (!notStarted.isEmpty()) {
                for (int i = notStarted.size() - 1; i >= 0; i--) {
                    lane.queue.addFirst(notStarted.get(i));
                }
                s.queued += notStarted.size();
            }
            s.report.added(now);
            lane.running = false;
            s.lanesRunning--;
            if (!lane.queue.isEmpty() && !lane.failedPending) {
                lane.ready = true;
                s.ready.add(lane);
            }
            else if (lane.idle()) {
                s.lanes.remove(lane.group, lane);
            }
            if (slots.ended(s)) {
                return new LaneEnd(AfterLane.GIVE_UP, null);
            }
            if (!s.stepping && s.reportUrgent(batch, now) && s.reportNotBefore <= now && slots.live(s)) {
                s.stepping = true;
                return new LaneEnd(AfterLane.STEP, null);
            }
            slots.changed.signalAll();
            if (mayStart != null && !s.ready.isEmpty() && slots.live(s) && !s.lost && mayStart.test(s)
                    && !reportDueElsewhere(s, batch, now)) {
                return new LaneEnd(AfterLane.NOTHING, startLane(s));
            }
            return new LaneEnd(AfterLane.NOTHING, null);
        }
        finally {
            slots.lock.unlock();
        }
    }

    /**
     * A lane's run that goes on: its {@code acked} so far (the first at {@code since}, local ms) join the slot's report
     * now rather than at the run's end. True when the caller sends the report at once (it is urgent and no other
     * thread steps the slot: marked stepping, the caller steps, then goes on with its lane).
     */
    boolean reportMidRun(OrderlySlot s, List<Delivery> acked, List<HandleScope> ackedScopes, long since, int batch) {
        slots.lock.lock();
        try {
            long now = System.currentTimeMillis();
            s.report.acked.addAll(acked);
            s.report.ackedScopes.addAll(ackedScopes);
            s.report.added(since);
            if (!s.stepping && s.reportUrgent(batch, now) && s.reportNotBefore <= now && slots.live(s)) {
                s.stepping = true;
                return true;
            }
            slots.changed.signalAll();
            return false;
        }
        finally {
            slots.lock.unlock();
        }
    }

    /**
     * Under the lock: another owned slot's report is due and no thread steps it. The thread that ended a lane of
     * {@code s} goes back to {@link #takeWork} (which sends due reports first) instead of staying on {@code s}: a slot
     * whose threads all moved on must not keep its acks for as long as another slot has lanes ready.
     */
    private boolean reportDueElsewhere(OrderlySlot s, int batch, long now) {
        for (OrderlySlot other : slots.owned.values()) {
            if (other != s && !other.stepping && !other.releasing && other.reportNotBefore <= now
                    && other.reportUrgent(batch, now)) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- wake-ups (the wake-up subscriber's thread)

    /** A message of {@code slot} is due at {@code localDue} (local ms). */
    void wake(int slot, long localDue) {
        slots.lock.lock();
        try {
            OrderlySlot s = slots.owned.get(slot);
            if (s != null) {
                s.wokenAt = Math.min(s.wokenAt, localDue);
                if (!s.stepping) {
                    s.dueAt = Math.min(s.dueAt, s.wokenAt);
                }
                slots.changed.signalAll();
            }
        }
        finally {
            slots.lock.unlock();
        }
    }

    /**
     * The owned slots that wait for nothing: not stepping, nothing due in them as their last step read it (the
     * {@code maxIdle} check, {@link OrderlyIdleCheck}, looks at them).
     */
    int[] idleSlots() {
        slots.lock.lock();
        try {
            return slots.owned.values().stream().filter(s -> !s.stepping && s.dueAt == Long.MAX_VALUE
                    && s.wokenAt == Long.MAX_VALUE).mapToInt(s -> s.slot).toArray();
        }
        finally {
            slots.lock.unlock();
        }
    }

    /**
     * The idle check's answer: each of {@code idle} that holds anything ({@code counts[i] > 0}; every one when
     * {@code counts} is null: the check failed) and is still idle is due now.
     */
    void wakeIdle(int[] idle, long @Nullable [] counts) {
        slots.lock.lock();
        try {
            long now = System.currentTimeMillis();
            boolean woke = false;
            for (int i = 0; i < idle.length; i++) {
                OrderlySlot s = slots.owned.get(idle[i]);
                if (s != null && (counts == null || counts[i] > 0) && !s.stepping && s.dueAt == Long.MAX_VALUE) {
                    s.dueAt = now;
                    woke = true;
                }
            }
            if (woke) {
                slots.changed.signalAll();
            }
        }
        finally {
            slots.lock.unlock();
        }
    }

    /** Announcements may have been missed: every owned slot is due now. */
    void wakeAll() {
        slots.lock.lock();
        try {
            long now = System.currentTimeMillis();
            slots.owned.values().forEach(s -> s.wokenAt = now);
            slots.owned.values().stream().filter(s -> !s.stepping).forEach(s -> s.dueAt = now);
            slots.changed.signalAll();
        }
        finally {
            slots.lock.unlock();
        }
    }
}
