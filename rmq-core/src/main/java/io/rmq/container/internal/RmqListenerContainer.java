package io.rmq.container.internal;

import java.lang.reflect.Type;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.PollerEvents.Resync;
import io.rmq.redis.internal.WakeUpSubscriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one listener (CONCURRENT): a poller thread leases due messages (one pop per slot, pipelined) into a small local
 * buffer, and {@code concurrency} handler threads convert, handle and settle them (ack / retry / dead). This class is
 * the wiring and the lifecycle; each part keeps the invariants it enforces:
 * <ul>
 * <li>{@link Poller}: the poller thread and the scheduling state only it touches ({@link SlotSchedule}, the pops under
 * way in {@link PopRounds}, the container's preferred share of the slots among the topic's consumers in
 * {@link SlotShares}); others tell it things through {@link PollerEvents}. A round's deliveries are handed over
 * once all its slots have answered or {@link Handoff#GRACE_MILLIS} after the first reply ({@link Handoff}), so a slot
 * whose node is dead or frozen holds back only itself.</li>
 * <li>{@link HandoffBuffer}: the buffer in the topic's taking order across slots, its room, and its give-back at
 * stop; {@link SingleBuffer} or, in batch mode, {@link BatchBuffer}.</li>
 * <li>{@link HandlerWorker}: what the handler threads run ({@link SingleWorker} or {@link BatchWorker}): take, hold a
 * look-ahead delivery until due, handle, settle; nothing they took is ever held for ever, whatever is thrown.</li>
 * <li>{@link LeaseKeeper}: a fetched delivery is outstanding from its hand-off until its settlement ends (or it is
 * given back at stop), and its lease is extended meanwhile, queued or running.</li>
 * <li>{@link ContainerWatchdog} (every second, on the shared timer thread) runs {@link PollerCheck} (the poller alive
 * and passing, every slot polled while there is room) and {@link HandlerThreads} (a dead handler thread is
 * replaced); each repair is an ERROR and counts in {@link #stallsRepaired()}.</li>
 * </ul>
 * No thread of the container waits on Redis without a deadline: pops and settles are bounded by {@code commandTimeout},
 * lease extensions are sent without waiting, acks go through per-slot batch lanes that are themselves bounded. What a
 * call that timed out had leased comes back through lease expiry.
 * <p>
 * {@link #stop()} is graceful: fetching stops, fetched-but-unstarted messages go back to the store at once (no
 * attempt counted), running handlers get up to {@code shutdownTimeout} to finish while their leases are kept alive.
 * {@link #pause()} only stops fetching: what was fetched (queued or running, and what a pop under way brings) is
 * handled and settled, leases keep being extended, and the poller keeps draining its events; {@link #resume()} has
 * it poll every slot at once.
 * <p>
 * <b>Batch mode</b> ({@link #RmqListenerContainer(SlotConsumer, WakeUpSubscriber, Type, BatchMessageHandler,
 * ContainerOptions)}): what one pop of one slot brought is queued as one batch and handed whole to the
 * {@link BatchMessageHandler} ({@link BatchBuffer}, {@link BatchWorker}). Everything else is the same. The buffer
 * holds {@code (concurrency + 8) * batchSize} deliveries, so that every handler thread can have a full batch.
 * <p>
 * Threads: the lifecycle ({@link #start()}, {@link #stop()}) runs under {@link #lifecycle}; {@link #pause()} and
 * {@link #resume()} on any thread write the {@link RunFlags} and post to the poller.
 */
public final class RmqListenerContainer implements ListenerContainer {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    private final SlotConsumer consumer;
    private final WakeUpSubscriber wakeUps;
    private final Type payloadType;
    private final ContainerOptions options;
    private final long commandTimeoutMillis;

    private final RunFlags flags = new RunFlags();
    /** This instance's own pause and the cluster-wide one; changed (and acted on) under its own lock. */
    private final PauseFlags pauses = new PauseFlags(this::pauseTaking, this::resumeTaking);
    /** What was fetched and not yet settled, and its leases' extension. */
    private final LeaseKeeper leases;
    private final HandoffBuffer buffer;
    /** The handler threads' loop when one message is handled at a time (what they took shows in the report). */
    private final @org.jspecify.annotations.Nullable SingleWorker singleWork;
    private final Poller poller;
    private final PollerCheck pollerCheck;
    private final HandlerThreads handlers;
    private final ContainerWatchdog watchdog;
    private final Object lifecycle = new Object();

    /** Made by {@link ListenerContainers} for the {@link io.rmq.Rmq} facade; use {@link io.rmq.Rmq#container}. */
    @SuppressWarnings("unchecked")
    <T> RmqListenerContainer(SlotConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            MessageHandler<T> handler, ContainerOptions options) {
        this(consumer, wakeUps, payloadType, (MessageHandler<Object>) handler, null, options);
    }

    /**
     * A container in batch mode: {@code batchHandler} gets the deliveries of one pop of one slot at a time (at most
     * {@code batchSize}), converted to {@code payloadType} each. CONCURRENT only: ORDERLY options are refused. Made
     * by {@link ListenerContainers}: use {@link io.rmq.Rmq#batchContainer}.
     */
    @SuppressWarnings("unchecked")
    <T> RmqListenerContainer(SlotConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            BatchMessageHandler<T> batchHandler, ContainerOptions options) {
        this(consumer, wakeUps, payloadType, null, (BatchMessageHandler<Object>) requireBatchable(batchHandler,
                options), options);
    }

    private RmqListenerContainer(SlotConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            MessageHandler<Object> handler, BatchMessageHandler<Object> batchHandler, ContainerOptions options) {
        this.consumer = consumer;
        this.wakeUps = wakeUps;
        this.payloadType = payloadType;
        this.options = options;
        this.commandTimeoutMillis = options.commandTimeout().toMillis();
        int batchSize = consumer.settings().batchSize();
        // room for several pops' worth: a pop call has a fixed cost, so fetch in batches of about batchSize per slot,
        // and keep enough in hand that handlers never wait for the next pop (batch mode: a full batch per handler)
        int capacity = batchHandler == null ? options.concurrency() + 8 * batchSize
                : (options.concurrency() + 8) * batchSize;
        long extendEveryMillis = Math.max(50, consumer.settings().lease().toMillis() / 3);
        this.leases = new LeaseKeeper(consumer, options.id(), capacity, extendEveryMillis, this::wakePollerIfRoom);
        RedisClock clock = new RedisClock();
        Runnable wakePoller = this::wakePollerIfRoom;
        HandlerWorker work;
        if (batchHandler == null) {
            SingleBuffer single = new SingleBuffer(consumer, leases, options.id());
            SingleWorker singleWork = new SingleWorker(single, handler, options.concurrency(), consumer, payloadType,
                    flags, clock, leases, wakePoller, options.id());
            work = singleWork;
            this.singleWork = singleWork;
            this.buffer = single;
        }
        else {
            BatchBuffer batches = new BatchBuffer(consumer, leases, options.id());
            work = new BatchWorker(batches, batchHandler, consumer, payloadType, flags, clock, leases, wakePoller,
                    options.id());
            this.buffer = batches;
            this.singleWork = null;
        }
        this.poller = new Poller(consumer, options, flags, buffer, leases, clock, capacity, extendEveryMillis);
        this.watchdog = new ContainerWatchdog(options.id(), topic(), log, consumer.instrumentation());
        this.pollerCheck = new PollerCheck(poller, flags, watchdog, options, topic());
        this.handlers = new HandlerThreads(options, "handler", work, watchdog, topic(), log);
        watchdog.add(pollerCheck);
        watchdog.add(handlers);
    }

    private void wakePollerIfRoom() {
        poller.wakeIfRoom();
    }

    @Override
    public String id() {
        return options.id();
    }

    @Override
    public io.rmq.core.ConsumeMode mode() {
        return io.rmq.core.ConsumeMode.CONCURRENT;
    }

    public String topic() {
        return consumer.topic().name();
    }

    public boolean isRunning() {
        return flags.running;
    }

    /**
     * How many times the watchdog found this container stalled (a dead poller or handler thread, a poller that made
     * no pass, or slots not polled although there was room) and repaired it. Zero in a healthy container: each is a
     * bug, logged as an ERROR.
     */
    public long stallsRepaired() {
        return watchdog.repairs();
    }

    /**
     * Stops taking messages. Returns once the poller has seen the pause and no pop is under way (at most about the
     * command timeout later), so that nothing is taken after it returns; what was taken is still handled and settled.
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
        if (!flags.paused) {
            flags.paused = true;
            log.info("RMQ listener container '{}' (topic '{}') paused: it takes no new messages", id(), topic());
        }
        Thread pollerThread = poller.events.poller();
        if (!flags.running || pollerThread == null || Thread.currentThread() == pollerThread) {
            return;
        }
        // a pass that began before the flag was set may still send a round: wait for the next pass to begin and for
        // every pop under way to answer (or time out); bounded, as every wait of the container
        long seen = poller.passes;
        long deadline = System.currentTimeMillis() + commandTimeoutMillis + 1000;
        while (flags.running && flags.paused && (poller.passes <= seen || poller.pops.underWay() > 0)
                && System.currentTimeMillis() < deadline) {
            LockSupport.unpark(pollerThread);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    private void resumeTaking() {
        if (flags.paused) {
            flags.paused = false;
            log.info("RMQ listener container '{}' (topic '{}') resumed", id(), topic());
            poller.events.post(new Resync(false)); // take at once: poll every slot, not only those known to be due
        }
    }

    @Override
    public boolean isPaused() {
        return flags.paused;
    }

    @Override
    public java.util.List<io.rmq.consumer.Delivery> prefetched(int max) {
        java.util.List<io.rmq.consumer.Delivery> out = new java.util.ArrayList<>();
        if (singleWork != null) {
            singleWork.takenNow(out, max); // taken by a handler thread for its next calls, not started yet
        }
        buffer.queuedNow(out, max);
        return out;
    }

    @Override
    public int concurrency() {
        return options.concurrency();
    }

    @Override
    public int handedBackOnStop() {
        return poller.handedBackOnStop;
    }

    @Override
    public int abandonedOnStop() {
        return poller.abandonedOnStop;
    }

    /**
     * The slots this container prefers among the topic's CONCURRENT consumers (every slot when it is alone or has no
     * membership); it takes from the others only when its own have nothing due.
     */
    int[] preferredSlots() {
        return poller.shares.preferred();
    }

    /** How many consumers of the topic its preferred slots were computed from (0: no membership yet). */
    int liveMembers() {
        return poller.shares.liveMembers();
    }

    /** The poller, for tests in this package (its pass counter, its slots' last polls, its wake-up listener). */
    Poller poller() {
        return poller;
    }

    /** Messages fetched and not yet settled (queued or being handled). */
    public int outstanding() {
        return leases.outstanding();
    }

    public void start() {
        synchronized (lifecycle) {
            if (flags.running) {
                return;
            }
            flags.running = true;
            flags.stopping = false;
            int slots = consumer.topic().slotAmount();
            long now = System.currentTimeMillis();
            leases.start(slots);
            poller.reset(slots, now); // nothing runs yet that could have posted anything for this run
            pollerCheck.reset();
            buffer.start();
            consumer.preparePayloadType(payloadType);
            wakeUps.register(topic(), poller.wakeListener);
            handlers.start();
            poller.startThread();
            watchdog.start();
            log.debug("Started RMQ listener container '{}' on topic '{}' with {} handler threads", id(), topic(),
                    options.concurrency());
        }
    }

    /** Graceful stop; returns when the container has stopped (or the shutdown timeout has passed). */
    public void stop() {
        synchronized (lifecycle) {
            if (!flags.running) {
                return;
            }
            flags.stopping = true;
            watchdog.stop();
            wakeUps.unregister(topic(), poller.wakeListener);
            Thread pollerThread = poller.events.poller();
            LockSupport.unpark(pollerThread);
            long deadline = System.nanoTime() + options.shutdownTimeout().toNanos() + TimeUnit.SECONDS.toNanos(5);
            ContainerThreads.joinUntil(pollerThread, deadline);
            handlers.interruptAndJoin(1000);
            flags.running = false;
            log.debug("Stopped RMQ listener container '{}'", id());
        }
    }

    /**
     * Fails with {@link io.rmq.core.RmqInvalidArgumentException} naming the listener, the mode and the rule when
     * {@code options} are ORDERLY: an ordered slot is handled one message after another, each settled before the
     * next, which a batch would break.
     */
    public static void checkBatchable(ContainerOptions options) {
        if (options.mode() == io.rmq.core.ConsumeMode.ORDERLY) {
            throw new io.rmq.core.RmqInvalidArgumentException("mode", options.mode(), "batch listener '"
                    + options.id() + "' cannot be ORDERLY: an ORDERLY slot is handled one message after another, each"
                    + " settled before the next, which a batch (handled and settled together) would break; use"
                    + " CONCURRENT, or a listener that takes one message");
        }
    }

    private static <T> BatchMessageHandler<T> requireBatchable(BatchMessageHandler<T> batchHandler,
            ContainerOptions options) {
        checkBatchable(options);
        if (batchHandler == null) {
            throw new IllegalArgumentException("batchHandler must not be null (listener '" + options.id() + "')");
        }
        return batchHandler;
    }
}
