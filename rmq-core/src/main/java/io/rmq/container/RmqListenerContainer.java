package io.rmq.container;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.RmqTimeoutException;
import io.rmq.core.Timeouts;
import io.netty.util.Timeout;
import io.rmq.redis.WakeUpSubscriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one listener: a poller thread leases due messages (pipelined across slots, up to two pop rounds under way so
 * Redis pops the next batch while handlers work through the last) into a small local queue, and
 * {@code concurrency} handler threads convert, handle and settle them (ack / retry / dead). The poller also extends
 * the leases of everything fetched, and sleeps when idle: until the earliest due time it knows of, until a wake-up
 * announcement names a sooner one, or at most {@code maxIdle}.
 * <p>
 * {@link #stop()} is graceful: fetching stops, fetched-but-unstarted messages go back to the store at once (no
 * attempt counted), running handlers get up to {@code shutdownTimeout} to finish while their leases are kept alive.
 *
 * <h2>Invariants (what keeps a listener consuming)</h2>
 * <ol>
 * <li>The scheduling state ({@code slotNextDue}, {@code slotBusy}, {@code rounds}, {@code deferredWakes}, the
 * clock offset, the next full poll) has one owner, the poller thread. Other threads never touch it: they
 * {@linkplain #events enqueue an event} (a round finished, a wake-up, a resync) and unpark the poller. The poller
 * drains the event queue completely at the top of every pass; an event is never cleared or dropped unseen.</li>
 * <li>A slot is busy iff a round that covers it is in {@code rounds}. Every round produces exactly one
 * {@link RoundFinished} event, on whichever comes first of its reply, its error, or {@code commandTimeout} without
 * a reply ({@link Round#finish} decides once). Draining that event is the only place a round leaves
 * {@code rounds} and its slots stop being busy. A reply that comes after the timeout still hands its deliveries
 * to the handlers.</li>
 * <li>No thread of the container waits on Redis without a deadline: pops and settles are bounded by
 * {@code commandTimeout}, lease extensions are sent without waiting (one at a time), acks go through a batch lane
 * that is itself bounded. What a call that timed out had leased comes back through lease expiry.</li>
 * <li>The poller's sleep is bounded by {@code maxIdle} (it then polls every slot that is not busy), so no lost
 * unpark can stop it for longer than that.</li>
 * <li>A watchdog (every second, on the shared timer thread) checks what the invariants promise: the poller thread
 * is alive and has made a pass within {@code maxIdle + commandTimeout} (+ grace), and, while the buffer had room,
 * every slot has finished a pop round within that time. It logs an ERROR naming the container and the slots and
 * repairs: it restarts a dead poller, and enqueues a {@link Resync} that makes the poller poll every slot at once
 * (and give up on any round older than twice the command timeout).</li>
 * </ol>
 */
public final class RmqListenerContainer implements ListenerContainer {

    private static final Logger log = LoggerFactory.getLogger(RmqListenerContainer.class);

    private static final long ERROR_PAUSE_MILLIS = 1000;
    /** Slack on top of maxIdle + commandTimeout before the watchdog calls a slot or the poller stalled (GC, load). */
    private static final long WATCHDOG_GRACE_MILLIS = 5000;
    private static final long WATCHDOG_EVERY_MILLIS = 1000;

    private final RmqConsumer consumer;
    private final WakeUpSubscriber wakeUps;
    private final Type payloadType;
    private final MessageHandler<Object> handler;
    private final ContainerOptions options;
    private final int capacity;
    /**
     * The most one pop round asks for, and the room the poller waits for before sending one (half the buffer: a
     * round can be under way while the handlers work through the other half; each fetch is a decent batch).
     */
    private final int roundSize;
    private final long extendEveryMillis;
    private final long commandTimeoutMillis;
    /** The topic's cluster-wide rate limit, or null. */
    private final io.rmq.consumer.TopicRateLimiter limiter;

    private final LinkedBlockingQueue<Delivery> queue = new LinkedBlockingQueue<>();
    /** The most messages a handler thread takes from the queue at once (a fair share of what is queued). */
    private static final int HANDLER_TAKE = 16;
    private final Set<Delivery> outstanding = ConcurrentHashMap.newKeySet();
    /**
     * Fetched and not yet handled (queued or in a handler). The poller fetches for these, not for all outstanding
     * messages: counting handled messages whose ack is still on its way would make the poller wait for acks while
     * the handlers ran dry.
     */
    private final AtomicInteger unhandled = new AtomicInteger();

    /**
     * Pop rounds under way at most. With one, the handlers ran dry at every round and Redis idled while they worked;
     * two overlap them (BENCHMARKS.md).
     */
    private static final int MAX_ROUNDS = 2;
    /** Messages asked for by rounds not yet finished: they take room in the buffer before they arrive. */
    private final AtomicInteger requested = new AtomicInteger();
    /** Pops whose reply has not come yet (a timed-out round still counts until its late reply or error). */
    private final AtomicInteger popsUnderWay = new AtomicInteger();

    /** Everything other threads tell the poller; drained completely by the poller on every pass. */
    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();

    private sealed interface Event permits RoundFinished, Wake, Resync {
    }

    /** A pop round ended: its result, or its error (a timeout included). */
    private record RoundFinished(Round round, PollResult result, Throwable error) implements Event {
    }

    /** A wake-up announcement: a slot got a new first message due at {@code due} (Redis clock). */
    private record Wake(int slot, long due) implements Event {
    }

    /** Poll every slot now (after a resubscription that may have missed announcements, or a watchdog repair). */
    private record Resync(boolean abandonOldRounds) implements Event {
    }

    /** A pop round: the slots it covers, when it was sent (local ms), and whether it has finished. */
    private final class Round {

        final int[] slots;
        final int asked;
        final long sentMillis;
        final AtomicBoolean finished = new AtomicBoolean();
        volatile Timeout deadline;

        Round(int[] slots, int asked, long sentMillis) {
            this.slots = slots;
            this.asked = asked;
            this.sentMillis = sentMillis;
        }

        /** Ends the round once, whatever ends it first; the poller hears of it through one event. */
        void finish(PollResult result, Throwable error) {
            if (!finished.compareAndSet(false, true)) {
                return;
            }
            Timeout timer = deadline;
            if (timer != null) {
                timer.cancel();
            }
            requested.addAndGet(-asked);
            events.add(new RoundFinished(this, result, error));
            LockSupport.unpark(poller);
        }
    }

    // ---------------------------------------------------------------- poller-owned state (see invariant 1)

    /** Per slot: Redis ms when it next needs a pop; -1 when empty; 0 at start (unknown: poll). */
    private long[] slotNextDue;
    /** Slots a round under way is popping (not polled again until it has finished). */
    private boolean[] slotBusy;
    private final List<Round> rounds = new ArrayList<>(MAX_ROUNDS);
    /** Wake-up announcements for busy slots, applied after their round's (older) hints. */
    private final List<Wake> deferredWakes = new ArrayList<>();
    /** Rotates which due slots a partial poll starts with, so no slot waits behind the others. */
    private int slotCursor;
    private long nextFullPoll;
    private long errorPauseUntil;
    /** Rate-limited: local ms when the shared bucket has a permit again. */
    private volatile long throttledUntil;
    private int failedRounds;
    /** The extension under way (bounded); the next one waits for it. */
    private CompletableFuture<?> extension = CompletableFuture.completedFuture(null);
    /**
     * Estimated Redis clock minus local clock. Each pop brackets it: Redis read its clock after the request left and
     * before the reply arrived, so the offset lies in [redisNow - received, redisNow - sent]. The estimate keeps the
     * tightest of these lower bounds, clamped into the latest interval (so a clock step is followed at once).
     */
    private volatile long clockOffset;
    private boolean clockOffsetKnown;

    // ---------------------------------------------------------------- shared with the watchdog and other threads

    /** When the poller's sleep ends (local ms), 0 while it is awake: others unpark it only while it sleeps. */
    private final AtomicLong plannedWake = new AtomicLong();
    /** Local ms of the poller's last pass. */
    private volatile long lastPassMillis;
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
    private volatile Thread poller;
    private final List<Thread> workers = new ArrayList<>();

    @SuppressWarnings("unchecked")
    public <T> RmqListenerContainer(RmqConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            MessageHandler<T> handler, ContainerOptions options) {
        this.consumer = consumer;
        this.wakeUps = wakeUps;
        this.payloadType = payloadType;
        this.handler = (MessageHandler<Object>) handler;
        this.options = options;
        // room for several pops' worth: a pop call has a fixed cost, so fetch in batches of about batchSize per slot,
        // and keep enough in hand that handlers never wait for the next pop
        this.capacity = options.concurrency() + 8 * consumer.settings().batchSize();
        this.roundSize = capacity / 2;
        this.extendEveryMillis = Math.max(50, consumer.settings().lease().toMillis() / 3);
        this.commandTimeoutMillis = options.commandTimeout().toMillis();
        this.limiter = options.rateLimit() == null ? null : consumer.rateLimiter(options.rateLimit());
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

    /** Messages fetched and not yet settled (queued or being handled). */
    public int outstanding() {
        return outstanding.size();
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
            slotBusy = new boolean[slots];
            rounds.clear();
            deferredWakes.clear();
            events.clear(); // nothing runs yet that could have queued anything for this run
            nextFullPoll = 0;
            errorPauseUntil = 0;
            throttledUntil = 0;
            failedRounds = 0;
            long now = System.currentTimeMillis();
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
                Thread worker = options.threadFactory().newThread(this::work);
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
                drainEvents(now);
                if (now >= nextExtension) {
                    extendLeases();
                    nextExtension = now + extendEveryMillis;
                }
                int free = room();
                boolean paused = now < errorPauseUntil || now < throttledUntil;
                boolean fullPoll = now >= nextFullPoll;
                int[] due = paused ? new int[0] : dueSlots(fullPoll);
                boolean roundFree = rounds.size() < MAX_ROUNDS;
                if (roundFree && free >= roundSize && due.length > 0) {
                    if (fullPoll) {
                        nextFullPoll = now + options.maxIdle().toMillis();
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
                            continue;
                        }
                        free = (int) permits[0];
                        slots = Arrays.copyOf(slots, Math.min(slots.length, free));
                    }
                    poll(slots, free);
                    continue;
                }
                long wakeAt = outstanding.isEmpty() ? Long.MAX_VALUE : nextExtension;
                boolean full = free < roundSize || !roundFree;
                if (paused) {
                    wakeAt = Math.min(wakeAt, Math.max(errorPauseUntil, throttledUntil));
                }
                else if (!full) {
                    wakeAt = Math.min(wakeAt, Math.min(nextFullPoll, earliestDueLocal()));
                }
                // with the buffer full, a handler finishing or a round ending wakes the poller; the sleep is bounded
                // by maxIdle whatever happens (invariant 4)
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
            if (!slotBusy[i] && (all || next[i] >= 0 && next[i] <= redisNow)) {
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
     * Sends a pop round. Its deliveries go to the handlers as soon as its reply is back (even after its timeout);
     * the round itself ends once, on its reply, error or timeout (invariant 2).
     */
    private void poll(int[] slots, int free) {
        int perSlot = limiter != null
                // asks for no more than the permits it holds; what it does not use goes back to the bucket
                ? Math.max(1, Math.min(consumer.settings().batchSize(), free / slots.length))
                : Math.max(1, Math.min(consumer.settings().batchSize(), (free + slots.length - 1) / slots.length));
        Round round = new Round(slots, perSlot * slots.length, System.currentTimeMillis());
        for (int slot : slots) {
            slotBusy[slot] = true;
        }
        rounds.add(round);
        requested.addAndGet(round.asked);
        popsUnderWay.incrementAndGet();
        CompletableFuture<PollResult> pop;
        try {
            pop = consumer.pollAsync(slots, perSlot);
        }
        catch (RuntimeException ex) {
            pop = CompletableFuture.failedFuture(ex);
        }
        if (!pop.isDone()) {
            round.deadline = Timeouts.after(commandTimeoutMillis, () -> round.finish(null, new RmqTimeoutException(
                    "polling " + slots.length + " slots of topic '" + topic() + "': no reply from Redis within "
                            + commandTimeoutMillis + " ms")));
        }
        int permits = free;
        pop.whenComplete((result, error) -> {
            try {
                if (limiter != null) {
                    limiter.giveBack(permits - (result == null ? 0 : result.deliveries().size()));
                }
                if (result != null) {
                    deliver(result.deliveries(), round.finished.get());
                }
            }
            finally {
                popsUnderWay.decrementAndGet();
                round.finish(result, error);
            }
        });
    }

    /** Hands leased deliveries to the handlers, or back to the store when the container has already drained. */
    private void deliver(List<Delivery> deliveries, boolean late) {
        if (deliveries.isEmpty()) {
            return;
        }
        synchronized (handoff) {
            if (!drained) {
                outstanding.addAll(deliveries);
                unhandled.addAndGet(deliveries.size());
                queue.addAll(deliveries);
                if (late) {
                    log.debug("Container '{}': a pop round answered after its timeout; its {} deliveries are handled",
                            id(), deliveries.size());
                }
                return;
            }
        }
        consumer.releaseAsync(deliveries).whenComplete((released, ex) -> log.debug(
                "Container '{}' had stopped when {} deliveries arrived; released {}", id(), deliveries.size(),
                released, ex));
    }

    /** Takes in everything other threads reported (invariant 1): finished rounds first, then announcements. */
    private void drainEvents(long now) {
        Event event;
        List<Wake> wakes = null;
        while ((event = events.poll()) != null) {
            if (event instanceof RoundFinished finished) {
                roundFinished(finished, now);
            }
            else if (event instanceof Wake wake) {
                if (wakes == null) {
                    wakes = new ArrayList<>();
                }
                wakes.add(wake);
            }
            else if (event instanceof Resync resync) {
                resync(resync.abandonOldRounds(), now);
            }
        }
        // announcements deferred behind a round that has now finished apply after its (older) hints
        if (!deferredWakes.isEmpty()) {
            List<Wake> ready = new ArrayList<>(deferredWakes);
            deferredWakes.clear();
            ready.forEach(this::applyWake);
        }
        if (wakes != null) {
            wakes.forEach(this::applyWake);
        }
    }

    private void roundFinished(RoundFinished finished, long now) {
        Round round = finished.round();
        if (!rounds.remove(round)) {
            return; // already abandoned by a resync
        }
        AtomicLongArray polled = lastPolled;
        for (int slot : round.slots) {
            slotBusy[slot] = false;
            polled.set(slot, now);
        }
        long[] next = slotNextDue;
        PollResult result = finished.result();
        if (result == null) {
            for (int slot : round.slots) {
                next[slot] = 0; // unknown: poll it again (after the error pause)
            }
            Throwable error = finished.error() instanceof CompletionException && finished.error().getCause() != null
                    ? finished.error().getCause() : finished.error();
            failedRounds++;
            errorPauseUntil = now + ERROR_PAUSE_MILLIS;
            if (failedRounds == 1 || failedRounds % 60 == 0) {
                log.warn("RMQ listener container '{}' failed to poll topic '{}' ({} failed round(s) in a row);"
                        + " retrying every {} ms: {}", id(), topic(), failedRounds, ERROR_PAUSE_MILLIS,
                        String.valueOf(error), log.isDebugEnabled() ? error : null);
            }
            return;
        }
        if (failedRounds > 0) {
            log.info("RMQ listener container '{}' polls topic '{}' again after {} failed round(s)", id(), topic(),
                    failedRounds);
            failedRounds = 0;
        }
        if (result.redisNow() >= 0) {
            updateClockOffset(result.redisNow() - now, result.redisNow() - round.sentMillis);
        }
        for (int i = 0; i < result.slots().length; i++) {
            next[result.slots()[i]] = result.slotNextDue()[i];
        }
    }

    /** Polls every slot at once; with {@code abandonOldRounds}, also gives up rounds long past their deadline. */
    private void resync(boolean abandonOldRounds, long now) {
        nextFullPoll = 0;
        errorPauseUntil = 0;
        if (!abandonOldRounds) {
            return;
        }
        for (Round round : List.copyOf(rounds)) {
            if (now - round.sentMillis <= 2 * commandTimeoutMillis) {
                continue;
            }
            if (round.finished.get()) {
                // it ended but its event never reached the poller (invariant 1 broken): end it here
                rounds.remove(round);
                for (int slot : round.slots) {
                    slotBusy[slot] = false;
                    slotNextDue[slot] = 0;
                }
            }
            else {
                round.finish(null, new RmqTimeoutException("abandoned by the watchdog"));
            }
        }
    }

    /**
     * How many more messages to fetch: the buffer's capacity minus those not yet handled or still on their way,
     * but never more than twice the capacity outstanding in all (handled ones wait for their batched ack).
     */
    private int room() {
        int coming = requested.get();
        return Math.min(capacity - unhandled.get() - coming, 2 * capacity - outstanding.size() - coming);
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
            // a busy slot's hint is stale; its round ending wakes the poller
            if (!slotBusy[i] && next[i] >= 0 && next[i] < earliest) {
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
                && !(full && room() >= roundSize && rounds.size() < MAX_ROUNDS)) {
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
        if (slotBusy[slot]) {
            deferredWakes.add(wake); // the round under way may bring back a hint older than this announcement
        }
        else if (next[slot] < 0 || wake.due() < next[slot]) {
            next[slot] = wake.due();
        }
    }

    /** Sends one extension of every outstanding lease, without waiting for it; the next waits for this one. */
    private void extendLeases() {
        if (outstanding.isEmpty() || !extension.isDone()) {
            return;
        }
        List<Delivery> leased = new ArrayList<>(outstanding);
        CompletableFuture<Integer> sent;
        try {
            sent = consumer.extendAllAsync(leased); // bounded inside (RedisGateway.CALL_TIMEOUT_MILLIS)
        }
        catch (RuntimeException ex) {
            sent = CompletableFuture.failedFuture(ex);
        }
        extension = sent.whenComplete((extended, error) -> {
            if (error != null) {
                log.warn("Container '{}': extending {} leases failed; they are extended again in {} ms: {}", id(),
                        leased.size(), extendEveryMillis, String.valueOf(error));
            }
            else if (extended < leased.size()) {
                log.debug("Container '{}': {} of {} leases could not be extended (already settled or expired)", id(),
                        leased.size() - extended, leased.size());
            }
        });
    }

    /** Stop: give back what was fetched but not started, then keep running handlers' leases alive until they end. */
    private void drainOnStop() {
        long deadline = System.currentTimeMillis() + options.shutdownTimeout().toMillis();
        // pops under way bring deliveries that must be given back too (bounded: rounds time out, late ones are
        // released by deliver())
        long popDeadline = Math.min(deadline, System.currentTimeMillis() + commandTimeoutMillis);
        while (popsUnderWay.get() > 0 && System.currentTimeMillis() < popDeadline) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
        }
        List<Delivery> unstarted = new ArrayList<>();
        synchronized (handoff) {
            drained = true;
            queue.drainTo(unstarted);
        }
        unhandled.addAndGet(-unstarted.size());
        if (!unstarted.isEmpty()) {
            try {
                int released = consumer.release(unstarted);
                log.debug("Container '{}' returned {} unstarted messages to the store", id(), released);
            }
            catch (RuntimeException ex) {
                log.warn("Container '{}' could not return {} unstarted messages; their leases will expire and they"
                        + " will be redelivered", id(), unstarted.size(), ex);
            }
            unstarted.forEach(outstanding::remove);
        }
        long nextExtension = System.currentTimeMillis() + extendEveryMillis;
        while (!outstanding.isEmpty() && System.currentTimeMillis() < deadline) {
            if (System.currentTimeMillis() >= nextExtension) {
                extendLeases();
                nextExtension = System.currentTimeMillis() + extendEveryMillis;
            }
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.min(20, extendEveryMillis)));
        }
        if (!outstanding.isEmpty()) {
            log.warn("Container '{}' stopped with {} handlers still running after {}; their messages will be"
                    + " redelivered when their leases expire", id(), outstanding.size(), options.shutdownTimeout());
        }
    }

    // ------------------------------------------------------------------ watchdog (invariant 5)

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
                stallsRepaired.incrementAndGet();
                log.error("RMQ listener container '{}' (topic '{}'): its poller thread has died; starting a new one",
                        id(), topic());
                startPoller();
                return;
            }
            if (now - lastPassMillis > limit) {
                Throwable where = new Throwable("poller stack");
                where.setStackTrace(pollerThread.getStackTrace());
                stallsRepaired.incrementAndGet();
                log.error("RMQ listener container '{}' (topic '{}'): its poller has made no pass for {} ms; waking it",
                        id(), topic(), now - lastPassMillis, where);
                events.add(new Resync(true));
                LockSupport.unpark(pollerThread);
                return;
            }
            if (room() < roundSize || now < throttledUntil + WATCHDOG_EVERY_MILLIS) {
                roomSinceMillis = 0; // a full buffer or the rate limit legitimately holds polling back
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
                stallsRepaired.incrementAndGet();
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

    // ------------------------------------------------------------------ handlers

    private void work() {
        List<Delivery> taken = new ArrayList<>(HANDLER_TAKE);
        while (true) {
            Delivery first;
            try {
                first = queue.poll(50, TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException ex) {
                return;
            }
            if (first == null) {
                if (stopping) {
                    return;
                }
                continue;
            }
            // take a few more without blocking: one wake-up per few messages, not one per message (on a small box
            // the thread hand-offs cost more than a no-op handler)
            taken.add(first);
            queue.drainTo(taken, Math.min(HANDLER_TAKE, Math.max(0, queue.size() / options.concurrency())) - 1);
            for (Delivery delivery : taken) {
                handle(delivery);
            }
            taken.clear();
        }
    }

    private void handle(Delivery delivery) {
        CompletableFuture<Void> settled;
        try {
            settled = consumer.handleAsync(delivery, payloadType, handler);
        }
        catch (RuntimeException ex) {
            settled = CompletableFuture.failedFuture(ex);
        }
        finally {
            unhandled.decrementAndGet();
        }
        wakePollerIfRoom();
        // the ack goes out batched; the handler thread moves on, the lease stays extended until it is written. The
        // settle always ends: ack lanes and lease extensions are bounded (RedisGateway.CALL_TIMEOUT_MILLIS), nacks
        // are synchronous with a deadline (invariant 3).
        settled.whenComplete((v, ex) -> {
            if (ex != null) {
                // settling failed (Redis unreachable): the lease expires and the message is redelivered
                log.warn("Container '{}' could not settle {}; it will be redelivered after its lease: {}", id(),
                        delivery, String.valueOf(ex));
            }
            outstanding.remove(delivery);
            wakePollerIfRoom();
        });
    }

    private void wakePollerIfRoom() {
        if (plannedWake.get() != 0 && room() >= roundSize) {
            Thread pollerThread = poller;
            if (pollerThread != null) {
                LockSupport.unpark(pollerThread);
            }
        }
    }
}
