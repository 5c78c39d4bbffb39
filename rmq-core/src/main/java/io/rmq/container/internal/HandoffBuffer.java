package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.internal.LeaseKeeper.Leased;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A CONCURRENT container's local buffer: what was fetched and not yet started, in the topic's taking order (highest
 * priority first; earliest due first: slots answer one by one, so the order across slots is kept here, not by the
 * arrival of their replies), and the count of what is not yet handled, which is the poller's room. One message at a
 * time ({@link SingleBuffer}) or one batch per pop of a slot ({@link BatchBuffer}).
 * <p>
 * Threads: hand-offs come from whichever thread ends a round (Lettuce's event loop, the deadline thread) and the final
 * drain at stop from the poller, both under {@link #lock}, so that nothing is queued after the drain: what arrives
 * later goes straight back to the store. Handler threads take from the queue (a concurrent one) without the lock;
 * {@link #unhandled} is atomic.
 * <p>
 * A hand-off counts as unhandled first (the poller's room shrinks at once), and its entries are counted outstanding
 * by the {@link LeaseKeeper} before any handler can see them, so that no settlement ends uncounted.
 */
abstract class HandoffBuffer {

    /** Logs under the container's name ({@link ContainerLoggers}). */
    static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    final SlotConsumer consumer;
    final LeaseKeeper leases;
    final String id;
    final String topic;
    final RmqInstrumentation instrumentation;
    final boolean instrumented;
    /** The topic's taking order, of entries. */
    final Comparator<Leased> order;

    /**
     * Fetched and not yet handled (queued or in a handler). The poller fetches for these, not for all outstanding
     * messages: counting handled messages whose ack is still on its way would make the poller wait for acks while
     * the handlers ran dry.
     */
    private final AtomicInteger unhandled = new AtomicInteger();
    /** Guards handing deliveries to the queue against the final drain at stop. */
    private final Object lock = new Object();
    /** Under {@link #lock}: the final drain at stop has run. */
    private boolean drained;

    HandoffBuffer(SlotConsumer consumer, LeaseKeeper leases, String id) {
        this.consumer = consumer;
        this.leases = leases;
        this.id = id;
        this.topic = consumer.topic().name();
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
        Comparator<Delivery> byDelivery = takingOrder(consumer.topic().type());
        this.order = Comparator.comparing((Leased l) -> l.delivery, byDelivery);
    }

    /** The order in which the topic hands out messages: highest priority first, or earliest due time first. */
    private static Comparator<Delivery> takingOrder(TopicType type) {
        Comparator<Delivery> byScore = Comparator.comparingDouble(Delivery::score);
        return type == TopicType.PRIORITY ? byScore.reversed() : byScore;
    }

    /** Queues {@code bestFirst} (one hand-off, sorted) for the handlers. Under {@link #lock}. */
    abstract void queue(List<Leased> bestFirst);

    /** Moves everything queued into {@code into} (stop). Under {@link #lock}. */
    abstract void drainQueued(List<Leased> into);

    /**
     * Adds up to {@code max} of the deliveries queued now (fetched, no handler started yet) to {@code into}, without
     * taking them: a copy the queue makes under its own lock, for the instance's report (any thread).
     */
    abstract void queuedNow(List<Delivery> into, int max);

    /** A new run: hand-offs are queued again. Before the poller starts. */
    void start() {
        synchronized (lock) {
            drained = false;
        }
    }

    /** Fetched and not yet handled: queued, or in a handler that has not returned. */
    final int unhandled() {
        return unhandled.get();
    }

    /** One delivery was handled (its handler returned) or given back. */
    final void handled() {
        unhandled.decrementAndGet();
    }

    /** {@code count} deliveries were handled or given back. */
    final void handled(int count) {
        unhandled.addAndGet(-count);
    }

    /** Hands leased deliveries to the handlers, or back to the store when the container has already drained. */
    final void deliver(List<Delivery> deliveries, boolean late) {
        if (deliveries.isEmpty()) {
            return;
        }
        synchronized (lock) {
            if (!drained) {
                unhandled.addAndGet(deliveries.size()); // first: the room shrinks at once
                List<Leased> bestFirst = new ArrayList<>(deliveries.size());
                for (Delivery delivery : deliveries) {
                    bestFirst.add(new Leased(delivery));
                }
                if (bestFirst.size() > 1) {
                    // a handler waiting on the queue takes what is there when the first one lands
                    bestFirst.sort(order);
                }
                leases.handedOff(bestFirst); // counted outstanding before any handler can settle one
                queue(bestFirst);
                if (late) {
                    log.debug("Container '{}': a pop answered after its timeout; its {} deliveries are handled",
                            id, deliveries.size());
                }
                return;
            }
        }
        if (instrumented) {
            instrumentation.handedBack(id, topic, deliveries.size());
        }
        consumer.releaseAsync(deliveries).whenComplete((released, ex) -> log.debug(
                "Container '{}' had stopped when {} deliveries arrived; released {}", id, deliveries.size(),
                released, ex));
    }

    /**
     * Stop (poller thread): from now on hand-offs go back to the store; what is queued is given back at once (no
     * attempt counted) and its settlement ends. Returns how many the store took back.
     */
    final int giveBackAtStop() {
        List<Leased> unstartedEntries = new ArrayList<>();
        synchronized (lock) {
            drained = true;
            drainQueued(unstartedEntries);
        }
        if (unstartedEntries.isEmpty()) {
            return 0;
        }
        List<Delivery> unstarted = LeaseKeeper.deliveriesOf(unstartedEntries);
        unhandled.addAndGet(-unstarted.size());
        if (instrumented) {
            instrumentation.handedBack(id, topic, unstarted.size());
        }
        int released = 0;
        try {
            released = consumer.release(unstarted);
            log.debug("Container '{}' returned {} unstarted messages to the store", id, released);
        }
        catch (RuntimeException ex) {
            log.warn("Container '{}' could not return {} unstarted messages; their leases will expire and they"
                    + " will be redelivered", id, unstarted.size(), ex);
        }
        leases.settlementsEnded(unstartedEntries);
        return released;
    }
}
