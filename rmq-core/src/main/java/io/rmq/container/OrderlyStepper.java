package io.rmq.container;

import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.RmqConsumer.OrderedStep;
import io.rmq.consumer.RmqConsumer.Outcome;
import io.rmq.consumer.TopicRateLimiter;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link OrderlyListenerContainer}'s handler threads do: take a due slot ({@link OrderlySlots#takeReady}),
 * run a few steps on it, hand it back. Threads: no state of its own; each handler thread runs {@link #work()}, and
 * touches a slot's handled state only while it has the slot marked running.
 *
 * <h2>Invariants</h2>
 * <ol>
 * <li value="2">At most one thread runs a slot at a time (marked under the lock of {@link OrderlySlots}). It handles
 * the messages of a step in their order and stops at the first failure; the next step reports it, and Redis keeps the
 * failed message at the slot's head until its retry (the slot is suspended) or moves it to dead.</li>
 * <li value="4">A step whose outcome is unknown (its wait on Redis timed out or failed, {@link SlotStepSender}) is sent
 * again, with the same acks, after {@link #ERROR_PAUSE_MILLIS}.</li>
 * </ol>
 * Before every handler start the slot's guard is checked ({@link SlotOwnership#mayStart}, invariant 1), and a step
 * takes messages only when {@link OrderlySlots#beginTake()} allows it (not paused, invariant 5).
 * <p>
 * Nothing is stranded, whatever is thrown: a {@code Throwable} is caught at the thread's top and logged once with the
 * listener's id, and the thread goes on; a run always ends ({@link OrderlySlots#finishRun}), so its slot never stays
 * marked running; a delivery in hand when the instrumentation throws ends as a failure, retried in its place. Should
 * something still escape (the log itself failing), the slot's run has ended first, and {@link HandlerThreads} replaces
 * the thread.
 */
final class OrderlyStepper {

    /** Logs under the container's name: operators tune one logger per listener container, as before the split. */
    private static final Logger log = LoggerFactory.getLogger(OrderlyListenerContainer.class);

    private static final long ERROR_PAUSE_MILLIS = 1000;
    /** Steps one slot runs in a row before it lets a waiting slot have the thread. */
    private static final int STEPS_PER_TURN = 4;

    private final OrderlySlots slots;
    private final SlotOwnership ownership;
    private final SlotStepSender sender;
    private final RmqConsumer consumer;
    private final Type payloadType;
    private final MessageHandler<Object> handler;
    private final TopicRateLimiter limiter;
    private final String id;
    private final String topic;
    private final int batch;
    private final long commandTimeoutMillis;
    private final long maxIdleMillis;
    /** The consumer's instrumentation; {@code instrumented} false for NONE (no clock reads, no scopes). */
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;

    OrderlyStepper(OrderlySlots slots, SlotOwnership ownership, SlotStepSender sender, RmqConsumer consumer,
            Type payloadType, MessageHandler<Object> handler, ContainerOptions options, long commandTimeoutMillis) {
        this.slots = slots;
        this.ownership = ownership;
        this.sender = sender;
        this.consumer = consumer;
        this.payloadType = payloadType;
        this.handler = handler;
        this.limiter = options.rateLimit() == null ? null : consumer.rateLimiter(options.rateLimit());
        this.id = options.id();
        this.topic = consumer.topic().name();
        this.batch = consumer.settings().batchSize();
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.maxIdleMillis = options.maxIdle().toMillis();
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
    }

    /**
     * A handler thread: runs due slots while its run is current (it reads the generation as it begins: a thread that
     * outlived a stop ends rather than join the next run).
     */
    void work() {
        long generation = slots.generation();
        while (slots.isCurrent(generation)) {
            try {
                OrderlySlot s = slots.takeReady(generation);
                if (s == null) {
                    return;
                }
                turn(s, generation);
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

    /** One turn on a slot the thread has marked running; the run ends (and the slot is given up if due) whatever. */
    private void turn(OrderlySlot s, long generation) {
        long next = System.currentTimeMillis() + ERROR_PAUSE_MILLIS;
        try {
            next = run(s, generation);
        }
        catch (RuntimeException ex) {
            s.failedSteps++;
            if (s.failedSteps == 1 || s.failedSteps % 60 == 0) {
                log.warn("ORDERLY container '{}' failed a step on slot {} of topic '{}' ({} in a row); retrying in {}"
                        + " ms: {}", id, s.slot, topic, s.failedSteps, ERROR_PAUSE_MILLIS, String.valueOf(ex));
            }
        }
        catch (Throwable ex) {
            log.error("ORDERLY container '{}' (topic '{}'): unexpected error on handler thread {} running slot {};"
                    + " the slot is due again in {} ms", id, topic, Thread.currentThread().getName(), s.slot,
                    ERROR_PAUSE_MILLIS, ex);
        }
        finally {
            if (slots.finishRun(s, next)) {
                ownership.giveUp(s); // throws nothing: the slot leaves the owned ones whatever happens
            }
        }
    }

    /**
     * Runs a slot for a few steps: report what was handled and take the next messages, handle them in order.
     *
     * @return local ms when the slot is next due
     */
    private long run(OrderlySlot s, long generation) {
        for (int steps = 0; steps < STEPS_PER_TURN; steps++) {
            if (!slots.isCurrent(generation) || s.releasing) {
                return Long.MAX_VALUE; // stop() or the release reports what was handled
            }
            if (!ownership.mayStart(s)) {
                // another instance may own the slot by now: take nothing, report what was handled (Redis refuses it
                // if so), and wait for a renewal (the coordination pass makes the slot due again)
                s.guardLapsed = true;
                if (s.hasReport()) {
                    sender.send(s, 0);
                }
                return System.currentTimeMillis() + ownership.renewEveryMillis();
            }
            s.guardLapsed = false;
            if (!slots.beginTake()) {
                // paused: report what was handled (settled now, not at resume), take nothing; resume() makes it due
                if (s.hasReport()) {
                    sender.send(s, 0);
                }
                return System.currentTimeMillis();
            }
            long epoch = s.epoch;
            OrderedStep step;
            int wanted = batch;
            try {
                if (limiter != null) {
                    long[] permits = limiter.acquire(batch, commandTimeoutMillis);
                    wanted = (int) permits[0];
                    if (wanted == 0) {
                        if (instrumented) {
                            instrumentation.rateLimitWaited(id, topic, TimeUnit.MILLISECONDS.toNanos(permits[1]));
                        }
                        if (s.hasReport()) {
                            sender.send(s, 0);
                        }
                        return System.currentTimeMillis() + permits[1]; // throttled: no polling until a permit is free
                    }
                }
                step = sender.send(s, wanted);
            }
            finally {
                slots.endTake();
            }
            if (step == null) {
                return Long.MAX_VALUE; // fenced: the slot is gone
            }
            if (limiter != null) {
                limiter.giveBack(wanted - step.deliveries().size());
            }
            if (step.deliveries().isEmpty()) {
                return step.nextDue() < 0
                        ? System.currentTimeMillis() + maxIdleMillis
                        : step.nextDue() - sender.clockOffset();
            }
            List<Delivery> taken = step.deliveries();
            for (int i = 0; i < taken.size(); i++) {
                Delivery delivery = taken.get(i);
                if (s.epoch != epoch || !ownership.mayStart(s)) {
                    // not started: it stays in prepare, in order, for whoever runs the slot next
                    s.notStarted = taken.size() - i;
                    return System.currentTimeMillis();
                }
                HandleScope scope = HandleScope.NONE;
                Outcome outcome;
                try {
                    // right before the handler (conversion included), on its thread
                    if (instrumented) {
                        scope = instrumentation.handleStarted(id, delivery, consumer.latenessMillis(delivery));
                    }
                    outcome = consumer.invoke(delivery, payloadType, handler);
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
                    s.failed = delivery;
                    s.failure = outcome;
                    s.failedScope = scope;
                    s.notStarted = taken.size() - i - 1;
                    break; // the rest waits behind it (invariant 2)
                }
                s.acked.add(delivery);
                if (instrumented) {
                    s.ackedScopes.add(scope);
                }
            }
        }
        return System.currentTimeMillis(); // more may be due: back in line behind slots that waited
    }
}
