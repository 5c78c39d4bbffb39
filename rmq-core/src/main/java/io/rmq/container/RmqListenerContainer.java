package io.rmq.container;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqConsumer;
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
 */
public final class RmqListenerContainer {

    private static final Logger log = LoggerFactory.getLogger(RmqListenerContainer.class);

    private static final long ERROR_PAUSE_MILLIS = 1000;

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
    /** Rotates which due slots a partial poll starts with, so no slot waits behind the others. */
    private int slotCursor;

    private final LinkedBlockingQueue<Delivery> queue = new LinkedBlockingQueue<>();
    /** The most messages a handler thread takes from the queue at once (a fair share of what is queued). */
    private static final int HANDLER_TAKE = 16;
    private final Set<Delivery> outstanding = ConcurrentHashMap.newKeySet();
    /**
     * Fetched and not yet handled (queued or in a handler). The poller fetches for these, not for all outstanding
     * messages: counting handled messages whose ack is still on its way made the poller wait for acks while the
     * handlers ran dry, so Redis and the handlers took turns instead of overlapping (~30% idle CPU in W1B).
     */
    private final AtomicInteger unhandled = new AtomicInteger();

    /**
     * Pop rounds under way at most. One at a time, the handlers ran dry at every round (its reply came after they
     * had finished the previous one) and Redis idled while they worked. Two: W1B median 49.5k -> 62.6k msgs/s
     * (4 interleaved runs each; three rounds or a bigger buffer gave no more).
     */
    private static final int MAX_ROUNDS = 2;
    private final AtomicInteger roundsInFlight = new AtomicInteger();
    /** Messages asked for by rounds under way: they take room in the buffer before they arrive. */
    private final AtomicInteger requested = new AtomicInteger();
    /** Completed rounds, for the poller to merge (slot hints, clock offset, errors). */
    private final ConcurrentLinkedQueue<Round> arrivals = new ConcurrentLinkedQueue<>();
    /** Poller-only: slots a round under way is popping (not polled again until it is back). */
    private boolean[] slotBusy;
    /** Poller-only: wake-up announcements for busy slots, applied after their round's (older) hints. */
    private final List<long[]> deferredWakes = new ArrayList<>();

    /** A pop round that came back: its slots, when it was sent and received (local ms), its result or error. */
    private record Round(int[] slots, long sentMillis, long receivedMillis, PollResult result, Throwable error) {
    }
    private final WakeUpSubscriber.Listener wakeListener = this::wake;
    private final Object lifecycle = new Object();

