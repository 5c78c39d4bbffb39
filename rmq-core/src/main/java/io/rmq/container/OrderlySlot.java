package io.rmq.container;

import java.util.ArrayList;
import java.util.List;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer.Outcome;
import io.rmq.observe.RmqInstrumentation.HandleScope;

/**
 * A slot an {@link OrderlyListenerContainer} holds. Its fields come in three groups, by owner: the ownership (epoch,
 * guard, being given up), which the coordination thread ({@link SlotOwnership}) changes; the scheduling state, guarded
 * by the lock of {@link OrderlySlots}; and what was handled since the last step, touched only by the one thread that
 * runs the slot (invariant 2 of {@link OrderlyStepper}), which {@link SlotStepSender} reports.
 */
final class OrderlySlot {

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

    // ---------------------------------------------------------------- guarded by OrderlySlots' lock

    boolean running;
    long dueAt;
    long wokenAt = Long.MAX_VALUE;

    // ---------------------------------------------------------------- touched only by the thread running the slot

    final List<Delivery> acked = new ArrayList<>();
    /** With an instrumentation: the scopes of {@link #acked}, in the same order, and of {@link #failed}. */
    final List<HandleScope> ackedScopes = new ArrayList<>();
    HandleScope failedScope;
    /** Deliveries of the last step that were not started: the next step hands them out again (not new). */
    int notStarted;
    Delivery failed;
    Outcome failure;
    int failedSteps;
    /** Local ms until which the slot's head waits for its retry (0: not suspended); set by each step, read anywhere. */
    volatile long suspendedUntil;

    OrderlySlot(int slot, long epoch, long validUntil, long dueAt) {
        this.slot = slot;
        this.epoch = epoch;
        this.validUntil = validUntil;
        this.dueAt = dueAt;
    }

    /** Whether the next step has something to report: acks, or a failure. */
    boolean hasReport() {
        return !acked.isEmpty() || failed != null;
    }
}
