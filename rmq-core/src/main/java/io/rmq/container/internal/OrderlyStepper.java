package io.rmq.container.internal;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.consumer.internal.SlotConsumer.LaneStep;
import io.rmq.consumer.internal.SlotConsumer.Outcome;
import io.rmq.consumer.internal.TopicRateLimiter;
import io.rmq.container.ContainerOptions;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import io.rmq.redis.internal.RedisGateway;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link OrderlyListenerContainer}'s handler threads do: take work ({@link LaneScheduler#takeWork}) — run a
 * lane (the messages of one group of an owned slot, in order) or step a slot (report what its lanes handled, take the
 * next messages into its lanes) — and hand it back. Threads: no state of its own; each handler thread runs
 * {@link #work()}, and touches a lane's deliveries only while it has the lane marked running, a slot's step
 * bookkeeping only while it has the slot marked stepping.
 *
 * <h2>Invariants</h2>
 * <ol>
 * <li value="2">At most one thread steps a slot, and at most one runs each lane, at a time (marked by
 * {@link LaneScheduler}); different lanes of a slot run in parallel, up to the container's concurrency. A lane's
 * messages are handled in their order and the run stops at the first failure; the failure and what the lane still
 * held (returned unstarted) are reported together, and Redis keeps the failed message at its lane's head until its
 * retry (the lane is suspended; the slot's other lanes go on) or moves it to dead. What a lane's run handled is
 * reported with the slot's next step that takes, or at once by the run's own thread when it is urgent
 * ({@link OrderlySlot#reportUrgent}: a failure, a batch of acks, the slot quiet, or its oldest ack has waited
 * {@link OrderlySlot#REPORT_WAIT_MILLIS}) and no other thread steps the slot (else by the next thread that finds it
 * urgent, before any other work). A step that only reports (no take due, no failure in it) is sent without waiting:
 * the slot stays marked stepping until its reply is settled, on the thread that completes it, and the handler thread
 * goes on with its lane (the 10 ms reports cost no handler time).</li>
 * <li value="4">A step whose outcome is unknown (its wait on Redis timed out or failed, {@link SlotStepSender}) is sent
 * again, with the same report, after {@link #ERROR_PAUSE_MILLIS}, and hands out every held message again (a resync:
 * what Redis took for the lost step reaches a lane; what is held here already is not run twice).</li>
 * </ol>
 * Before every handler start the slot's guard is checked ({@link SlotOwnership#mayStart}, invariant 1), and again
 * once the body is converted, right before the handler is called (a check-then-act window of a few instructions: a
 * thread stopped inside it still starts its handler at thaw; its ack is fenced by the epoch), and a step
 * takes messages only when {@link OrderlyPauseGate#beginTake()} allows it (not paused, invariant 5).
 * <p>
 * Nothing is stranded, whatever is thrown: a {@code Throwable} is caught at the thread's top and logged once with the
 * listener's id, and the thread goes on; a lane's run and a step always end ({@link LaneScheduler#finishLane},
 * {@link LaneScheduler#finishStep}), so nothing stays marked; a delivery in hand when the instrumentation throws ends as
 * a failure, retried in its place. Should something still escape (the log itself failing), the run has ended first,
 * and {@link HandlerThreads} replaces the thread.
 */
final class OrderlyStepper {

    /** Logs under the container's name ({@link ContainerLoggers}). */
    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.ORDERLY);

    static final long ERROR_PAUSE_MILLIS = 1000;
    /** What {@link #stepOnce} returns for a step that only reports: it ends when its reply is settled. */
    private static final long REPORTING = Long.MIN_VALUE;

    private final OrderlySlots slots;
    private final LaneScheduler scheduler;
    private final StepBook steps;
    private final OrderlyPauseGate gate;
    private final SlotOwnership ownership;
    private final SlotStepSender sender;
    /** Redis's clock: a step's due times are Redis's. */
    private final RedisClock clock;
    private final SlotConsumer consumer;
    private final Type payloadType;
    private final MessageHandler<Object> handler;
    private final TopicRateLimiter limiter;
    private final String id;
    private final String topic;
    private final int batch;
    private final long commandTimeoutMillis;
    private final ThreadFactory threadFactory;
    /** The consumer's instrumentation; {@code instrumented} false for NONE (no clock reads, no scopes). */
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;

    OrderlyStepper(OrderlySlots slots, LaneScheduler scheduler, StepBook steps, OrderlyPauseGate gate,
            SlotOwnership ownership, SlotStepSender sender, RedisClock clock, SlotConsumer consumer, Type payloadType,
            MessageHandler<Object> handler, ContainerOptions options, long commandTimeoutMillis) {
        this.slots = slots;
        this.scheduler = scheduler;
        this.steps = steps;
        this.gate = gate;
        this.ownership = ownership;
        this.sender = sender;
        this.clock = clock;
        this.consumer = consumer;
        this.payloadType = payloadType;
        this.handler = handler;
        this.limiter = options.rateLimit() == null ? null : consumer.rateLimiter(options.rateLimit());
        this.id = options.id();
        this.topic = consumer.topic().name();
        this.batch = consumer.settings().batchSize();
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.threadFactory = options.threadFactory();
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
    }

    /**
     * A handler thread: runs lanes and steps while its run is current (it reads the generation as it begins: a thread
     * that outlived a stop ends rather than join the next run).
     */
    void work() {
        long generation = slots.generation();
        while (slots.isCurrent(generation)) {
            try {
                LaneScheduler.Work work = scheduler.takeWork(generation, batch, ownership::mayStart);
                if (work == null) {
                    return;
                }
                if (work.lane() == null) {
                    step(work.slot(), generation, true);
                }
                else {
                    runLanes(work.slot(), work.lane(), generation);
                }
            }
            catch (InterruptedException ex) {
                return;
            }
            catch (Throwable ex) {
                // the thread's top: a handler thread that ended here would leave the container a thread short
                log.error("ORDERLY container '{}' (topic '{}'): unexpected error on handler thread {}; the thread goes"
                        + " on", id, topic, Thread.currentThread().getName(), ex);
            }
        }
    }

    /** Runs a lane, then (as long as its runs end normally) the slot's next ready lanes. */
    private void runLanes(OrderlySlot s, LaneScheduler.LaneRun first, long generation) {
        LaneScheduler.LaneRun run = first;
        while (run != null) {
            run = runLane(s, run.lane(), run.deliveries(), generation);
        }
    }

    /**
     * Handles a lane's deliveries in order and stops at the first failure (invariant 2); the lane's run ends, and what
     * it asks for is done (a step, the slot given up), whatever is thrown; its acks are reported at once when they
     * are urgent ({@link OrderlySlot#reportUrgent}) and no other thread steps the slot.
     *
     * @return the slot's next lane to run, marked running (only when this run ended normally), or null
     */
    private LaneScheduler.@Nullable LaneRun runLane(OrderlySlot s, OrderlyLane lane, List<Delivery> deliveries,
            long generation) {
        List<Delivery> acked = new ArrayList<>(deliveries.size());
        List<HandleScope> scopes = instrumented ? new ArrayList<>(deliveries.size()) : List.of();
        StepReport.Failure failure = null;
        long firstAckAt = 0;
        long epoch = s.epoch;
        int next = 0;
        boolean ended = false;
        LaneScheduler.LaneRun following = null;
        BooleanSupplier guard = () -> s.epoch == epoch && !s.lost && ownership.mayStart(s);
        try {
            for (; next < deliveries.size(); next++) {
                if (!slots.isCurrent(generation) || !guard.getAsBoolean()) {
                    break; // not started: queued again in front, in prepare for whoever runs the slot next
                }
                Delivery delivery = deliveries.get(next);
                HandleScope scope = HandleScope.NONE;
                Outcome outcome;
                long startedAt = System.currentTimeMillis();
                try {
                    // right before the handler (conversion included), on its thread
                    if (instrumented) {
                        scope = instrumentation.handleStarted(id, delivery, consumer.latenessMillis(delivery));
                    }
                    // the guard again once the body is converted: the thread may have stood still since the check
                    // above (preempted, or the whole JVM stopped), and the slot be another instance's by now
                    outcome = consumer.invoke(delivery, payloadType, handler, guard);
                    if (outcome == null) {
                        scope.notStarted();
                        scope.settled(RmqInstrumentation.Outcome.CANCELLED);
                        break; // not started: queued again in front, as above
                    }
                    scope.handlerReturned(outcome.error());
                }
                catch (Throwable ex) {
                    // the handler's own throws are its outcome: this came from around it (the instrumentation, a
                    // Throwable that is no Exception). The delivery ends as a failure, retried in its place: never
                    // held, and a repeat offender goes to dead after the retries like any failure
                    outcome = new Outcome(String.valueOf(ex), false, ex, FailureDecision.retry());
                    log.error("ORDERLY container '{}' (topic '{}'): unexpected error on handler thread {} around the"
                            + " handler of {}; it counts as a failed attempt", id, topic,
                            Thread.currentThread().getName(), delivery, ex);
                }
                if (outcome.failed()) {
                    failure = new StepReport.Failure(delivery, outcome, scope);
                    next++;
                    break; // the rest of its lane waits behind it (invariant 2)
                }
                long ackedAt = System.currentTimeMillis();
                if (acked.isEmpty()) {
                    firstAckAt = ackedAt;
                }
                acked.add(delivery);
                if (instrumented) {
                    scopes.add(scope);
                }
                if (next + 1 < deliveries.size() && (ackedAt - firstAckAt >= OrderlySlot.REPORT_WAIT_MILLIS
                        || ackedAt - startedAt >= OrderlySlot.REPORT_WAIT_MILLIS)) {
                    // a long run does not keep its acks to its end (what a freeze would leave unreported); after a
                    // handler that took the wait's length they are due at once: not one more handler's time
                    boolean stepNow = scheduler.reportMidRun(s, acked, scopes,
                            Math.min(firstAckAt, ackedAt - OrderlySlot.REPORT_WAIT_MILLIS), batch);
                    acked = new ArrayList<>(deliveries.size() - next);
                    scopes = instrumented ? new ArrayList<>(deliveries.size() - next) : List.of();
                    if (stepNow) {
                        step(s, generation, false); // this thread has a run to go on with: it only reports
                    }
                }
            }
            ended = true;
        }
        finally {
            LaneScheduler.LaneEnd end = scheduler.finishLane(s, lane, acked, scopes, failure,
                    deliveries.subList(next, deliveries.size()), batch, ended ? ownership::mayStart : null);
            following = end.next();
            // step() and giveUp() throw nothing: done here, so that nothing stays marked whatever was thrown
            if (end.after() == LaneScheduler.AfterLane.STEP) {
                step(s, generation, true);
            }
            else if (end.after() == LaneScheduler.AfterLane.GIVE_UP) {
                ownership.giveUp(s);
            }
        }
        return following;
    }

    /**
     * One step of a slot the thread has marked stepping; the step ends (and the slot is given up if due) whatever —
     * here, or once its reply is settled when it only reports ({@link #REPORTING}). Without {@code mayTake} it only
     * reports (a thread in the middle of a lane's run: a take is left to a thread that has nothing in hand).
     */
    private void step(OrderlySlot s, long generation, boolean mayTake) {
        long next = System.currentTimeMillis() + ERROR_PAUSE_MILLIS;
        try {
            next = stepOnce(s, generation, mayTake);
        }
        catch (Throwable ex) {
            stepFailed(s, ex);
        }
        finally {
            if (next != REPORTING && scheduler.finishStep(s, next)) {
                ownership.giveUp(s); // throws nothing: the slot leaves the owned ones whatever happens
            }
        }
    }

    private void stepFailed(OrderlySlot s, Throwable ex) {
        if (ex instanceof RuntimeException) {
            s.failedSteps++;
            if (s.failedSteps == 1 || s.failedSteps % 60 == 0) {
                log.warn("ORDERLY container '{}' failed a step on slot {} of topic '{}' ({} in a row); retrying in {}"
                        + " ms: {}", id, s.slot, topic, s.failedSteps, ERROR_PAUSE_MILLIS, String.valueOf(ex));
            }
        }
        else {
            log.error("ORDERLY container '{}' (topic '{}'): unexpected error on thread {} stepping slot {}; the slot is"
                    + " due again in {} ms", id, topic, Thread.currentThread().getName(), s.slot, ERROR_PAUSE_MILLIS,
                    ex);
        }
    }

    /**
     * The end of a step that only reported, on the thread that settled its reply (nothing here may block: a slot due
     * to be given up is given up on a thread of its own). {@code kept} false: fenced, the slot is forgotten.
     */
    private void reported(OrderlySlot s, long due, @Nullable Boolean kept, @Nullable Throwable error) {
        long next = due;
        try {
            if (error != null) {
                next = System.currentTimeMillis() + ERROR_PAUSE_MILLIS;
                stepFailed(s, RedisGateway.unwrap(error));
            }
            else if (!Boolean.TRUE.equals(kept)) {
                next = Long.MAX_VALUE;
            }
        }
        finally {
            if (scheduler.finishStep(s, next)) {
                threadFactory.newThread(() -> ownership.giveUp(s)).start();
            }
        }
    }

    /**
     * Reports what the slot's lanes handled and, when it may ({@code mayTake}) and wants more (few queued, due, not
     * paused), takes the next messages into its lanes.
     *
     * @return local ms when the slot next wants a step that takes
     */
    private long stepOnce(OrderlySlot s, long generation, boolean mayTake) {
        long due = steps.dueAt(s);
        if (!slots.isCurrent(generation) || s.releasing) {
            return due; // stop() or the release reports what was handled
        }
        if (!ownership.mayStart(s)) {
            // another instance may own the slot by now: take nothing, report what was handled (Redis refuses it
            // if so), and wait for a renewal (the coordination pass makes the slot due again)
            s.guardLapsed = true;
            if (steps.hasReport(s)) {
                sender.send(s, 0);
            }
            return System.currentTimeMillis() + ownership.renewEveryMillis();
        }
        s.guardLapsed = false;
        boolean take = mayTake && steps.wantsTake(s, batch) && gate.beginTake();
        if (!take) {
            // it only reports: no thread waits on the round trip (a handler thread goes on with its lane meanwhile,
            // issue 43's 10 ms reports cost no handler time); the step ends once the reply is settled
            sender.report(s).whenComplete((kept, error) -> reported(s, due, kept, error));
            return REPORTING;
        }
        LaneStep step;
        int wanted = batch;
        try {
            if (limiter != null) {
                long[] permits = limiter.acquire(batch, commandTimeoutMillis);
                wanted = (int) permits[0];
                if (wanted == 0) {
                    if (instrumented) {
                        instrumentation.rateLimitWaited(id, topic, TimeUnit.MILLISECONDS.toNanos(permits[1]));
                    }
                    if (steps.hasReport(s)) {
                        sender.send(s, 0);
                    }
                    return System.currentTimeMillis() + permits[1]; // throttled: no polling until a permit is free
                }
            }
            step = sender.send(s, wanted);
        }
        finally {
            gate.endTake();
        }
        if (step == null) {
            return Long.MAX_VALUE; // fenced: the slot is gone
        }
        if (limiter != null) {
            limiter.giveBack(wanted - step.deliveries().size());
        }
        if (!step.deliveries().isEmpty()) {
            return System.currentTimeMillis(); // more may be due
        }
        steps.tookNothing(s);
        long next = Long.MAX_VALUE;
        if (step.nextDue() >= 0) {
            next = step.nextDue() - clock.offset();
        }
        if (step.earliestRetry() >= 0) {
            next = Math.min(next, step.earliestRetry() - clock.offset());
        }
        return next; // Long.MAX_VALUE: idle, until an announcement or the idle check (OrderlyIdleCheck) finds work
    }
}
