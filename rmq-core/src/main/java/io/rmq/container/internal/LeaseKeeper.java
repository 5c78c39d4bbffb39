package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the leases of what a {@link RmqListenerContainer} fetched alive until each delivery's settlement ends.
 * Threads: the container's poller owns {@link #leased}, its compaction bound and the per-slot extensions
 * ({@link #takeIn}, {@link #extend}); {@link #outstanding} is shared and atomic; hand-offs arrive from whichever
 * thread delivers a pop's reply (Lettuce's event loop, the poller) through a concurrent queue; settlements end on
 * handler threads, on Lettuce's event loop and, for what is given back at stop, on the poller ({@link #settled},
 * {@link #settlementsEnded}).
 *
 * <h2>Invariants</h2>
 * <ol>
 * <li>A fetched delivery counts in {@code outstanding} from its {@linkplain #handedOff hand-off} to the handlers until
 * its settlement ends (acked, failed, or the settle gave up), or until it is given back at stop: exactly one
 * decrement per delivery, by whichever ends it, which also marks its {@link Leased} entry settled. The poller alone
 * owns {@code leased}, the list whose unsettled entries it extends; each hand-off's entries reach it through
 * {@code arrived}, which the poller takes in on every pass and before every extension, so an outstanding delivery is
 * in {@code leased} by the next extension. Settled entries are dropped in bulk (no concurrent set changed per message
 * on the ack path); the list is at most a few buffers long.</li>
 * <li>A queued delivery's lease is extended like a running one's, so waiting in the container's local queue never
 * lets a lease expire while its node answers.</li>
 * <li>Extensions are sent without waiting, one call per slot, and a slot's next one waits for its last (bounded by
 * the Redis call timeout): a slot whose node does not answer holds back no other slot's leases.</li>
 * </ol>
 */
final class LeaseKeeper {

    /** Logs under the container's name ({@link ContainerLoggers}). */
    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    /**
     * A fetched delivery as the container tracks it. {@code settled} is set once, when its settlement has ended (by
     * the thread that ended it) or when it was given back at stop; from then on nothing extends its lease.
     */
    static final class Leased {

        final Delivery delivery;
        volatile boolean settled;

        Leased(Delivery delivery) {
            this.delivery = delivery;
        }
    }

    private final SlotConsumer consumer;
    /** The container's id, for the logs. */
    private final String id;
    /** The container's buffer capacity: {@link #leased} is compacted no more often than every four buffers. */
    private final int capacity;
    private final long extendEveryMillis;
    /** Called on the thread that ended a settlement, after the decrement (the container wakes its poller for room). */
    private final Runnable afterSettle;

    /** Fetched and not yet settled: queued, in a handler, or handled with its ack under way (invariant 1). */
    private final AtomicInteger outstanding = new AtomicInteger();
    /** What was handed to the handlers, one list per hand-off, until the poller adds it to {@link #leased}. */
    private final ConcurrentLinkedQueue<List<Leased>> arrived = new ConcurrentLinkedQueue<>();

    // ---------------------------------------------------------------- poller-owned

    /**
     * The list of fetched deliveries whose leases the poller extends: every outstanding one, and settled ones until
     * the next compaction.
     */
    private final ArrayList<Leased> leased = new ArrayList<>();
    /** {@link #leased} is compacted (settled entries dropped) when it grows past this. */
    private int compactAbove;
    /** Per slot, the lease extension under way (bounded); the slot's next one waits for it. */
    private CompletableFuture<?>[] extensions;

    LeaseKeeper(SlotConsumer consumer, String id, int capacity, long extendEveryMillis, Runnable afterSettle) {
        this.consumer = consumer;
        this.id = id;
        this.capacity = capacity;
        this.extendEveryMillis = extendEveryMillis;
        this.afterSettle = afterSettle;
    }

    /**
     * Begins a run of the container with no extension under way on any slot. Called before the poller starts (its
     * start publishes this to it).
     */
    void start(int slots) {
        extensions = new CompletableFuture<?>[slots];
        Arrays.fill(extensions, CompletableFuture.completedFuture(null));
    }

    /** Messages fetched and not yet settled (queued, being handled, or with their settle under way). */
    int outstanding() {
        return outstanding.get();
    }

    /**
     * {@code entries} (one hand-off's) go to the handlers: they count as outstanding from now, and the poller takes
     * them into its lease keeping. Called before the handlers can see them, so that no settlement ends uncounted.
     */
    void handedOff(List<Leased> entries) {
        outstanding.addAndGet(entries.size());
        arrived.add(entries);
    }

    /**
     * Adds what was handed to the handlers since the last pass to {@link #leased}, and drops its settled entries once
     * it has grown to twice what was left at the last compaction (and at least four buffers): the list stays a few
     * buffers long, and compacting costs a few list steps per delivery. Poller thread only.
     */
    void takeIn() {
        List<Leased> entries;
        while ((entries = arrived.poll()) != null) {
            leased.addAll(entries);
        }
        if (leased.size() > compactAbove) {
            leased.removeIf(entry -> entry.settled);
            compactAbove = Math.max(2 * leased.size(), 4 * capacity);
        }
    }

    /**
     * Sends one extension of every outstanding lease (those of queued deliveries too), without waiting for it
     * (invariant 3). Poller thread only.
     */
    void extend() {
        takeIn();
        if (outstanding.get() == 0) {
            return;
        }
        Map<Integer, List<Delivery>> bySlot = new HashMap<>();
        for (Leased entry : leased) {
            Delivery delivery = entry.delivery;
            if (!entry.settled && extensions[delivery.slot()].isDone()) {
                bySlot.computeIfAbsent(delivery.slot(), s -> new ArrayList<>()).add(delivery);
            }
        }
        bySlot.forEach((slot, ofSlot) -> {
            CompletableFuture<Integer> sent;
            try {
                sent = consumer.extendAllAsync(ofSlot); // bounded inside (RedisGateway.CALL_TIMEOUT_MILLIS)
            }
            catch (RuntimeException ex) {
                sent = CompletableFuture.failedFuture(ex);
            }
            extensions[slot] = sent.whenComplete((extended, error) -> {
                if (error != null) {
                    log.warn("Container '{}': extending {} leases on slot {} failed; they are extended again in {} ms:"
                            + " {}", id, ofSlot.size(), slot, extendEveryMillis, String.valueOf(error));
                }
                else if (extended < ofSlot.size()) {
                    log.debug("Container '{}': {} of {} leases could not be extended (already settled or expired)",
                            id, ofSlot.size() - extended, ofSlot.size());
                }
            });
        });
    }

    /** The settlement of {@code entry} has ended ({@code error} null when its outcome is written to Redis). */
    void settled(Leased entry, Throwable error) {
        entry.settled = true;
        outstanding.decrementAndGet(); // before the log: a log that throws must not leave it outstanding
        if (error != null) {
            // settling failed (Redis unreachable): the lease expires and the message is redelivered
            log.warn("Container '{}' could not settle {}; it will be redelivered after its lease: {}", id,
                    entry.delivery, String.valueOf(error));
        }
        afterSettle.run();
    }

    /**
     * The settlements of {@code entries} have ended (invariant 1: marked settled, one decrement each), as
     * {@link #settled} does for one delivery on the per-message path.
     */
    void settlementsEnded(List<Leased> entries) {
        for (Leased entry : entries) {
            entry.settled = true;
        }
        outstanding.addAndGet(-entries.size());
        afterSettle.run();
    }

    static List<Delivery> deliveriesOf(List<Leased> entries) {
        List<Delivery> deliveries = new ArrayList<>(entries.size());
        for (Leased entry : entries) {
            deliveries.add(entry.delivery);
        }
        return deliveries;
    }
}
