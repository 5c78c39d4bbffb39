package io.rmq.container;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqConsumer;
import io.rmq.container.LeaseKeeper.Leased;
import io.rmq.core.RmqTimeoutException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.Timeouts;
import io.netty.util.Timeout;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.WakeUpSubscriber;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one listener: a poller thread leases due messages (one pop per slot, pipelined) into a small local queue, and
 * {@code concurrency} handler threads convert, handle and settle them (ack / retry / dead). A round's deliveries are
 * queued once all its slots have answered or {@link #HANDOFF_GRACE_MILLIS} after the first reply, so a slot whose node
 * is dead or frozen holds back only itself; the queue hands them out in the topic's taking order across slots.
 * The poller also extends the leases of everything fetched (queued ones too, per slot), and sleeps when idle: until
 * the earliest due time it knows of, until a wake-up announcement names a sooner one, or at most {@code maxIdle}
 * (then it checks which slots hold anything and pops those).
 * <p>
 * {@link #stop()} is graceful: fetching stops, fetched-but-unstarted messages go back to the store at once (no
 * attempt counted), running handlers get up to {@code shutdownTimeout} to finish while their leases are kept alive.
 * {@link #pause()} only stops fetching: what was fetched (queued or running, and what a pop under way brings) is
 * handled and settled, leases keep being extended, and the poller keeps draining its events; {@link #resume()} has
 * it poll every slot at once.
 * <p>
 * <b>Batch mode</b> ({@link #RmqListenerContainer(RmqConsumer, WakeUpSubscriber, Type, BatchMessageHandler,
 * ContainerOptions)}): what one pop of one slot brought is queued as one batch (at most {@code batchSize}, in taking
 * order; batches are ordered by their first delivery), and a handler thread hands a whole batch to the
 * {@link BatchMessageHandler} and settles it ({@link RmqConsumer#handleBatchAsync}). Everything else is the same:
 * each delivery of a batch is outstanding ({@link LeaseKeeper}) until its settlement ends and counts in
 * {@code unhandled} until its handler call returned, its lease is extended while it is queued or running, a stop gives
 * queued batches back and waits for running ones. The buffer holds {@code (concurrency + 8) * batchSize} deliveries, so
 * that every handler thread can have a full batch. Instrumentation is per delivery: {@code handleStarted} for each
 * delivery of the batch (in order, right before the call; nested observation scopes, the handler runs in the last
 * one's), then its {@code handlerReturned} and {@code settled}, so metrics count messages.
 *
 * <h2>Invariants (what keeps a listener consuming)</h2>
 * <ol>
 * <li>The scheduling state ({@code slotNextDue}, {@code slotPop}, {@code deferredWakes}, per-slot failures and
 * extensions (the latter in {@link LeaseKeeper}), the clock offset, the next full poll) has one owner, the poller
 * thread. Other threads never touch it: they {@linkplain #events enqueue an event} (a pop finished, a wake-up, a
 * resync, a topology check ended) and unpark the poller. The poller drains the event queue completely at the top of
 * every pass; an event is never cleared or dropped unseen.</li>
 * <li>A slot is busy iff its pop is in {@code slotPop}. Every pop produces exactly one {@link PopFinished} event, on
 * whichever comes first of its reply, its error, {@code commandTimeout} without a reply, or its abandonment (its slot
 * moved to another cluster node, or the watchdog gave it up); {@link Pop#finish} decides once. Draining that event
 * is the only place a pop leaves {@code slotPop}. A reply that comes after that still hands its deliveries to the
 * handlers. A failed pop pauses only its own slot, and a pop without a reply for 200 ms stops taking room in the
 * buffer: pops stuck on one node never keep the other slots from being polled.</li>
 * <li>No thread of the container waits on Redis without a deadline: pops and settles are bounded by
 * {@code commandTimeout}, lease extensions are sent without waiting (one at a time per slot, {@link LeaseKeeper}), acks
 * go through per-slot batch lanes that are themselves bounded. What a call that timed out had leased comes back through
 * lease expiry. On a cluster, a pop without a reply for a second makes the poller refresh the topology (about once a
 * second) and send again, to the new node, every pop whose slot has moved: a failover costs the dead master's slots
 * about the time until the replica is promoted, not the command timeout.</li>
 * <li>A queued delivery's lease is extended like a running one's, so waiting in the local queue never lets a lease
 * expire while its node answers ({@link LeaseKeeper}, which the poller has extend every third of the lease).</li>
 * <li>The poller's sleep is bounded by {@code maxIdle}, so no lost unpark can stop it for longer than that. Every
 * {@code maxIdle} it checks which slots hold anything at all (plain {@code EXISTS}, no script) and pops those at once:
 * what no announcement told it about (a lost one, another consumer's expired lease) is found within {@code maxIdle};
 * an empty slot has nothing that could fall due.</li>
 * <li>A watchdog (every second, on the shared timer thread) checks what the invariants promise: the poller thread
 * is alive and has made a pass within {@code maxIdle + commandTimeout} (+ grace), and, while the buffer had room,
 * every slot has finished a pop within that time. It logs an ERROR naming the container and the slots and
 * repairs: it restarts a dead poller, and enqueues a {@link Resync} that makes the poller poll every slot at once
 * (and give up on any pop older than twice the command timeout). While paused on purpose the container takes
 * nothing, so the watchdog checks its poller only, not its slots.</li>
 * <li>A fetched delivery is outstanding from its hand-off to the handlers until its settlement ends, or until it is
 * given back at stop, and its lease is extended meanwhile: {@link LeaseKeeper} keeps this (its invariants). The
 * container hands each hand-off's entries to it in {@link #deliver} before the handlers can see them, the poller
 * takes them in on every pass and extends, and whichever thread ends a settlement tells it, once per delivery.</li>
 * </ol>
 */
public final class RmqListenerContainer implements ListenerContainer {

    private static final Logger log = LoggerFactory.getLogger(RmqListenerContainer.class);

    private static final long ERROR_PAUSE_MILLIS = 1000;
    /** Pause of a slot after its first failed pop; it doubles with each further failure up to ERROR_PAUSE_MILLIS. */
    private static final long FIRST_RETRY_MILLIS = 100;
    /** Slack on top of maxIdle + commandTimeout before the watchdog calls a slot or the poller stalled (GC, load). */
    private static final long WATCHDOG_GRACE_MILLIS = 5000;
    private static final long WATCHDOG_EVERY_MILLIS = 1000;

    private final RmqConsumer consumer;
    private final WakeUpSubscriber wakeUps;
    private final Type payloadType;
    private final MessageHandler<Object> handler;
    /** Batch mode: the batch handler ({@link #handler} is then null); null otherwise. */
    private final BatchMessageHandler<Object> batchHandler;
    /** Batch mode: fetched, not yet started batches (one slot's each), best first; null otherwise. */
    private final PriorityBlockingQueue<List<Leased>> batches;
    private final ContainerOptions options;
    private final int capacity;
    /**
     * The most one pop round asks for, and the room the poller waits for before sending one (half the buffer: a
     * round can be under way while the handlers work through the other half; each fetch is a decent batch).
     */
    private final int roundSize;
    private final long extendEveryMillis;
    private final long commandTimeoutMillis;
    /**
     * {@link io.rmq.consumer.ConsumerSettings#lookAhead()} in ms on a time-ordered topic, else 0: pops take messages due that much
     * ahead, and a handler thread holds each until its due time ({@link #holdUntilDue}).
     */
    private final long lookAheadMillis;
    /** The topic's cluster-wide rate limit, or null. */
    private final io.rmq.consumer.TopicRateLimiter limiter;
    /** The consumer's instrumentation; {@code instrumented} false for NONE (no clock reads, no scopes). */
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;

    /**
     * Fetched, not yet started, in the topic's taking order (highest priority first; earliest due first): slots
     * answer one by one, so the order across slots is kept here, not by the arrival of their replies.
     */
    private final PriorityBlockingQueue<Leased> queue;
    /** The most messages a handler thread takes from the queue at once (a fair share of what is queued). */
    private static final int HANDLER_TAKE = 16;
    /** What was fetched and not yet settled, and its leases' extension (invariant 7). */
    private final LeaseKeeper leases;
    /**
     * Fetched and not yet handled (queued or in a handler). The poller fetches for these, not for all outstanding
     * messages: counting handled messages whose ack is still on its way would make the poller wait for acks while
     * the handlers ran dry.
     */
    private final AtomicInteger unhandled = new AtomicInteger();

    /** Messages asked for by pops not yet finished: they take room in the buffer before they arrive. */
    private final AtomicInteger requested = new AtomicInteger();
    /** Pops whose reply has not come yet (a timed-out pop still counts until its late reply or error). */
    private final AtomicInteger popsUnderWay = new AtomicInteger();
    /**
     * A pop without a reply for this long (a healthy one takes milliseconds) stops taking room in the buffer (see
     * {@link Pop#discount()}).
     */
    private static final long SLOW_POP_MILLIS = 200;
    /**
     * A cluster pop without a reply for this long may be waiting on a master that died: the poller then has the
     * client refresh its topology (at most every {@link #TOPOLOGY_CHECK_MILLIS}) and sends such pops again where
     * their slot has moved, instead of waiting for their timeout.
     */
    private static final long STUCK_POP_MILLIS = 1000;
    private static final long TOPOLOGY_CHECK_MILLIS = 1000;

    /** Everything other threads tell the poller; drained completely by the poller on every pass. */
    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();

    private sealed interface Event permits PopFinished, Wake, Resync, TopologyChecked, SlotsChecked {
    }

    /** The idle check ended: per slot whether it holds anything ({@code occupied}), or its error. */
    private record SlotsChecked(long[] occupied, Throwable error) implements Event {
    }

    /** A slot's pop ended: its result, or its error (a timeout, or its abandonment, included). */
    private record PopFinished(Pop pop, PollResult result, Throwable error) implements Event {
    }

    /** A topology refresh the poller asked for has ended: pops sent to a node that lost their slot go again. */
    private record TopologyChecked() implements Event {
    }

    /** A wake-up announcement: a slot got a new first message due at {@code due} (Redis clock). */
    private record Wake(int slot, long due) implements Event {
    }

    /** Poll every slot now (after a resubscription that may have missed announcements, or a watchdog repair). */
    private record Resync(boolean abandonOldPops) implements Event {
    }

    /**
     * The pop of one slot: how many it asked for, when it was sent (local ms), the cluster node it went to (null
     * standalone), and whether it has finished. What it asked for takes room in the buffer ({@link #requested})
     * until it finishes or, if it is slow, until the poller {@linkplain #discount() stops counting it}.
     */
    private final class Pop {

        private static final int COUNTED = 0;
        private static final int DISCOUNTED = 1;
        private static final int FINISHED = 2;

        final int slot;
        final int asked;
        final long sentMillis;
        final String node;
        private final AtomicInteger state = new AtomicInteger(COUNTED);
        volatile Timeout deadline;

        Pop(int slot, int asked, long sentMillis, String node) {
            this.slot = slot;
            this.asked = asked;
            this.sentMillis = sentMillis;
            this.node = node;
        }

        boolean finished() {
            return state.get() == FINISHED;
        }

        /**
         * A pop without a reply for {@link #SLOW_POP_MILLIS} (its node may be dead or frozen) stops taking room in
         * the buffer, so that pops stuck on one node cannot keep the other slots from being polled (a dead master's
         * pops asked for more than half the buffer and held the healthy slots back until they were discounted). If
         * slow pops answer after all, the buffer holds at most a batch per slot more than its capacity for a while.
         */
        void discount() {
            if (state.compareAndSet(COUNTED, DISCOUNTED)) {
                requested.addAndGet(-asked);
            }
        }

        /** Ends the pop once, whatever ends it first; the poller hears of it through one event. */
        void finish(PollResult result, Throwable error) {
            int was = state.getAndSet(FINISHED);
            if (was == FINISHED) {
                return;
            }
            Timeout timer = deadline;
            if (timer != null) {
                timer.cancel();
            }
            if (was == COUNTED) {
                requested.addAndGet(-asked);
            }
            events.add(new PopFinished(this, result, error));
            LockSupport.unpark(poller);
        }
    }

    /** Ends a pop whose slot moved to another node (a failover): it is sent again at once, to the new node. */
    private static final class SlotMoved extends RuntimeException {

        SlotMoved(int slot, String from, String to) {
            super("slot " + slot + " moved from cluster node " + from + " to " + to, null, false, false);
        }
    }

    // ---------------------------------------------------------------- poller-owned state (see invariant 1)

    /** Per slot: Redis ms when it next needs a pop; -1 when empty; 0 at start (unknown: poll). */
    private long[] slotNextDue;
    /** Per slot, its pop under way, or null; a slot is busy (not polled again) while it has one. */
    private Pop[] slotPop;
    /** Wake-up announcements for busy slots, applied after their pop's (older) hints. */
    private final List<Wake> deferredWakes = new ArrayList<>();
    /** Rotates which due slots a partial poll starts with, so no slot waits behind the others. */
    private int slotCursor;
    /** Local ms of the next pop of every slot: 0 at start and after a {@link Resync}, else never. */
    private long nextFullPoll;
    /** Local ms of the next idle check ({@link #checkSlots}): every {@code maxIdle}. */
    private long nextIdleCheck;
    /** Whether an idle check is under way (its {@link SlotsChecked} event not drained yet). */
    private boolean idleCheckUnderWay;
    /** Pauses every slot (the topic's rate limit could not be read); a failed pop pauses only its slot. */
    private long errorPauseUntil;
    /** Rate-limited: local ms when the shared bucket has a permit again. */
    private volatile long throttledUntil;
    /** Per slot, its failed pops in a row; and how many slots are failing (logged when that starts and ends). */
    private int[] slotFailures;
    private int failingSlots;
    /** Local ms before which the poller asks for no topology refresh (cluster only). */
    private long nextTopologyCheck;
    /**
     * Estimated Redis clock minus local clock. Each pop brackets it: Redis read its clock after the request left and
     * before the reply arrived, so the offset lies in [redisNow - received, redisNow - sent]. The estimate keeps the
     * tightest of these lower bounds, clamped into the latest interval (so a clock step is followed at once).
     */
    private volatile long clockOffset;
    private boolean clockOffsetKnown;

    // ---------------------------------------------------------------- shared with the watchdog and other threads

    /**
     * When the poller's sleep ends (local ms), 0 while it is awake: others unpark it only while it sleeps. A thread
     * that unparks it for room may clear it first (the poller is then as good as awake: the unpark's permit ends or
     * prevents its sleep).
     */
    private final AtomicLong plannedWake = new AtomicLong();
    /** Local ms of the poller's last pass. */
    private volatile long lastPassMillis;
    /** Passes the poller began (only the poller writes it; {@link #pause()} waits for it to move). */
    private volatile long passes;
    /** Per slot, local ms when a pop round covering it last finished (with a result or an error). */
    private volatile AtomicLongArray lastPolled;
    /** Local ms since which the watchdog has seen room in the buffer without a break (0: no room last time). */
    private long roomSinceMillis;
    /** Local ms of the watchdog's last check: a longer gap means the whole JVM was paused (GC, SIGSTOP). */
    private long lastWatchdogMillis;
    private ScheduledFuture<?> watchdog;
    /** Stalls the watchdog found and repaired (each one is a broken invariant, logged as an ERROR). */
    private final AtomicLong stallsRepaired = new AtomicLong();

    private final WakeUpSubscriber.Listener wakeListener = new WakeUpSubscriber.Listener() {
        @Override
        public void wake(int slot, long due) {
            // with a look-ahead the slot needs its pop that much before the announced message is due
            due -= lookAheadMillis;
            events.add(new Wake(slot, due));
            long planned = plannedWake.get();
            if (planned != 0 && due - clockOffset < planned) {
                LockSupport.unpark(poller);
            }
        }

        @Override
        public void resubscribed() {
            // announcements sent while the subscription was down are lost: look at every slot
            events.add(new Resync(false));
            LockSupport.unpark(poller);
        }
    };
    private final Object lifecycle = new Object();
    /** Guards handing deliveries to the queue against the final drain at stop. */
    private final Object handoff = new Object();
    private boolean drained;

    private volatile boolean running;
    private volatile boolean stopping;
    /**
     * Set by {@link #pause()}, cleared by {@link #resume()} (any thread); the poller reads it on every pass and takes
     * nothing while it is set. Not scheduling state: a flag the owner obeys, like {@link #stopping}.
     */
    private volatile boolean paused;
    private volatile Thread poller;
    private volatile int handedBackOnStop;
    private volatile int abandonedOnStop;
    private final List<Thread> workers = new ArrayList<>();

    /** Not API (it takes engine internals): the {@link io.rmq.Rmq} facade wires it; use {@link io.rmq.Rmq#container}. */
    @SuppressWarnings("unchecked")
    public <T> RmqListenerContainer(RmqConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            MessageHandler<T> handler, ContainerOptions options) {
        this(consumer, wakeUps, payloadType, (MessageHandler<Object>) handler, null, options);
    }

    /**
     * A container in batch mode: {@code batchHandler} gets the deliveries of one pop of one slot at a time (at most
     * {@code batchSize}), converted to {@code payloadType} each. CONCURRENT only: ORDERLY options are refused. Not API
     * (it takes engine internals): use {@link io.rmq.Rmq#batchContainer}.
     */
    @SuppressWarnings("unchecked")
    public <T> RmqListenerContainer(RmqConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            BatchMessageHandler<T> batchHandler, ContainerOptions options) {
        this(consumer, wakeUps, payloadType, null, (BatchMessageHandler<Object>) requireBatchable(batchHandler,
                options), options);
    }

    private RmqListenerContainer(RmqConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            MessageHandler<Object> handler, BatchMessageHandler<Object> batchHandler, ContainerOptions options) {
        this.consumer = consumer;
        Comparator<Delivery> order = takingOrder(consumer.topic().type());
        this.queue = new PriorityBlockingQueue<>(64, Comparator.comparing((Leased l) -> l.delivery, order));
        this.batchHandler = batchHandler;
        this.batches = batchHandler == null ? null : new PriorityBlockingQueue<>(16,
                Comparator.comparing((List<Leased> batch) -> batch.get(0).delivery, order));
        this.wakeUps = wakeUps;
        this.payloadType = payloadType;
        this.handler = handler;
        this.options = options;
        // room for several pops' worth: a pop call has a fixed cost, so fetch in batches of about batchSize per slot,
        // and keep enough in hand that handlers never wait for the next pop (batch mode: a full batch per handler)
        this.capacity = batchHandler == null ? options.concurrency() + 8 * consumer.settings().batchSize()
                : (options.concurrency() + 8) * consumer.settings().batchSize();
        this.roundSize = capacity / 2;
        this.extendEveryMillis = Math.max(50, consumer.settings().lease().toMillis() / 3);
        this.leases = new LeaseKeeper(consumer, options.id(), capacity, extendEveryMillis, this::wakePollerIfRoom);
        this.commandTimeoutMillis = options.commandTimeout().toMillis();
        this.lookAheadMillis = consumer.topic().type().isTimeOrdered() ? consumer.settings().lookAhead().toMillis() : 0;
        this.limiter = options.rateLimit() == null ? null : consumer.rateLimiter(options.rateLimit());
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
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
        return running;
    }

    /**
     * How many times the watchdog found this container stalled (a dead poller, a poller that made no pass, or slots
     * not polled although there was room) and repaired it. Zero in a healthy container: each is a bug, logged as an
     * ERROR.
     */
    public long stallsRepaired() {
        return stallsRepaired.get();
    }

    /**
     * Stops taking messages. Returns once the poller has seen the pause and no pop is under way (at most about the
     * command timeout later), so that nothing is taken after it returns; what was taken is still handled and settled.
     */
    @Override
    public void pause() {
        if (!paused) {
            paused = true;
            log.info("RMQ listener container '{}' (topic '{}') paused: it takes no new messages", id(), topic());
        }
        Thread pollerThread = poller;
        if (!running || pollerThread == null || Thread.currentThread() == pollerThread) {
            return;
        }
        // a pass that began before the flag was set may still send a round: wait for the next pass to begin and for
        // every pop under way to answer (or time out); bounded, as every wait of the container
        long seen = passes;
        long deadline = System.currentTimeMillis() + commandTimeoutMillis + 1000;
        while (running && paused && (passes <= seen || popsUnderWay.get() > 0)
                && System.currentTimeMillis() < deadline) {
            LockSupport.unpark(pollerThread);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    @Override
    public void resume() {
        if (paused) {
            paused = false;
            log.info("RMQ listener container '{}' (topic '{}') resumed", id(), topic());
            events.add(new Resync(false)); // take at once: poll every slot, not only those known to be due
            Thread pollerThread = poller;
            if (pollerThread != null) {
                LockSupport.unpark(pollerThread);
            }
        }
    }

    @Override
    public boolean isPaused() {
        return paused;
    }

    @Override
    public int concurrency() {
        return options.concurrency();
    }

    @Override
    public int handedBackOnStop() {
        return handedBackOnStop;
    }

    @Override
    public int abandonedOnStop() {
        return abandonedOnStop;
    }

    /** Messages fetched and not yet settled (queued or being handled). */
    public int outstanding() {
        return leases.outstanding();
    }

    public void start() {
        synchronized (lifecycle) {
            if (running) {
                return;
            }
            running = true;
            stopping = false;
            int slots = consumer.topic().slotAmount();
            slotNextDue = new long[slots];
            slotPop = new Pop[slots];
            slotFailures = new int[slots];
            failingSlots = 0;
            leases.start(slots);
            nextTopologyCheck = 0;
            deferredWakes.clear();
            events.clear(); // nothing runs yet that could have queued anything for this run
            nextFullPoll = 0;
            errorPauseUntil = 0;
            throttledUntil = 0;
            long now = System.currentTimeMillis();
            nextIdleCheck = now + options.maxIdle().toMillis();
            idleCheckUnderWay = false;
            long[] initial = new long[slots];
            Arrays.fill(initial, now);
            lastPolled = new AtomicLongArray(initial);
            lastPassMillis = now;
            roomSinceMillis = 0;
            lastWatchdogMillis = now;
            synchronized (handoff) {
                drained = false;
            }
            consumer.preparePayloadType(payloadType);
            wakeUps.register(topic(), wakeListener);
            workers.clear();
            for (int i = 0; i < options.concurrency(); i++) {
                Thread worker = options.threadFactory().newThread(batchHandler == null ? this::work : this::workBatches);
                worker.setName(options.id() + "-handler-" + i);
                workers.add(worker);
                worker.start();
            }
            startPoller();
            watchdog = Timeouts.every(WATCHDOG_EVERY_MILLIS, this::watchdog);
            log.debug("Started RMQ listener container '{}' on topic '{}' with {} handler threads", id(), topic(),
                    options.concurrency());
        }
    }

    private void startPoller() {
        Thread pollerThread = options.threadFactory().newThread(this::pollLoop);
        pollerThread.setName(options.id() + "-poller");
        poller = pollerThread;
        pollerThread.start();
    }

    /** Graceful stop; returns when the container has stopped (or the shutdown timeout has passed). */
    public void stop() {
        synchronized (lifecycle) {
            if (!running) {
                return;
            }
            stopping = true;
            watchdog.cancel(false);
            wakeUps.unregister(topic(), wakeListener);
            Thread pollerThread = poller;
            LockSupport.unpark(pollerThread);
            long deadline = System.nanoTime() + options.shutdownTimeout().toNanos() + TimeUnit.SECONDS.toNanos(5);
            ContainerThreads.joinUntil(pollerThread, deadline);
            for (Thread worker : workers) {
                worker.interrupt();
            }
            for (Thread worker : workers) {
                ContainerThreads.joinUntil(worker, System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
            }
            running = false;
            log.debug("Stopped RMQ listener container '{}'", id());
        }
    }


    // ------------------------------------------------------------------ poller

    private void pollLoop() {
        long nextExtension = System.currentTimeMillis() + extendEveryMillis;
        while (!stopping) {
            try {
                long now = System.currentTimeMillis();
                lastPassMillis = now;
                passes++;
                drainEvents(now);
                leases.takeIn();
                if (now >= nextExtension) {
                    leases.extend();
                    nextExtension = now + extendEveryMillis;
                }
                long slowPopsCheck = checkSlowPops(now);
                int free = room();
                boolean paused = now < errorPauseUntil || now < throttledUntil;
                boolean pausedOnPurpose = this.paused;
                boolean fullPoll = now >= nextFullPoll;
                if (!fullPoll && now >= nextIdleCheck && !paused && !pausedOnPurpose && free >= roundSize) {
                    checkSlots(now);
                }
                int[] due = paused || pausedOnPurpose ? new int[0] : dueSlots(fullPoll);
                if (free >= roundSize && due.length > 0) {
                    if (fullPoll) {
                        nextFullPoll = Long.MAX_VALUE; // the idle check takes over (checkSlots)
                        nextIdleCheck = now + options.maxIdle().toMillis();
                    }
                    int[] slots = fullPoll ? due : pick(due, free);
                    if (limiter != null) {
                        long[] permits;
                        try {
                            permits = limiter.acquire(Math.min(free, roundSize), commandTimeoutMillis);
                        }
                        catch (RuntimeException ex) {
                            errorPauseUntil = now + ERROR_PAUSE_MILLIS;
                            log.warn("RMQ listener container '{}' could not take rate-limit permits of topic '{}';"
                                    + " retrying in {} ms: {}", id(), topic(), ERROR_PAUSE_MILLIS, String.valueOf(ex));
                            continue;
                        }
                        if (permits[0] == 0) {
                            throttledUntil = now + permits[1]; // no polling until a permit is free
                            if (instrumented) {
                                instrumentation.rateLimitWaited(id(), topic(), TimeUnit.MILLISECONDS.toNanos(permits[1]));
                            }
                            continue;
                        }
                        free = (int) permits[0];
                        slots = Arrays.copyOf(slots, Math.min(slots.length, free));
                    }
                    poll(slots, free);
                    continue;
                }
                long wakeAt = Math.min(leases.outstanding() == 0 ? Long.MAX_VALUE : nextExtension, slowPopsCheck);
                boolean full = free < roundSize;
                if (pausedOnPurpose) {
                    full = false; // nothing to wait for but resume() (an event), extensions and pops under way
                }
                else if (paused) {
                    wakeAt = Math.min(wakeAt, Math.max(errorPauseUntil, throttledUntil));
                }
                else if (!full) {
                    wakeAt = Math.min(wakeAt, Math.min(Math.min(nextFullPoll, nextIdleCheck), earliestDueLocal()));
                }
                // with the buffer full, a handler finishing or a round ending wakes the poller; the sleep is bounded
                // by maxIdle whatever happens (invariant 5)
                park(Math.min(wakeAt, now + options.maxIdle().toMillis()), full);
            }
            catch (Throwable ex) {
                if (stopping) {
                    break;
                }
                log.error("RMQ listener container '{}' hit an unexpected error in its poller (topic '{}'); going on"
                        + " in {} ms", id(), topic(), ERROR_PAUSE_MILLIS, ex);
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(ERROR_PAUSE_MILLIS));
            }
        }
        drainOnStop();
    }

    private int[] dueSlots(boolean all) {
        long[] next = slotNextDue;
        long redisNow = System.currentTimeMillis() + clockOffset;
        int count = 0;
        int[] due = new int[next.length];
        for (int i = 0; i < next.length; i++) {
            if (slotPop[i] == null && (all || next[i] >= 0 && next[i] <= redisNow)) {
                due[count++] = i;
            }
        }
        return Arrays.copyOf(due, count);
    }

    /**
     * The due slots to poll now: enough of them that each returns a reasonable batch (a pop call has a fixed cost),
     * starting at a rotating position.
     */
    private int[] pick(int[] due, int free) {
        int count = Math.max(1, Math.min(due.length, Math.min(free, roundSize) / consumer.settings().batchSize()));
        if (count == due.length) {
            return due;
        }
        int[] picked = new int[count];
        int start = Math.floorMod(slotCursor, due.length);
        for (int i = 0; i < count; i++) {
            picked[i] = due[(start + i) % due.length];
        }
        slotCursor = start + count;
        return picked;
    }

    /**
     * Sends a round: one pop per slot, pipelined. The round's deliveries go to the handlers together once every pop
     * has answered, or {@link #HANDOFF_GRACE_MILLIS} after the first reply; a later reply (even one after its timeout)
     * is handed over when it comes, so a slot whose node is dead or frozen holds back no other slot; each pop
     * ends once, on its reply, error or timeout (invariant 2).
     */
    private void poll(int[] slots, int free) {
        int perSlot = limiter != null
                // asks for no more than the permits it holds; what it does not use goes back to the bucket
                ? Math.max(1, Math.min(consumer.settings().batchSize(), free / slots.length))
                : Math.max(1, Math.min(consumer.settings().batchSize(), (free + slots.length - 1) / slots.length));
        if (limiter != null && free > perSlot * slots.length) {
            limiter.giveBack(free - perSlot * slots.length);
        }
        long sent = System.currentTimeMillis();
        long sentNanos = instrumented ? System.nanoTime() : 0;
        Handoff round = new Handoff(slots.length);
        for (int slot : slots) {
            Pop pop = new Pop(slot, perSlot, sent, consumer.nodeOf(slot));
            slotPop[slot] = pop;
            requested.addAndGet(perSlot);
            popsUnderWay.incrementAndGet();
            CompletableFuture<PollResult> reply;
            try {
                reply = consumer.pollSlotAsync(slot, perSlot);
            }
            catch (RuntimeException ex) {
                reply = CompletableFuture.failedFuture(ex);
            }
            if (!reply.isDone()) {
                pop.deadline = Timeouts.after(commandTimeoutMillis, () -> pop.finish(null, new RmqTimeoutException(
                        "polling slot " + slot + " of topic '" + topic() + "': no reply from Redis within "
                                + commandTimeoutMillis + " ms")));
            }
            reply.whenComplete((result, error) -> {
                if (instrumented) {
                    reportPop(slot, result, error, sentNanos);
                }
                try {
                    if (limiter != null) {
                        limiter.giveBack(perSlot - (result == null ? 0 : result.deliveries().size()));
                    }
                    round.arrived(result == null ? List.of() : result.deliveries(), pop.finished());
                }
                finally {
                    popsUnderWay.decrementAndGet();
                    pop.finish(result, error);
                }
            });
        }
    }

    /** One slot's pop answered (or failed): {@code popped} / {@code popFailed} and {@code operation("receive")}. */
    private void reportPop(int slot, PollResult result, Throwable error, long sentNanos) {
        long nanos = System.nanoTime() - sentNanos;
        Throwable failure = RedisGateway.unwrap(error);
        if (failure == null) {
            instrumentation.popped(id(), topic(), slot, result.deliveries().size(), nanos);
        }
        else {
            instrumentation.popFailed(id(), topic(), slot, failure);
        }
        instrumentation.operation("receive", topic(), nanos, failure);
    }

    /**
     * How long the first replies of a round wait for the others before they go to the handlers. Slots answer one by
     * one; handing each reply over on its own let a lower priority (or a later due time) from a quick slot start
     * before a higher one that came a moment later, so a backlog was no longer handled in taking order across slots.
     * The replies of one node's pipelined pops come within about a millisecond; a slot whose node is slow, frozen
     * or dead holds the others back by this much at most (the timer wheel ticks every 10 ms).
     */
    static final long HANDOFF_GRACE_MILLIS = 20;

    /**
     * Gathers the replies of one round and hands them to the handlers together, sorted by the queue, once every pop
     * has answered (reply or error) or {@link #HANDOFF_GRACE_MILLIS} after the first reply, whichever comes first;
     * what answers later is handed over as it comes. Nothing is held longer than the grace: a pop that never answers
     * costs the others at most that.
     */
    private final class Handoff {

        private int waitingFor;
        private List<Delivery> gathered = new ArrayList<>();
        private boolean timerSet;

        Handoff(int pops) {
            this.waitingFor = pops;
        }

        void arrived(List<Delivery> deliveries, boolean late) {
            List<Delivery> now;
            synchronized (this) {
                waitingFor--;
                if (gathered == null) {
                    now = deliveries; // the round was handed over already
                }
                else {
                    gathered.addAll(deliveries);
                    if (waitingFor > 0) {
                        if (!timerSet) {
                            timerSet = true;
                            Timeouts.after(HANDOFF_GRACE_MILLIS, this::handOver);
                        }
                        return;
                    }
                    now = gathered;
                    gathered = null;
                }
            }
            deliver(now, late);
        }

        void handOver() {
            List<Delivery> now;
            synchronized (this) {
                now = gathered;
                gathered = null;
            }
            if (now != null) {
                deliver(now, false);
            }
        }
    }

    /** The order in which the topic hands out messages: highest priority first, or earliest due time first. */
    private static Comparator<Delivery> takingOrder(TopicType type) {
        Comparator<Delivery> byScore = Comparator.comparingDouble(Delivery::score);
        return type == TopicType.PRIORITY ? byScore.reversed() : byScore;
    }

    /** Hands leased deliveries to the handlers, or back to the store when the container has already drained. */
    private void deliver(List<Delivery> deliveries, boolean late) {
        if (deliveries.isEmpty()) {
            return;
        }
        synchronized (handoff) {
            if (!drained) {
                unhandled.addAndGet(deliveries.size()); // first, as before the lease keeper: the room shrinks at once
                List<Leased> bestFirst = new ArrayList<>(deliveries.size());
                for (Delivery delivery : deliveries) {
                    bestFirst.add(new Leased(delivery));
                }
                if (bestFirst.size() > 1) {
                    // a handler waiting on the queue takes what is there when the first one lands
                    bestFirst.sort(queue.comparator());
                }
                leases.handedOff(bestFirst); // counted outstanding before any handler can settle one
                if (batchHandler == null) {
                    queue.addAll(bestFirst);
                }
                else {
                    queueBatches(bestFirst);
                }
                if (late) {
                    log.debug("Container '{}': a pop answered after its timeout; its {} deliveries are handled",
                            id(), deliveries.size());
                }
                return;
            }
        }
        if (instrumented) {
            instrumentation.handedBack(id(), topic(), deliveries.size());
        }
        consumer.releaseAsync(deliveries).whenComplete((released, ex) -> log.debug(
                "Container '{}' had stopped when {} deliveries arrived; released {}", id(), deliveries.size(),
                released, ex));
    }

    /** Takes in everything other threads reported (invariant 1): finished pops first, then announcements. */
    private void drainEvents(long now) {
        Event event;
        List<Wake> wakes = null;
        while ((event = events.poll()) != null) {
            if (event instanceof PopFinished finished) {
                popFinished(finished, now);
            }
            else if (event instanceof Wake wake) {
                if (wakes == null) {
                    wakes = new ArrayList<>();
                }
                wakes.add(wake);
            }
            else if (event instanceof Resync resync) {
                resync(resync.abandonOldPops(), now);
            }
            else if (event instanceof TopologyChecked) {
                resendMovedPops();
            }
            else if (event instanceof SlotsChecked checked) {
                slotsChecked(checked, now);
            }
        }
        // announcements deferred behind a pop that has now finished apply after its (older) hints
        if (!deferredWakes.isEmpty()) {
            List<Wake> ready = new ArrayList<>(deferredWakes);
            deferredWakes.clear();
            ready.forEach(this::applyWake);
        }
        if (wakes != null) {
            wakes.forEach(this::applyWake);
        }
    }

    private void popFinished(PopFinished finished, long now) {
        Pop pop = finished.pop();
        int slot = pop.slot;
        if (slotPop[slot] != pop) {
            return; // already abandoned by a resync
        }
        slotPop[slot] = null;
        lastPolled.set(slot, now);
        PollResult result = finished.result();
        if (result == null) {
            Throwable error = finished.error() instanceof CompletionException && finished.error().getCause() != null
                    ? finished.error().getCause() : finished.error();
            if (error instanceof SlotMoved) {
                slotNextDue[slot] = 0; // poll it again at once, on its new node
                return;
            }
            // only this slot waits before its next try, the others go on: a quick retry first, then backing off
            // to ERROR_PAUSE_MILLIS; but every FIRST_RETRY_MILLIS while the cluster refuses commands (it does so
            // from the moment a master is marked failed until its replica takes over, and the healthy slots
            // should go on as soon as it has)
            boolean firstOfAll = failingSlots == 0;
            if (slotFailures[slot]++ == 0) {
                failingSlots++;
            }
            boolean clusterDown = String.valueOf(error.getMessage()).contains("CLUSTERDOWN");
            long pause = clusterDown ? FIRST_RETRY_MILLIS
                    : Math.min(ERROR_PAUSE_MILLIS, FIRST_RETRY_MILLIS << Math.min(10, slotFailures[slot] - 1));
            slotNextDue[slot] = now + clockOffset + pause;
            // one line when polling starts to fail (not one per slot), then one a minute per slot still failing
            if (firstOfAll || slotFailures[slot] % 60 == 0) {
                log.warn("RMQ listener container '{}' failed to poll slot {} of topic '{}' ({} failed pop(s) in a row);"
                        + " retrying each failing slot, backing off to every {} ms; the other slots go on: {}", id(), slot,
                        topic(),
                        slotFailures[slot], ERROR_PAUSE_MILLIS, String.valueOf(error), log.isDebugEnabled() ? error : null);
            }
            return;
        }
        if (slotFailures[slot] > 0) {
            slotFailures[slot] = 0;
            if (--failingSlots == 0) {
                log.info("RMQ listener container '{}' polls every slot of topic '{}' again", id(), topic());
            }
        }
        if (result.redisNow() >= 0) {
            updateClockOffset(result.redisNow() - now, result.redisNow() - pop.sentMillis);
        }
        slotNextDue[slot] = result.slotNextDue()[0];
    }

    /**
     * The idle check, every {@code maxIdle}: the safety net for what no announcement told the poller (a lost one, a
     * writer that does not announce, another consumer's lease that expires because it died). Instead of a pop of
     * every slot it asks which slots hold anything at all ({@link RmqConsumer#occupiedSlotsAsync()}: one plain
     * {@code EXISTS} on a standalone server whose slots are all empty, one per slot on a cluster) and pops only
     * those, at once; an empty slot has nothing that could fall due. Its answer comes back as a
     * {@link SlotsChecked} event; one check at a time, bounded by the command timeout.
     */
    private void checkSlots(long now) {
        nextIdleCheck = now + options.maxIdle().toMillis();
        if (idleCheckUnderWay) {
            return;
        }
        idleCheckUnderWay = true;
        CompletableFuture<long[]> check;
        try {
            check = consumer.occupiedSlotsAsync();
        }
        catch (RuntimeException ex) {
            check = CompletableFuture.failedFuture(ex);
        }
        check.orTimeout(commandTimeoutMillis, TimeUnit.MILLISECONDS).whenComplete((occupied, error) -> {
            events.add(new SlotsChecked(occupied, error));
            LockSupport.unpark(poller);
        });
    }

    /**
     * Pops at once every slot the idle check found something in (a busy slot after its pop under way, as for an
     * announcement); empty slots that are not busy count as polled (for the watchdog). A failed check polls every
     * slot.
     */
    private void slotsChecked(SlotsChecked checked, long now) {
        idleCheckUnderWay = false;
        long[] occupied = checked.occupied();
        if (occupied == null) {
            log.debug("RMQ listener container '{}': the idle check of topic '{}' failed; polling every slot: {}",
                    id(), topic(), String.valueOf(checked.error()));
            nextFullPoll = 0;
            return;
        }
        for (int slot = 0; slot < occupied.length; slot++) {
            if (occupied[slot] > 0) {
                applyWake(new Wake(slot, 0)); // due at once: a pop brings the slot's exact next due time
            }
            else if (slotPop[slot] == null) {
                // a busy slot's pop reports for it: the watchdog must still see a pop that never ends
                lastPolled.set(slot, now);
            }
        }
    }

    /** Polls every slot at once; with {@code abandonOldPops}, also gives up pops long past their deadline. */
    private void resync(boolean abandonOldPops, long now) {
        nextFullPoll = 0;
        errorPauseUntil = 0;
        if (!abandonOldPops) {
            return;
        }
        for (Pop pop : slotPop) {
            if (pop == null || now - pop.sentMillis <= 2 * commandTimeoutMillis) {
                continue;
            }
            if (pop.finished()) {
                // it ended but its event never reached the poller (invariant 1 broken): end it here
                slotPop[pop.slot] = null;
                slotNextDue[pop.slot] = 0;
            }
            else {
                pop.finish(null, new RmqTimeoutException("abandoned by the watchdog"));
            }
        }
    }

    /**
     * Pops without a reply for {@link #SLOW_POP_MILLIS} stop taking room in the buffer ({@link Pop#discount()}); on a
     * cluster, while a pop has had no reply for {@link #STUCK_POP_MILLIS}, the client refreshes its topology about
     * every {@link #TOPOLOGY_CHECK_MILLIS} (its end comes back as a {@link TopologyChecked} event). Returns when the
     * poller should look again (Long.MAX_VALUE: no pop under way will need it).
     */
    private long checkSlowPops(long now) {
        long next = Long.MAX_VALUE;
        boolean stuckOnCluster = false;
        for (Pop pop : slotPop) {
            if (pop == null) {
                continue;
            }
            long age = now - pop.sentMillis;
            if (age >= SLOW_POP_MILLIS) {
                pop.discount();
            }
            else {
                next = Math.min(next, pop.sentMillis + SLOW_POP_MILLIS);
            }
            if (pop.node != null) {
                if (age >= STUCK_POP_MILLIS) {
                    stuckOnCluster = true;
                }
                else {
                    next = Math.min(next, pop.sentMillis + STUCK_POP_MILLIS);
                }
            }
        }
        if (!stuckOnCluster) {
            return next;
        }
        if (now >= nextTopologyCheck) {
            nextTopologyCheck = now + TOPOLOGY_CHECK_MILLIS;
            consumer.refreshTopology().whenComplete((v, error) -> {
                events.add(new TopologyChecked());
                LockSupport.unpark(poller);
            });
        }
        return Math.min(next, nextTopologyCheck);
    }

    /** Ends every pop whose slot is now served by another node than the one it went to; they are sent again. */
    private void resendMovedPops() {
        for (Pop pop : slotPop) {
            if (pop == null || pop.node == null || pop.finished()) {
                continue;
            }
            String now = consumer.nodeOf(pop.slot);
            if (now != null && !now.equals(pop.node)) {
                log.info("RMQ listener container '{}': slot {} of topic '{}' moved to another cluster node (failover);"
                        + " polling it there", id(), pop.slot, topic());
                pop.finish(null, new SlotMoved(pop.slot, pop.node, now));
            }
        }
    }

    /**
     * How many more messages to fetch: the buffer's capacity minus those not yet handled or still on their way,
     * but never more than twice the capacity outstanding in all (handled ones wait for their batched ack).
     */
    private int room() {
        int coming = requested.get();
        return Math.min(capacity - unhandled.get() - coming, 2 * capacity - leases.outstanding() - coming);
    }

    private void updateClockOffset(long lowerBound, long upperBound) {
        long estimate = clockOffsetKnown ? Math.max(clockOffset, lowerBound) : lowerBound;
        clockOffset = Math.min(estimate, upperBound);
        clockOffsetKnown = true;
    }

    private long earliestDueLocal() {
        long earliest = Long.MAX_VALUE;
        long[] next = slotNextDue;
        for (int i = 0; i < next.length; i++) {
            // a busy slot's hint is stale; its pop ending wakes the poller
            if (slotPop[i] == null && next[i] >= 0 && next[i] < earliest) {
                earliest = next[i];
            }
        }
        return earliest == Long.MAX_VALUE ? earliest : earliest - clockOffset;
    }

    /**
     * Sleeps until {@code wakeAtMillis}, an event, or (when {@code full}) room in the buffer. Others unpark the poller
     * only while {@link #plannedWake} is set: an unpark while it is awake would only wake it for nothing later.
     * Set-then-check here and add-then-read there (both sequentially consistent) mean that an event added after the
     * check below sees the planned wake and unparks, and one added before it is seen by the check.
     */
    private void park(long wakeAtMillis, boolean full) {
        plannedWake.set(Math.max(1, wakeAtMillis));
        long now = System.currentTimeMillis();
        if (wakeAtMillis > now && !stopping && events.isEmpty()
                && !(full && room() >= roundSize)) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(wakeAtMillis - now));
        }
        plannedWake.set(0);
    }

    private void applyWake(Wake wake) {
        long[] next = slotNextDue;
        int slot = wake.slot();
        if (slot < 0 || slot >= next.length) {
            return;
        }
        if (slotPop[slot] != null) {
            deferredWakes.add(wake); // the pop under way may bring back a hint older than this announcement
        }
        else if (next[slot] < 0 || wake.due() < next[slot]) {
            next[slot] = wake.due();
        }
    }

    /** Stop: give back what was fetched but not started, then keep running handlers' leases alive until they end. */
    private void drainOnStop() {
        long deadline = System.currentTimeMillis() + options.shutdownTimeout().toMillis();
        // pops under way bring deliveries that must be given back too (bounded: pops time out, late ones are
        // released by deliver())
        long popDeadline = Math.min(deadline, System.currentTimeMillis() + commandTimeoutMillis);
        while (popsUnderWay.get() > 0 && System.currentTimeMillis() < popDeadline) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
        }
        handedBackOnStop = 0;
        abandonedOnStop = 0;
        List<Leased> unstartedEntries = new ArrayList<>();
        synchronized (handoff) {
            drained = true;
            queue.drainTo(unstartedEntries);
            drainBatches(unstartedEntries);
        }
        List<Delivery> unstarted = LeaseKeeper.deliveriesOf(unstartedEntries);
        unhandled.addAndGet(-unstarted.size());
        if (!unstarted.isEmpty() && instrumented) {
            instrumentation.handedBack(id(), topic(), unstarted.size());
        }
        if (!unstarted.isEmpty()) {
            try {
                int released = consumer.release(unstarted);
                handedBackOnStop = released;
                log.debug("Container '{}' returned {} unstarted messages to the store", id(), released);
            }
            catch (RuntimeException ex) {
                log.warn("Container '{}' could not return {} unstarted messages; their leases will expire and they"
                        + " will be redelivered", id(), unstarted.size(), ex);
            }
            leases.settlementsEnded(unstartedEntries);
        }
        long nextExtension = System.currentTimeMillis() + extendEveryMillis;
        while (leases.outstanding() > 0 && System.currentTimeMillis() < deadline) {
            if (System.currentTimeMillis() >= nextExtension) {
                leases.extend();
                nextExtension = System.currentTimeMillis() + extendEveryMillis;
            }
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.min(20, extendEveryMillis)));
        }
        int left = leases.outstanding();
        if (left > 0) {
            abandonedOnStop = left;
            log.warn("Container '{}' stopped with {} handlers still running after {}; their messages will be"
                    + " redelivered when their leases expire", id(), left, options.shutdownTimeout());
        }
    }

    // ------------------------------------------------------------------ watchdog (invariant 6)

    private void watchdog() {
        try {
            if (stopping || !running) {
                return;
            }
            long now = System.currentTimeMillis();
            long sinceLastCheck = now - lastWatchdogMillis;
            lastWatchdogMillis = now;
            if (sinceLastCheck > 3 * WATCHDOG_EVERY_MILLIS) {
                // the whole JVM stood still (a long GC pause, SIGSTOP): give the poller a second to catch up
                roomSinceMillis = 0;
                lastPassMillis = Math.max(lastPassMillis, now);
                return;
            }
            long limit = options.maxIdle().toMillis() + commandTimeoutMillis + WATCHDOG_GRACE_MILLIS;
            Thread pollerThread = poller;
            if (!pollerThread.isAlive()) {
                repaired();
                log.error("RMQ listener container '{}' (topic '{}'): its poller thread has died; starting a new one",
                        id(), topic());
                startPoller();
                return;
            }
            if (now - lastPassMillis > limit) {
                Throwable where = new Throwable("poller stack");
                where.setStackTrace(pollerThread.getStackTrace());
                repaired();
                log.error("RMQ listener container '{}' (topic '{}'): its poller has made no pass for {} ms; waking it",
                        id(), topic(), now - lastPassMillis, where);
                events.add(new Resync(true));
                LockSupport.unpark(pollerThread);
                return;
            }
            if (paused || room() < roundSize || now < throttledUntil + WATCHDOG_EVERY_MILLIS) {
                // a pause, a full buffer or the rate limit legitimately holds polling back
                roomSinceMillis = 0;
                return;
            }
            if (roomSinceMillis == 0) {
                roomSinceMillis = now;
            }
            AtomicLongArray polled = lastPolled;
            List<Integer> stalled = new ArrayList<>();
            for (int slot = 0; slot < polled.length(); slot++) {
                if (now - Math.max(polled.get(slot), roomSinceMillis) > limit) {
                    stalled.add(slot);
                }
            }
            if (!stalled.isEmpty()) {
                repaired();
                log.error("RMQ listener container '{}' (topic '{}'): slot(s) {} were not polled for over {} ms although"
                        + " the container had room; forcing a poll of every slot", id(), topic(), stalled, limit);
                for (int slot : stalled) {
                    polled.set(slot, now); // one report per stall; the next check sees whether the repair worked
                }
                events.add(new Resync(true));
                LockSupport.unpark(pollerThread);
            }
        }
        catch (RuntimeException ex) {
            log.error("RMQ listener container '{}': watchdog check failed", id(), ex);
        }
    }

    /** Counts a repair by the watchdog (each one a broken invariant, logged as an ERROR by the caller). */
    private void repaired() {
        stallsRepaired.incrementAndGet();
        if (instrumented) {
            instrumentation.watchdogRepaired(id(), topic());
        }
    }

    // ------------------------------------------------------------------ handlers

    /**
     * The next item of a handler thread's queue, waited for in steps of 50 ms; null once the container is stopping and
     * the queue is empty, or when the thread is interrupted: the handler thread then ends.
     */
    private <E> E next(BlockingQueue<E> from) {
        while (true) {
            E item;
            try {
                item = from.poll(50, TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException ex) {
                return null;
            }
            if (item != null || stopping) {
                return item;
            }
        }
    }

    private void work() {
        List<Leased> taken = new ArrayList<>(HANDLER_TAKE);
        for (Leased first = next(queue); first != null; first = next(queue)) {
            // take a few more without blocking: one wake-up per few messages, not one per message (on a small box
            // the thread hand-offs cost more than a no-op handler)
            taken.add(first);
            try {
                queue.drainTo(taken, Math.min(HANDLER_TAKE, Math.max(0, queue.size() / options.concurrency())) - 1);
                for (Leased entry : taken) {
                    handle(entry); // ends every entry's settlement whatever it throws
                }
            }
            catch (Throwable ex) {
                // the thread's top: a handler thread that ended here would leave the container a thread short
                handlerThreadError(ex);
            }
            taken.clear();
        }
    }

    private void handlerThreadError(Throwable error) {
        log.error("RMQ listener container '{}' (topic '{}'): unexpected error on handler thread {}; the thread goes on",
                id(), topic(), Thread.currentThread().getName(), error);
    }

    private void handle(Leased entry) {
        Delivery delivery = entry.delivery;
        if (lookAheadMillis > 0 && !holdUntilDue(delivery.score())) {
            unhandled.decrementAndGet();
            handBack(List.of(entry));
            return;
        }
        try {
            // right before the handler (conversion included), on its thread
            HandleScope scope = instrumented
                    ? instrumentation.handleStarted(id(), delivery, consumer.latenessMillis(delivery))
                    : HandleScope.NONE;
            // the ack goes out batched; the handler thread moves on, the lease stays extended until it is written.
            // The settle always ends, in exactly one call of the callback: ack lanes and lease extensions are bounded
            // (RedisGateway.CALL_TIMEOUT_MILLIS), nacks are synchronous with a deadline (invariant 3). A callback,
            // not a future: one stage less per message on the event loop.
            consumer.handle(delivery, payloadType, handler, scope, error -> leases.settled(entry, error));
        }
        catch (RuntimeException ex) {
            leases.settled(entry, ex); // handle threw: it calls no callback
        }
        catch (Throwable ex) {
            // an Error from the instrumentation or the settlement: the delivery must not stay outstanding (its lease
            // extended for ever); released from the lease keeping, it is redelivered when its lease expires
            handlerThreadError(ex);
            leases.settled(entry, ex);
        }
        finally {
            unhandled.decrementAndGet();
        }
        wakePollerIfRoom();
    }

    /**
     * Look-ahead: parks the handler thread until {@code due} (Redis ms, by the clock offset estimate, which never
     * runs ahead of Redis's clock: see {@link #updateClockOffset}), at most the look-ahead (the delivery is popped at
     * most that early; its lease is extended meanwhile, as every outstanding one). Returns false, at once, when the
     * container begins stopping or the thread is interrupted first: the caller hands the delivery back.
     */
    private boolean holdUntilDue(double due) {
        while (true) {
            long wait = (long) Math.ceil(due) - clockOffset - System.currentTimeMillis();
            if (wait <= 0) {
                return true;
            }
            if (stopping || Thread.currentThread().isInterrupted()) {
                return false;
            }
            // in short steps: stop() sets the flag before it interrupts anyone
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.min(wait, 20)));
        }
    }

    /** Gives held deliveries back to the store (the container is stopping); they count as settled once released. */
    private void handBack(List<Leased> entries) {
        List<Delivery> deliveries = LeaseKeeper.deliveriesOf(entries);
        if (instrumented) {
            instrumentation.handedBack(id(), topic(), deliveries.size());
        }
        CompletableFuture<Integer> released;
        try {
            released = consumer.releaseAsync(deliveries);
        }
        catch (RuntimeException ex) {
            released = CompletableFuture.failedFuture(ex);
        }
        released.whenComplete((count, ex) -> {
            log.debug("Container '{}' stopped while holding {} deliveries popped ahead of their due time; released {}",
                    id(), deliveries.size(), count, ex);
            leases.settlementsEnded(entries);
        });
    }

    private void wakePollerIfRoom() {
        // the first thread that finds room takes the planned wake and unparks; the others see the poller awake (one
        // unpark per sleep, not one per message handled while it sleeps)
        if (plannedWake.get() != 0 && room() >= roundSize && plannedWake.getAndSet(0) != 0) {
            Thread pollerThread = poller;
            if (pollerThread != null) {
                LockSupport.unpark(pollerThread);
            }
        }
    }

    // ------------------------------------------------------------------ batch mode

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

    /**
     * Queues what arrived as batches: the deliveries of each slot together (a round holds at most one pop per slot,
     * so each batch is what one pop of one slot brought), at most {@code batchSize} each, in taking order. Called
     * under {@link #handoff}.
     */
    private void queueBatches(List<Leased> bestFirst) {
        Map<Integer, List<Leased>> bySlot = new LinkedHashMap<>();
        for (Leased entry : bestFirst) {
            bySlot.computeIfAbsent(entry.delivery.slot(), s -> new ArrayList<>()).add(entry);
        }
        int most = consumer.settings().batchSize();
        for (List<Leased> ofSlot : bySlot.values()) {
            for (int from = 0; from < ofSlot.size(); from += most) {
                batches.add(new ArrayList<>(ofSlot.subList(from, Math.min(ofSlot.size(), from + most))));
            }
        }
    }

    /** At stop: the queued batches' deliveries join the unstarted ones given back. Called under {@link #handoff}. */
    private void drainBatches(List<Leased> unstarted) {
        if (batches == null) {
            return;
        }
        List<List<Leased>> left = new ArrayList<>();
        batches.drainTo(left);
        left.forEach(unstarted::addAll);
    }

    private void workBatches() {
        for (List<Leased> batch = next(batches); batch != null; batch = next(batches)) {
            try {
                handleBatch(batch); // ends the batch's settlement whatever it throws
            }
            catch (Throwable ex) {
                handlerThreadError(ex); // the thread's top, as in work()
            }
        }
    }

    /**
     * Hands one batch to the batch handler and settles it (as {@link #handle} does for one delivery): its deliveries
     * stop counting as unhandled when the call returns and leave {@code outstanding} when their settlement ends.
     */
    private void handleBatch(List<Leased> entries) {
        List<Delivery> batch = LeaseKeeper.deliveriesOf(entries);
        double lastDue = Double.NEGATIVE_INFINITY;
        for (Delivery delivery : batch) {
            lastDue = Math.max(lastDue, delivery.score());
        }
        // a batch is handed over once its last message is due (none of them before its due time)
        if (lookAheadMillis > 0 && !holdUntilDue(lastDue)) {
            unhandled.addAndGet(-batch.size());
            handBack(entries);
            return;
        }
        CompletableFuture<Void> settled;
        try {
            List<HandleScope> scopes = new ArrayList<>(batch.size());
            for (Delivery delivery : batch) {
                scopes.add(instrumented
                        ? instrumentation.handleStarted(id(), delivery, consumer.latenessMillis(delivery))
                        : HandleScope.NONE);
            }
            settled = consumer.handleBatchAsync(batch, payloadType, batchHandler, scopes);
        }
        catch (RuntimeException ex) {
            settled = CompletableFuture.failedFuture(ex);
        }
        catch (Throwable ex) {
            // as in handle: an Error must not leave the batch outstanding nor end the thread
            handlerThreadError(ex);
            settled = CompletableFuture.failedFuture(ex);
        }
        finally {
            unhandled.addAndGet(-batch.size());
        }
        wakePollerIfRoom();
        settled.whenComplete((v, ex) -> {
            if (ex != null) {
                log.warn("Container '{}' could not settle a batch of {} on slot {}; what was not settled will be"
                        + " redelivered after its lease: {}", id(), batch.size(), batch.get(0).slot(),
                        String.valueOf(ex));
            }
            leases.settlementsEnded(entries);
        });
    }
}
