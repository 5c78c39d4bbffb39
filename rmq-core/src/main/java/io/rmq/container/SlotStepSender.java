package io.rmq.container;

import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.RmqConsumer.OrderedStep;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RedisGateway;

/**
 * Sends an owned slot's steps to Redis (orderly_next.lua): what was handled since the last step (acks, the failure),
 * and the next messages to take, all under the slot's epoch; then settles what the step reported. Threads: called by
 * whichever thread has the slot marked running (a handler thread, the coordination thread or stop() giving it up),
 * which alone touches the slot's handled state; {@link #clockOffset} is written by every step and read anywhere.
 *
 * <h2>Invariant 4</h2>
 * Every step waits on Redis at most {@code commandTimeout}. A step whose outcome is unknown throws before anything
 * is cleared, so the next step sends the same acks and failure again (acks are idempotent); the
 * {@link OrderlyStepper} pauses before it. A fenced step means another instance owns the slot: it is forgotten. Once
 * Redis has run a step, what it reported is cleared whatever the follow-up throws, so it is never reported twice.
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
    }

    /** Estimated Redis clock minus local clock: a Redis time minus this is local. */
    long clockOffset() {
        return clockOffset;
    }

    /**
     * Sends a step: what was handled since the last one, and (with {@code wanted > 0}) takes the next messages.
     * Returns null when the slot was fenced (and forgets it).
     */
    OrderedStep send(OrderlySlot s, int wanted) {
        long epoch = s.epoch;
        long sent = System.currentTimeMillis();
        long sentNanos = instrumented ? System.nanoTime() : 0;
        OrderedStep step;
        try {
            step = RedisGateway.await(consumer.orderedStep(s.slot, epoch, wanted, s.acked, s.failed,
                    s.failure == null ? null : s.failure.reason(), s.failure == null ? null : s.failure.decision()),
                    "a step on slot " + s.slot + " of topic '" + topic + "'", commandTimeoutMillis);
        }
        catch (RuntimeException ex) {
            if (instrumented) {
                reportStep(s, wanted, null, ex, System.nanoTime() - sentNanos);
            }
            throw ex;
        }
        long received = System.currentTimeMillis();
        clockOffset = step.redisNow() - (sent + received) / 2;
        s.failedSteps = 0;
        s.suspendedUntil = step.suspended() ? Math.max(1, step.nextDue() - clockOffset) : 0;
        try {
            settled(s, wanted, step, System.nanoTime() - sentNanos);
        }
        finally {
            // Redis has settled what the step reported: it is never reported twice (a failure would count twice),
            // whatever the instrumentation or the failure's follow-up threw
            s.ackedScopes.clear();
            s.failedScope = null;
            s.acked.clear();
            s.failed = null;
            s.failure = null;
        }
        if (step.fenced()) {
            slots.lost(s, epoch, "fenced: its ownership ran out or another instance took it");
            return null;
        }
        return step;
    }

    /** What follows a step Redis has run: the failure's follow-up (log, dead-letter topic), the instrumentation. */
    private void settled(OrderlySlot s, int wanted, OrderedStep step, long nanos) {
        if (instrumented) {
            reportStep(s, wanted, step, null, nanos);
        }
        NackOutcome failedOutcome = null;
        if (s.failed != null) {
            failedOutcome = step.fenced() ? NackOutcome.FENCED : step.failedOutcome();
            consumer.afterFailure(s.failed, failedOutcome, s.failure);
        }
        if (instrumented) {
            RmqInstrumentation.Outcome acked = step.fenced() ? RmqInstrumentation.Outcome.FENCED
                    : RmqInstrumentation.Outcome.ACK;
            s.ackedScopes.forEach(scope -> scope.settled(acked));
            if (s.failedScope != null && failedOutcome != null) {
                s.failedScope.settled(RmqConsumer.outcomeOf(failedOutcome));
            }
        }
    }

    /**
     * Reports one step: a step that takes messages is this listener's pop of the slot ({@code popped} /
     * {@code popFailed}, {@code operation("receive")}, its settlements included); one that only settles is an
     * {@code ack} (or a {@code nack} when it reports a failure).
     */
    private void reportStep(OrderlySlot s, int wanted, OrderedStep step, Throwable error, long nanos) {
        Throwable failure = RedisGateway.unwrap(error);
        if (wanted > 0) {
            if (failure == null) {
                int taken = step.deliveries().size();
                // what the last step took and did not start comes again first: counted once, when first taken
                int again = Math.min(taken, s.notStarted);
                s.notStarted -= again;
                instrumentation.popped(id, topic, s.slot, taken - again, nanos);
            }
            else {
                instrumentation.popFailed(id, topic, s.slot, failure);
            }
            instrumentation.operation("receive", topic, nanos, failure);
        }
        else {
            instrumentation.operation(s.failed != null ? "nack" : "ack", topic, nanos, failure);
        }
    }
}
