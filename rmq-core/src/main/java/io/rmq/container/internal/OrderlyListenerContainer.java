package io.rmq.container.internal;

import java.lang.reflect.Type;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.redis.internal.WakeUpSubscriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one ORDERLY listener: this instance owns some slots of the topic (which ones, the {@link SlotCoordinator}
 * decides; the ownership itself is claimed in Redis), and handles each owned slot's messages on one thread at a
 * time, one message after another, in the order Redis hands them over. {@code concurrency} threads handle up to that
 * many slots at once. Threads: this class is the lifecycle (start/stop, pause/resume), the wiring and the public
 * accessors; its own state (the running flag, the coordination thread, the counts at stop) is written by start() and
 * stop() under {@code lifecycle} and, for the coordination thread, by the watchdog on the shared timer. The rest
 * belongs to:
 * <ul>
 * <li>{@link SlotOwnership}, the coordination thread's job: membership, claiming, renewing, the guard, giving up,
 * epochs;</li>
 * <li>{@link OrderlyStepper}, what a handler thread does with one slot: steps, handling in order;</li>
 * <li>{@link SlotStepSender}, one step's round trip to Redis and the settlement of what it reports;</li>
 * <li>{@link OrderlySlots}, the owned slots and the one lock every scheduling decision is made under, with the jobs
 * that decide beside it, each on its own threads: {@link LaneScheduler} (handler threads: take work, finish a step or
 * a lane, wake-ups), {@link StepBook} (the stepping thread's report and take), {@link OwnershipChanges} (the
 * coordination thread: slots claimed, given up, lost) and {@link OrderlyPauseGate}; {@link OrderlySlot} is one owned
 * slot;</li>
 * <li>{@link RedisClock}, Redis's clock as the steps' replies bracket it (the same estimate as CONCURRENT's).</li>
 * <li>{@link ContainerWatchdog} (every second, on the shared timer thread) runs the {@link CoordinationCheck} (the
 * coordination thread alive and passing) and {@link HandlerThreads} (a dead handler thread is replaced); each repair
 * is an ERROR and counts in {@link #stallsRepaired()}.</li>
 * </ul>
 * A coordination thread renews this instance's membership and its slots' ownership every fifth of the guard time,
 * claims the slots the coordinator assigns to it (once their previous owner released them or its time ran out) and
 * gives up those it no longer should own (after the handler running on the slot has finished; the messages it had
 * taken but not started stay, in order, for the next owner).
 *
 * <h2>Invariants</h2>
 * Each is stated in full in the class that enforces it.
 * <ol>
 * <li>A slot's messages are taken and settled only under the epoch this instance holds for it, and no handler starts
 * once another instance may own the slot: {@link SlotOwnership}.</li>
 * <li>At most one thread runs a slot at a time; it handles a step's messages in order and stops at the first
 * failure: {@link LaneScheduler}, {@link OrderlyStepper}.</li>
 * <li>The scheduling state is guarded by one lock; waits on it are bounded: {@link OrderlySlots},
 * {@link LaneScheduler}.</li>
 * <li>Every wait on Redis has a deadline; a step whose outcome is unknown is sent again after a pause:
 * {@link SlotStepSender}, {@link OrderlyStepper}.</li>
 * <li>Nothing is taken once {@link #pause()} has returned; slots stay owned and settle what they have in hand:
 * {@link OrderlyPauseGate}.</li>
 * </ol>
 */
public final class OrderlyListenerContainer implements ListenerContainer {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.ORDERLY);

    private final SlotConsumer consumer;
    private final WakeUpSubscriber wakeUps;
    private final SlotCoordinator coordinator;
    private final Type payloadType;
    private final ContainerOptions options;
    private final long commandTimeoutMillis;

    private final OrderlySlots slots;
    private final OrderlyPauseGate gate;
    private final LaneScheduler scheduler;
    private final OwnershipChanges changes;
    /** Redis's clock as the steps' replies bracket it: wake-ups come in Redis time. */
    private final RedisClock clock = new RedisClock();
    /** This instance's own pause and the cluster-wide one; changed (and acted on) under its own lock. */
    private final PauseFlags pauses = new PauseFlags(this::pauseTaking, this::resumeTaking);
    private final SlotStepSender sender;
    private final SlotOwnership ownership;
    private final HandlerThreads handlers;
    private final ContainerWatchdog watchdog;

    private final Object lifecycle = new Object();
    private volatile boolean running;
    private volatile Thread coordination;
    private volatile int handedBackOnStop;
    private volatile int abandonedOnStop;

    /** Announcements come on the wake-up subscriber's thread, in Redis time. */
    private final WakeUpSubscriber.Listener wakeListener = new WakeUpSubscriber.Listener() {
        @Override
        public void wake(int slot, long due) {
            scheduler.wake(slot, due - clock.offset());
        }

        @Override
        public void resubscribed() {
            scheduler.wakeAll();
        }
    };

    /** Made by {@link ListenerContainers} for the {@link io.rmq.Rmq} facade; use {@link io.rmq.Rmq#container}. */
    @SuppressWarnings("unchecked")
    <T> OrderlyListenerContainer(SlotConsumer consumer, WakeUpSubscriber wakeUps, SlotCoordinator coordinator,
            Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        if (coordinator == null) {
            throw new IllegalArgumentException("An ORDERLY container needs a SlotCoordinator (listener '"
                    + options.id() + "')");
        }
        this.consumer = consumer;
        this.wakeUps = wakeUps;
        this.coordinator = coordinator;
        this.payloadType = payloadType;
        this.options = options;
        this.commandTimeoutMillis = Math.min(options.commandTimeout().toMillis(),
                options.ownershipTimeout().toMillis());
        this.slots = new OrderlySlots(options.id(), consumer.topic().name());
        this.gate = new OrderlyPauseGate(slots);
        this.scheduler = new LaneScheduler(slots, gate);
        this.changes = new OwnershipChanges(slots);
        StepBook steps = new StepBook(slots, gate);
        this.sender = new SlotStepSender(consumer, steps, changes, clock, options.id(), commandTimeoutMillis);
        this.ownership = new SlotOwnership(consumer, coordinator, slots, changes, steps, sender, options,
                commandTimeoutMillis);
        OrderlyStepper stepper = new OrderlyStepper(slots, scheduler, steps, gate, ownership, sender, clock,
                consumer, payloadType, (MessageHandler<Object>) handler, options, commandTimeoutMillis);
        this.watchdog = new ContainerWatchdog(options.id(), topic(), log, consumer.instrumentation());
        this.handlers = new HandlerThreads(options, "orderly", stepper::work, watchdog, topic(), log);
        watchdog.add(new CoordinationCheck());
        watchdog.add(new OrderlyIdleCheck(consumer, scheduler, options, commandTimeoutMillis));
        watchdog.add(handlers);
    }

    @Override
    public String id() {
        return options.id();
    }

    @Override
    public String topic() {
        return consumer.topic().name();
    }

    @Override
    public ConsumeMode mode() {
        return ConsumeMode.ORDERLY;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public long stallsRepaired() {
        return watchdog.repairs();
    }

    /** This instance's id among the topic's ordered consumers (fresh at every start). */
    public String instanceId() {
        return ownership.instanceId();
    }

    /** The slots this instance owns now. */
    @Override
    public Set<Integer> ownedSlots() {
        return slots.ownedSlots();
    }

    /** Owned slots where a group's failed head waits for its retry (as of each slot's last step). */
    @Override
    public Set<Integer> suspendedSlots() {
        return slots.suspendedSlots();
    }

    @Override
    public int concurrency() {
        return options.concurrency();
    }

    @Override
    public boolean isPaused() {
        return gate.isPaused();
    }

    @Override
    public int handedBackOnStop() {
        return handedBackOnStop;
    }

    @Override
    public int abandonedOnStop() {
        return abandonedOnStop;
    }

    /**
     * Stops taking messages; the owned slots stay owned and finish what they have in hand. Returns once no step that
     * takes messages is under way (at most about the command timeout later), so nothing is taken after it returns.
     */
    @Override
    public void pause() {
        pauses.pauseHere();
    }

    @Override
    public void resume() {
        pauses.resumeHere();
    }

    @Override
    public void setPausedCluster(boolean paused) {
        pauses.setCluster(paused);
    }

    @Override
    public boolean isPausedHere() {
        return pauses.here();
    }

    @Override
    public boolean isPausedCluster() {
        return pauses.cluster();
    }

    private void pauseTaking() {
        if (gate.pause()) {
            log.info("ORDERLY listener container '{}' (topic '{}') paused: it takes no new messages; it keeps its"
                    + " slots", id(), topic());
        }
        gate.awaitTakesUnderWay(System.currentTimeMillis() + commandTimeoutMillis + 1000);
    }

    /** Takes messages again at once: every owned slot that is not running is due now. */
    private void resumeTaking() {
        if (gate.resume()) {
            log.info("ORDERLY listener container '{}' (topic '{}') resumed", id(), topic());
        }
    }

    @Override
    public void start() {
        synchronized (lifecycle) {
            if (running) {
                return;
            }
            running = true;
            slots.starting();
            ownership.newInstanceId();
            consumer.preparePayloadType(payloadType);
            ownership.join();
            wakeUps.register(topic(), wakeListener);
            handlers.start();
            ownership.ticking();
            startCoordination();
            watchdog.start();
            log.debug("Started ORDERLY listener container '{}' on topic '{}' as {} ({} coordinator)", id(), topic(),
                    instanceId(), coordinator);
        }
    }

    @Override
    public void stop() {
        synchronized (lifecycle) {
            if (!running) {
                return;
            }
            slots.markStopping();
            watchdog.stop();
            wakeUps.unregister(topic(), wakeListener);
            slots.signalChange();
            // not interrupted: a pass under way finishes, so a slot whose claim Redis has already granted is known
            // here and given up below (interrupted mid-claim, it stayed owned until its ownership ran out). Its
            // waits on Redis are bounded: renewals and claims go out together, one bound each, plus slots being
            // given up on a rebalance. Interrupted only when Redis does not answer within that.
            Thread coordinationThread = coordination;
            ContainerThreads.joinUntil(coordinationThread,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4 * commandTimeoutMillis + 1000));
            if (coordinationThread.isAlive()) {
                coordinationThread.interrupt();
                ContainerThreads.joinUntil(coordinationThread,
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis));
            }
            // running handlers finish their message (no new one starts); their slots are then given up
            handlers.joinUntil(System.nanoTime() + options.shutdownTimeout().toNanos());
            changes.awaitStepsEnded(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis + 1000));
            List<OrderlySlot> left = changes.notRunning();
            left.forEach(ownership::giveUp);
            int abandoned = ownedSlots().size();
            handedBackOnStop = left.size();
            abandonedOnStop = abandoned;
            if (abandoned > 0) {
                log.warn("ORDERLY container '{}' stopped with handlers still running on {} slot(s) after {}; those"
                        + " slots are taken over when their ownership runs out", id(), abandoned,
                        options.shutdownTimeout());
            }
            ownership.leave(abandoned);
            handlers.interrupt();
            running = false;
            log.debug("Stopped ORDERLY listener container '{}'", id());
        }
    }

    private void startCoordination() {
        Thread thread = options.threadFactory().newThread(ownership::coordinate);
        thread.setName(options.id() + "-coordination");
        coordination = thread;
        thread.start();
    }

    /**
     * The watchdog's check of the coordination thread: alive, and it has begun a pass within a renewal period and its
     * bounded waits; else an ERROR, and a new thread (the old one, interrupted, ends at its next wait). A JVM pause
     * restarts the count, so that it is never taken for a stall. Timer thread.
     */
    private final class CoordinationCheck implements ContainerWatchdog.Check {

        @Override
        public void check(long now) {
            Thread thread = coordination;
            if (slots.isStopping() || !running || thread == null) {
                return;
            }
            long silent = now - ownership.lastTickMillis();
            if (!thread.isAlive() || silent > ownership.renewEveryMillis() + 3 * commandTimeoutMillis + 5000) {
                watchdog.repaired();
                log.error("ORDERLY container '{}' (topic '{}'): its coordination thread {}; starting a new one", id(),
                        topic(), thread.isAlive() ? "made no pass for " + silent + " ms" : "has died");
                thread.interrupt();
                ownership.ticking();
                startCoordination();
            }
        }

        @Override
        public void jvmPaused(long now) {
            ownership.ticking();
        }
    }
}
