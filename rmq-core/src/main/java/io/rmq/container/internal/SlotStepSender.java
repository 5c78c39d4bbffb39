package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.consumer.internal.SlotConsumer.LaneStep;
import io.rmq.consumer.internal.SlotConsumer.StepFailure;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RedisGateway;
import org.jspecify.annotations.Nullable;

/**
 * Sends an owned slot's steps to Redis (orderly_next.lua): what its lanes handled since the last step (acks, failures,
 * messages returned unstarted), and the next messages to take, all under the slot's epoch; then settles what the step
 * reported and hands what it took to the slot's lanes. Threads: called by whichever thread has the slot marked
 * stepping (a handler thread, the coordination thread or stop() giving it up), and a step sent without waiting
 * ({@link #report}) is settled by the thread that completes its reply, the slot still marked; the report it sends is
 * its own copy ({@link StepBook#drainReport}); every step's reply brackets the container's {@link RedisClock}.
 *
 * <h2>Invariant 4</h2>
 * Every step waits on Redis at most {@code commandTimeout}. A step whose outcome is unknown throws after putting its
 * report back in front of the slot's ({@link StepBook#stepUnknown}), so the next step sends the same acks,
 * failures and returns again (all idempotent: each applies only to a member still in prepare) and resyncs; the
 * {@link OrderlyStepper} pauses before it. A fenced step means another instance owns the slot: it is forgotten. Once
 * Redis has run a step, what it reported is settled here whatever the follow-up throws, so it is never reported twice.
 */
final class SlotStepSender {

    private final SlotConsumer consumer;
    private final StepBook steps;
    private final OwnershipChanges changes;
    private final String id;
    private final String topic;
    private final long commandTimeoutMillis;
    /** The consumer's instrumentation; {@code instrumented} false for NONE (no clock reads, no scopes). */
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;
    /** Whether the instrumentation is {@link RmqInstrumentation#timed()}: steps are timed and reported as operations. */
    private final boolean timed;
    /** Redis's clock, bracketed by each step's reply. */
    private final RedisClock clock;

    SlotStepSender(SlotConsumer consumer, StepBook steps, OwnershipChanges changes, RedisClock clock, String id, long commandTimeoutMillis) {
        this.consumer = consumer;
        this.steps = steps;
        this.changes = changes;
        this.clock = clock;
        this.id = id;
        this.topic = consumer.topic().name();
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
        this.timed = instrumentation.timed(); // NONE is not timed
    }

    /**
     * Sends a step: what the slot's lanes handled since the last one, and (with {@code wanted > 0}) takes the next
     * messages into its lanes. Returns null when the slot was fenced (and forgets it).
     */
    LaneStep send(OrderlySlot s, int wanted) {
        long epoch = s.epoch;
        boolean resync = wanted > 0 && steps.resync(s);
        return send(s, epoch, wanted, resync, steps.drainReport(s));
    }

    /**
     * A step that takes nothing, sent without waiting on Redis when its report holds no failure: the thread goes on
     * (a handler thread, with its lane) while the acks travel. A report with a failure is sent and settled before this
     * returns, as {@link #send} does (a failure's follow-up, the dead-letter send, wants a thread that may block).
     * Completes once Redis ran the step and it is settled here: true, or false when the slot was fenced (forgotten);
     * exceptionally when its outcome is unknown (the report is put back first, as {@link #send} does). Completion runs
     * on the thread that completes the reply (Lettuce's, or the timeout's): nothing on that path blocks.
     */
    CompletableFuture<Boolean> report(OrderlySlot s) {
        long epoch = s.epoch;
        StepReport report = steps.drainReport(s);
        if (!report.failures.isEmpty()) {
            try {
                return CompletableFuture.completedFuture(send(s, epoch, 0, false, report) != null);
            }
            catch (RuntimeException ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }
        long sent = System.currentTimeMillis();
        long sentNanos = timed ? System.nanoTime() : 0;
        String what = what(s);
        CompletableFuture<LaneStep> reply;
        try {
            reply = consumer.laneStep(s.slot, epoch, 0, false, report.serial, report.acked, List.of(),
                    report.returned);
        }
        catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(unknown(s, 0, report, ex, sentNanos)); // the report goes back
        }
        return reply.orTimeout(commandTimeoutMillis, TimeUnit.MILLISECONDS)
                .handle((step, error) -> {
                    if (error != null) {
                        throw unknown(s, 0, report, RedisGateway.failure(error, what, commandTimeoutMillis), sentNanos);
                    }
                    return settle(s, epoch, 0, false, report, step, sent, sentNanos) != null;
                });
    }

    private LaneStep send(OrderlySlot s, long epoch, int wanted, boolean resync, StepReport report) {
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
                    failures, report.returned), what(s), commandTimeoutMillis);
        }
        catch (RuntimeException ex) {
            throw unknown(s, wanted, report, ex, sentNanos);
        }
        return settle(s, epoch, wanted, resync, report, step, sent, sentNanos);
    }

    private String what(OrderlySlot s) {
        return "a step on slot " + s.slot + " of topic '" + topic + "'";
    }

    /** A step whose outcome is unknown: its report goes back in front (invariant 4); returns what to throw. */
    private RuntimeException unknown(OrderlySlot s, int wanted, StepReport report, RuntimeException ex,
            long sentNanos) {
        steps.stepUnknown(s, report, OrderlyStepper.ERROR_PAUSE_MILLIS);
        if (instrumented) {
            reportStep(s.slot, wanted, report, 0, ex, timed ? System.nanoTime() - sentNanos : 0);
        }
        return ex;
    }

    /** A step Redis has run, settled here; null when the slot was fenced (and forgotten). */
    private @Nullable LaneStep settle(OrderlySlot s, long epoch, int wanted, boolean resync, StepReport report,
            LaneStep step, long sent, long sentNanos) {
        long received = System.currentTimeMillis();
        clock.bracket(step.redisNow() - received, step.redisNow() - sent);
        s.failedSteps = 0;
        s.suspendedUntil = step.suspendedLanes() > 0 ? Math.max(1, step.earliestRetry() - clock.offset()) : 0;
        long nanos = timed ? System.nanoTime() - sentNanos : 0;
        int fresh = 0;
        try {
            settled(report, step);
        }
        finally {
            // Redis has settled what the step reported: it is never reported twice (a failure would count twice),
            // whatever the instrumentation or a failure's follow-up threw; what it took joins the lanes
            fresh = steps.stepped(s, report, resync, step.fenced(), step.deliveries());
            if (instrumented) {
                reportStep(s.slot, wanted, report, fresh, null, nanos);
            }
        }
        if (step.fenced()) {
            changes.lost(s, epoch, "fenced: its ownership ran out or another instance took it");
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
                failure.scope().settled(SlotConsumer.outcomeOf(outcome));
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
