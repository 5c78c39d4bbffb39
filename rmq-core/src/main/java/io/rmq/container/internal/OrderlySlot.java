package io.rmq.container.internal;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * A slot an {@link OrderlyListenerContainer} holds. Its fields come in three groups, by owner: the ownership (epoch,
 * guard, being given up), which the coordination thread ({@link SlotOwnership}) changes; the scheduling state — who
 * steps it, its lanes and what they handled — guarded by the lock of {@link OrderlySlots}; and the step bookkeeping
 * ({@link #failedSteps}), touched only by the thread that has the slot marked {@link #stepping}.
 */
final class OrderlySlot {

    /**
     * The longest an ack (or a message returned unstarted) waits here for company before a step reports it: short
     * against any ownership timeout, so that a freeze or a kill leaves little acked work unreported (issue 43); long
     * enough that a slot busy with short handlers settles many lanes' runs per script call.
     */
    static final long REPORT_WAIT_MILLIS = 10;

    final int slot;

    // ---------------------------------------------------------------- ownership (SlotOwnership)

    /** The fencing token; changes only on the coordination thread. */
    volatile long epoch;
    /** Local ms until which handlers may start on this slot (with the coordinator's assurance, invariant 1). */
    volatile long validUntil;
    /** Being given up: no new handler starts; given up once no thread runs it. Set under the lock. */
    volatile boolean releasing;
    /** Put aside because it might not start handlers (invariant 1); due again as soon as a renewal restores it. */
    volatile boolean guardLapsed;
    /** Fenced or taken by another instance: no handler starts on it any more (set under the lock by lost()). */
    volatile boolean lost;

    // ---------------------------------------------------------------- guarded by OrderlySlots' lock

    /** A thread sends a step of the slot (one at a time, invariant 2), or gives it up. */
    boolean stepping;
    /** Lanes a handler thread runs now. */
    int lanesRunning;
    /** When the slot next wants a step that takes messages. */
    long dueAt;
    long wokenAt = Long.MAX_VALUE;
    /** The lanes that hold something or run, by group. */
    final Map<String, OrderlyLane> lanes = new HashMap<>();
    /** Lanes with messages queued and no thread on them, in the order they became ready. */
    final ArrayDeque<OrderlyLane> ready = new ArrayDeque<>();
    /** Messages queued in lanes, not started. */
    int queued;
    /**
     * Every member held here until a step has reported it (queued, running, acked, failed, returned): a message
     * Redis hands out again meanwhile (a resync step, a head whose retry a take-over counted) is not run twice.
     */
    final Set<ByteBuffer> holding = new HashSet<>();
    /**
     * Members returned unstarted (behind a failure of their lane): when taken again they are no new delivery for the
     * instrumentation's count of received messages.
     */
    final Set<ByteBuffer> unstarted = new HashSet<>();
    /** The next step hands out every held message first (the first step of an ownership, or after an unknown one). */
    boolean resync = true;
    /** What the lanes handled since the last step. */
    final StepReport report = new StepReport();
    /**
     * The last step that took found nothing it could take: the next step that reports takes too (what waited behind
     * this owner's lanes — a barrier of the common lane, a busy lane's duplicate — may be free once they reported).
     */
    boolean takeWithReport;
    /** Local ms before which no step is sent for the report alone (after a step whose outcome was unknown). */
    long reportNotBefore;

    // ---------------------------------------------------------------- the stepping thread's

    int failedSteps;
    /** Local ms until which a lane's head waits for its retry (0: none), as of the last step; read anywhere. */
    volatile long suspendedUntil;

    OrderlySlot(int slot, long epoch, long validUntil, long dueAt) {
        this.slot = slot;
        this.epoch = epoch;
        this.validUntil = validUntil;
        this.dueAt = dueAt;
    }

    /** Under the lock: a thread steps the slot or runs one of its lanes. */
    boolean busy() {
        return stepping || lanesRunning > 0;
    }

    /** Under the lock: whether the next step has something to report. */
    boolean hasReport() {
        return !report.isEmpty();
    }

    /**
     * Under the lock: whether the report is sent now rather than with the slot's next step that takes — a failure
     * (its lane waits for it), a batch of acks, the slot gone quiet (nothing runs or waits to run), or its oldest entry
     * waited {@link #REPORT_WAIT_MILLIS}. Acks of a busy slot ride along with its next take or with the acks of the
     * next few milliseconds (a script call costs Redis ~100 µs before its first message), but they never wait for a
     * take: what a frozen or killed owner leaves unreported, and a new owner handles again, is what its handlers had
     * in hand and the acks of its last few milliseconds, not the last second's.
     */
    boolean reportUrgent(int batch, long now) {
        return !report.isEmpty() && (!report.failures.isEmpty()
                || report.acked.size() + report.returned.size() >= batch
                || (lanesRunning == 0 && ready.isEmpty())
                || now >= reportDueAt());
    }

    /** Under the lock: local ms when the report is sent however busy the slot is (Long.MAX_VALUE: nothing to report). */
    long reportDueAt() {
        return report.since == Long.MAX_VALUE ? Long.MAX_VALUE : report.since + REPORT_WAIT_MILLIS;
    }
}