    /** Per slot: Redis ms when it next needs a pop; -1 when empty; 0 at start (unknown: poll). */
    private volatile long[] slotNextDue;
    /**
     * Estimated Redis clock minus local clock. Each pop brackets it: Redis read its clock after the request left and
     * before the reply arrived, so the offset lies in [redisNow - received, redisNow - sent]. The estimate keeps the
     * tightest of these lower bounds, clamped into the latest interval (so a clock step is followed at once). Taking
     * {@code redisNow - received} alone would make every wake-up after a late reply late by that reply's delay.
     */
    private volatile long clockOffset;
    private boolean clockOffsetKnown;
    private final AtomicLong plannedWake = new AtomicLong();
    /** Wake-up announcements not yet merged into slotNextDue: {slot, due}. */
    private final ConcurrentLinkedQueue<long[]> wakeEvents = new ConcurrentLinkedQueue<>();

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
        // and keep enough in hand that handlers never wait for the next pop (8 batches: +20% over 4 in W1B here)
        this.capacity = options.concurrency() + 8 * consumer.settings().batchSize();
        this.roundSize = capacity / 2;
        this.extendEveryMillis = Math.max(50, consumer.settings().lease().toMillis() / 3);
    }

    public String id() {
        return options.id();
    }

    public String topic() {
        return consumer.topic().name();
    }

    public boolean isRunning() {
        return running;
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
            slotNextDue = new long[consumer.topic().slotAmount()];
            slotBusy = new boolean[consumer.topic().slotAmount()];
            deferredWakes.clear();
            arrivals.clear();
            consumer.preparePayloadType(payloadType);
            wakeUps.register(topic(), wakeListener);
            workers.clear();
            for (int i = 0; i < options.concurrency(); i++) {
                Thread worker = options.threadFactory().newThread(this::work);
                worker.setName(options.id() + "-handler-" + i);
                workers.add(worker);
                worker.start();
            }
            Thread pollerThread = options.threadFactory().newThread(this::pollLoop);
            pollerThread.setName(options.id() + "-poller");
            poller = pollerThread;
            pollerThread.start();
            log.debug("Started RMQ listener container '{}' on topic '{}' with {} handler threads", id(), topic(),
                    options.concurrency());
        }
    }

    /** Graceful stop; returns when the container has stopped (or the shutdown timeout has passed). */
    public void stop() {
        synchronized (lifecycle) {
            if (!running) {
                return;
            }
            stopping = true;
            wakeUps.unregister(topic(), wakeListener);
            Thread pollerThread = poller;
            LockSupport.unpark(pollerThread);
            long deadline = System.nanoTime() + options.shutdownTimeout().toNanos() + TimeUnit.SECONDS.toNanos(5);
            joinUntil(pollerThread, deadline);
            for (Thread worker : workers) {
                worker.interrupt();
            }
            for (Thread worker : workers) {
                joinUntil(worker, System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
            }
            running = false;
            log.debug("Stopped RMQ listener container '{}'", id());
        }
    }

    private static void joinUntil(Thread thread, long deadlineNanos) {
        try {
            long millis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            thread.join(Math.max(1, millis));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ poller

    private void pollLoop() {
        long nextExtension = System.currentTimeMillis() + extendEveryMillis;
        long nextFullPoll = 0;
        while (!stopping) {
            try {
                mergeArrivals();
                mergeWakeEvents();
                long now = System.currentTimeMillis();
                if (now >= nextExtension) {
                    extendLeases();
                    nextExtension = now + extendEveryMillis;
                }
                int free = room();
                boolean fullPoll = now >= nextFullPoll;
                int[] due = dueSlots(fullPoll);
                boolean roundFree = roundsInFlight.get() < MAX_ROUNDS;
                if (roundFree && free >= roundSize && due.length > 0) {
                    if (fullPoll) {
                        nextFullPoll = now + options.maxIdle().toMillis();
                    }
                    poll(fullPoll ? due : pick(due, free), free);
                    continue;
                }
                long wakeAt = outstanding.isEmpty() ? Long.MAX_VALUE : nextExtension;
                boolean full = free < roundSize || !roundFree;
                if (!full) {
                    wakeAt = Math.min(wakeAt, Math.min(nextFullPoll, earliestDueLocal()));
                }
                // with the buffer full, a handler finishing, a round coming back (or the next lease extension) wakes
                // the poller
                park(wakeAt, full);
            }
            catch (RuntimeException ex) {
                if (stopping) {
                    break;
                }
                log.warn("RMQ listener container '{}' failed to poll topic '{}'; retrying in {} ms", id(), topic(),
                        ERROR_PAUSE_MILLIS, ex);
                park(System.currentTimeMillis() + ERROR_PAUSE_MILLIS, false);
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
        return java.util.Arrays.copyOf(due, count);
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

    /** Sends a pop round; its deliveries go to the handlers as soon as it is back, the rest to the poller. */
    private void poll(int[] slots, int free) {
        int perSlot = Math.max(1, Math.min(consumer.settings().batchSize(), (free + slots.length - 1) / slots.length));
        int asked = perSlot * slots.length;
        for (int slot : slots) {
            slotBusy[slot] = true;
        }
        requested.addAndGet(asked);
        roundsInFlight.incrementAndGet();
        long sent = System.currentTimeMillis();
        CompletableFuture<PollResult> round;
        try {
            round = consumer.pollAsync(slots, perSlot);
        }
        catch (RuntimeException ex) {
            round = CompletableFuture.failedFuture(ex);
        }
        round.whenComplete((result, error) -> {
            long received = System.currentTimeMillis();
            if (result != null) {
                outstanding.addAll(result.deliveries());
                unhandled.addAndGet(result.deliveries().size());
                queue.addAll(result.deliveries());
            }
            requested.addAndGet(-asked);
            arrivals.add(new Round(slots, sent, received, result, error));
            roundsInFlight.decrementAndGet();
            if (plannedWake.get() != 0) {
                LockSupport.unpark(poller);
            }
        });
    }

    /** Takes in the rounds that came back: slot hints and clock offset; a failed round's slots are polled again. */
    private void mergeArrivals() {
        long[] next = slotNextDue;
        RuntimeException failure = null;
        Round round;
        while ((round = arrivals.poll()) != null) {
            for (int slot : round.slots()) {
                slotBusy[slot] = false;
            }
            PollResult result = round.result();
            if (result == null) {
                for (int slot : round.slots()) {
                    next[slot] = 0; // unknown: poll it again (after the error pause)
                }
                Throwable error = round.error() instanceof java.util.concurrent.CompletionException
                        && round.error().getCause() != null ? round.error().getCause() : round.error();
                failure = error instanceof RuntimeException runtime ? runtime
                        : new IllegalStateException(error.toString(), error);
                continue;
            }
            if (result.redisNow() >= 0) {
                updateClockOffset(result.redisNow() - round.receivedMillis(), result.redisNow() - round.sentMillis());
            }
            for (int i = 0; i < result.slots().length; i++) {
                next[result.slots()[i]] = result.slotNextDue()[i];
            }
        }
        if (!deferredWakes.isEmpty()) {
            List<long[]> ready = new ArrayList<>(deferredWakes);
            deferredWakes.clear();
            arrivals.clear();
            ready.forEach(this::applyWake);
        }
        if (failure != null) {
            throw failure;
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
            // a busy slot's hint is stale; its round coming back wakes the poller
            if (!slotBusy[i] && next[i] >= 0 && next[i] < earliest) {
                earliest = next[i];
            }
        }
        return earliest == Long.MAX_VALUE ? earliest : earliest - clockOffset;
    }

    /**
     * Sleeps until {@code wakeAtMillis}, a wake-up announcement, or (when {@code full}) room in the buffer. Others
     * unpark the poller only while {@link #plannedWake} is set: an unpark while it waits for a pop's reply would
     * only wake it for nothing (measured: a few % of a consuming JVM in context switches).
     */
    private void park(long wakeAtMillis, boolean full) {
        plannedWake.set(wakeAtMillis);
        long now = System.currentTimeMillis();
        // an announcement, or a handler making room, after the last look would otherwise wait for this sleep to end
        if (wakeAtMillis > now && !stopping && wakeEvents.isEmpty() && arrivals.isEmpty()
                && !(full && room() >= roundSize && roundsInFlight.get() < MAX_ROUNDS)) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.min(wakeAtMillis - now, 60_000)));
        }
        plannedWake.set(0);
    }

    /**
     * A wake-up announcement: a slot got a new first message due at {@code due} (Redis clock). Queued and merged by
     * the poller itself, so a poll in progress cannot overwrite it with an older view of the slot.
     */
    private void wake(int slot, long due) {
        wakeEvents.add(new long[] {slot, due});
        long planned = plannedWake.get();
        if (planned != 0 && due - clockOffset < planned) {
            LockSupport.unpark(poller);
        }
    }

    private void mergeWakeEvents() {
        long[] event;
        while ((event = wakeEvents.poll()) != null) {
            applyWake(event);
        }
    }

    private void applyWake(long[] event) {
        long[] next = slotNextDue;
        int slot = (int) event[0];
        if (slot < 0 || slot >= next.length) {
            return;
        }
        if (slotBusy[slot]) {
            deferredWakes.add(event); // the round under way may bring back a hint older than this announcement
        }
        else if (next[slot] < 0 || event[1] < next[slot]) {
            next[slot] = event[1];
        }
    }

    private void extendLeases() {
        if (outstanding.isEmpty()) {
            return;
        }
        int extended = consumer.extendAllAsync(new ArrayList<>(outstanding)).join();
        if (extended < outstanding.size()) {
            log.debug("Container '{}': {} of {} leases could not be extended (already expired)", id(),
                    outstanding.size() - extended, outstanding.size());
        }
    }

    /** Stop: give back what was fetched but not started, then keep running handlers' leases alive until they end. */
    private void drainOnStop() {
        long deadline = System.currentTimeMillis() + options.shutdownTimeout().toMillis();
        // rounds under way bring deliveries that must be given back too
        while (roundsInFlight.get() > 0 && System.currentTimeMillis() < deadline) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
        }
        List<Delivery> unstarted = new ArrayList<>();
        queue.drainTo(unstarted);
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
                try {
                    extendLeases();
                }
                catch (RuntimeException ex) {
                    log.debug("Container '{}': lease extension failed during shutdown", id(), ex);
                }
                nextExtension = System.currentTimeMillis() + extendEveryMillis;
            }
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.min(20, extendEveryMillis)));
        }
        if (!outstanding.isEmpty()) {
            log.warn("Container '{}' stopped with {} handlers still running after {}; their messages will be"
                    + " redelivered when their leases expire", id(), outstanding.size(), options.shutdownTimeout());
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
        unhandled.decrementAndGet();
        wakePollerIfRoom();
        // the ack goes out batched; the handler thread moves on, the lease stays extended until it is written
        settled.whenComplete((v, ex) -> {
            if (ex != null) {
                // settling failed (Redis unreachable): the lease expires and the message is redelivered
                log.warn("Container '{}' could not settle {}; it will be redelivered after its lease", id(),
                        delivery, ex);
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
