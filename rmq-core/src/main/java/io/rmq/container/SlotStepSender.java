package io.rmq.container;

import java.util.ArrayList;
import java.util.List;

import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.RmqConsumer.LaneStep;
import io.rmq.consumer.RmqConsumer.StepFailure;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RedisGateway;

/**
 * Sends an owned slot's steps to Redis (orderly_next.lua): what its lanes handled since the last step (acks, failures,
 * messages returned unstarted), and the next messages to take, all under the slot's epoch; then settles what the step
 * reported and hands what it took to the slot's lanes. Threads: called by whichever thread has the slot marked
 * stepping (a handler thread, the coordination thread or stop() giving it up); the report it sends is its own copy
 * ({@link OrderlySlots#drainReport}); {@link #clockOffset} is written by every step and read anywhere.
 *
 * <h2>Invariant 4</h2>
 * Every step waits on Redis at most {@code commandTimeout}. A step whose outcome is unknown throws after putting its
 * report back in front of the slot's ({@link OrderlySlots#stepUnknown}), so the next step sends the same acks,
 * failures and returns again (all idempotent: each applies only to a member still in prepare) and resyncs; the
 * {@link OrderlyStepper} pauses before it. A fenced step means another instance owns the slot: it is forgotten. Once
 * Redis has run a step, what it reported is settled here whatever the follow-up throws, so it is never reported twice.
 */
final class SlotStepSender {

    private final RmqConsumer consumer;
    private final OrderlySlots slots;
    private final String id;
    private final String topic;
    private final long commandTimeoutMillis;
    /** The consumer's instrumentation; {@code instrumented} false for NONE (no clock reads, no scopes). */
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;
    /** Whether the instrumentation is {@link RmqInstrumentation#timed()}: steps are timed and reported as operations. */
    private final boolean timed;
    /** Estimated Redis clock minus local clock (from each step's reply). */
    private volatile long clockOffset;

    SlotStepSender(RmqConsumer consumer, OrderlySlots slots, String id, long commandTimeoutMillis) {
        this.consumer = consumer;
        this.slots = slots;
        this.id = id;
        this.topic = consumer.topic().name();
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
        this.timed = instrumentation.timed(); // NONE is not timed
    }

    /** Estimated Redis clock minus local clock: a Redis time minus this is local. */
    long clockOffset() {
        return clockOffset;
    }

    /**
     * Sends a step: what the slot's lanes handled since the last one, and (with {@code wanted > 0}) takes the next
     * messages into its lanes. Returns null when the slot was fenced (and forgets it).
     */
    LaneStep send(OrderlySlot s, int wanted) {
        long epoch = s.epoch;
        boolean resync = wanted > 0 && slots.resync(s);
        StepReport report = slots.drainReport(s);
        List<StepFailure> failures = new ArrayList<>(report.failures.size());
        for (StepReport.Failure failure : report.failures) {
            failures.add(new StepFailure(failure.delivery(), failure.outcome().reason(),
                    failure.outcome().decision()));
        }
        long sent = System.currentTimeMillis();
        long sentNanos = timed ? System.nanoTime() : 0;
        LaneStep step;
        try {
            step = RedisGateway.await(consumer.laneStep(s.slot, epoch, wanted, resync, report.serial, report.acked,
                    failures, report.returned), "a step on slot " + s.slot + " of topic '" + topic + "'",
                    commandTimeoutMillis);
        }
        catch (RuntimeException ex) {
            slots.stepUnknown(s, report, OrderlyStepper.ERROR_PAUSE_MILLIS);
            if (instrumented) {
                reportStep(s.slot, wanted, report, 0, ex, timed ? System.nanoTime() - sentNanos : 0);
            }
            throw ex;
        }
        long received = System.currentTimeMillis();
        clockOffset = step.redisNow() - (sent + received) / 2;
        s.failedSteps = 0;
        s.suspendedUntil = step.suspendedLanes() > 0 ? Math.max(1, step.earliestRetry() - clockOffset) : 0;
        long nanos = timed ? System.nanoTime() - sentNanos : 0;
        int fresh = 0;
        try {
            settled(report, step);
        }
        finally {
            // Redis has settled what the step reported: it is never reported twice (a failure would count twice),
            // whatever the instrumentation or a failure's follow-up threw; what it took joins the lanes
            fresh = slots.stepped(s, report, resync, step.fenced(), step.deliveries());
            if (instrumented) {
                reportStep(s.slot, wanted, report, fresh, null, nanos);
            }
        }
        if (step.fenced()) {
            slots.lost(s, epoch, "fenced: its ownership ran out or another instance took it");
            return null;
        }
        return step;
    }

    /** What follows a step Redis has run: each failure's follow-up (log, dead-letter topic), the instrumentation. */
    private void settled(StepReport report, LaneStep step) {
        RuntimeException first = null;
        for (int k = 0; k < report.failures.size(); k++) {
            StepReport.Failure failure = report.failures.get(k);
            NackOutcome outcome = step.failedOutcomes().get(k);
            try {
                consumer.afterFailure(failure.delivery(), outcome, failure.outcome());
            }
            catch (RuntimeException ex) {
                first = first == null ? ex : first; // the others' follow-ups still run
            }
            if (instrumented) {
                failure.scope().settled(RmqConsumer.outcomeOf(outcome));
            }
        }
        if (instrumented) {
            RmqInstrumentation.Outcome acked = step.fenced() ? RmqInstrumentation.Outcome.FENCED
                    : RmqInstrumentation.Outcome.ACK;
            report.ackedScopes.forEach(scope -> scope.settled(acked));
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Reports one step: a step that takes messages is this listener's pop of the slot ({@code popped} /
     * {@code popFailed}, {@code operation("receive")}, its settlements included); one that only settles is an
     * {@code ack} (or a {@code nack} when it reports a failure). Operations are reported only when timed.
     */
    private void reportStep(int slot, int wanted, StepReport report, int fresh, Throwable error, long nanos) {
        Throwable failure = RedisGateway.unwrap(error);
        if (wanted > 0) {
            if (failure == null) {
                // what was handed out again (held here, or returned unstarted behind a failure) counts once
                instrumentation.popped(id, topic, slot, fresh, nanos);
            }
            else {
                instrumentation.popFailed(id, topic, slot, failure);
            }
            if (timed) {
                instrumentation.operation("receive", topic, nanos, failure);
            }
        }
        else if (timed) {
            instrumentation.operation(report.failures.isEmpty() ? "ack" : "nack", topic, nanos, failure);
        }
    }
}
