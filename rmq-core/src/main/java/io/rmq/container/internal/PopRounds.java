package io.rmq.container.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.consumer.PollResult;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.consumer.internal.TopicRateLimiter;
import io.rmq.container.internal.PollerEvents.TopologyChecked;
import io.rmq.core.RmqTimeoutException;
import io.rmq.core.internal.Timeouts;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RedisGateway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pops of a CONCURRENT container's poller: sends rounds (one pop per slot, pipelined, their replies handed over
 * together by a {@link Handoff}) and watches the pops under way. Threads: the poller thread sends and watches, and
 * owns {@link #nextTopologyCheck}; replies, errors and deadlines come on Lettuce's event loop and the deadline thread,
 * which touch only the atomic counters, the {@link Handoff} and the {@link Pop} (its {@link Pop#finish} posts the
 * poller's event).
 * <p>
 * No pop waits without a deadline ({@code commandTimeout}); a reply that comes after it still hands its deliveries
 * over. A pop without a reply for {@link #SLOW_POP_MILLIS} stops taking room in the buffer, so pops stuck on one node
 * never keep the other slots from being polled. On a cluster, a pop without a reply for {@link #STUCK_POP_MILLIS}
 * makes the client refresh its topology (about once a second) and every pop whose slot has moved is sent again, to
 * the new node: a failover costs the dead master's slots about the time until the replica is promoted, not the
 * command timeout.
 */
final class PopRounds {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    /** A pop without a reply for this long (a healthy one takes ms) stops taking room ({@link Pop#discount()}). */
    private static final long SLOW_POP_MILLIS = 200;
    /**
     * A cluster pop without a reply for this long may be waiting on a master that died: the poller then has the
     * client refresh its topology (at most every {@link #TOPOLOGY_CHECK_MILLIS}) and sends such pops again where
     * their slot has moved, instead of waiting for their timeout.
     */
    private static final long STUCK_POP_MILLIS = 1000;
    private static final long TOPOLOGY_CHECK_MILLIS = 1000;

    private final SlotConsumer consumer;
    private final String id;
    private final String topic;
    private final PollerEvents events;
    /** A pop's end, posted to the poller as one event. */
    private final Pop.Ended popEnded;
    private final SlotSchedule schedule;
    private final HandoffBuffer buffer;
    /** The topic's cluster-wide rate limit, or null. */
    private final TopicRateLimiter limiter;
    private final long commandTimeoutMillis;
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;
    /** Whether the instrumentation is {@link RmqInstrumentation#timed()}: pops are timed and reported as operations. */
    private final boolean timed;

    /** Messages asked for by pops not yet finished: they take room in the buffer before they arrive. */
    private final AtomicInteger requested = new AtomicInteger();
    /** Pops whose reply has not come yet (a timed-out pop still counts until its late reply or error). */
    private final AtomicInteger popsUnderWay = new AtomicInteger();
    /** Local ms before which the poller asks for no topology refresh (cluster only). Poller thread. */
    private long nextTopologyCheck;

    PopRounds(SlotConsumer consumer, String id, PollerEvents events, SlotSchedule schedule, HandoffBuffer buffer,
            TopicRateLimiter limiter, long commandTimeoutMillis) {
        this.consumer = consumer;
        this.id = id;
        this.topic = consumer.topic().name();
        this.events = events;
        this.popEnded = (pop, result, error) -> events.post(new PollerEvents.PopFinished(pop, result, error));
        this.schedule = schedule;
        this.buffer = buffer;
        this.limiter = limiter;
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
        this.timed = instrumentation.timed(); // NONE is not timed
    }

    /** A new run; before the poller starts. */
    void reset() {
        nextTopologyCheck = 0;
    }

    /** Messages asked for by pops not yet finished (or not yet discounted). */
    int requested() {
        return requested.get();
    }

    /** Pops whose reply has not come yet. */
    int underWay() {
        return popsUnderWay.get();
    }

    /**
     * Sends a round: one pop per slot, pipelined. The round's deliveries go to the buffer together ({@link Handoff});
     * a later reply (even one after its timeout) is handed over when it comes; each pop ends once, on its reply,
     * error or timeout ({@link Pop#finish}).
     */
    void send(int[] slots, int free) {
        int perSlot = limiter != null
                // asks for no more than the permits it holds; what it does not use goes back to the bucket
                ? Math.max(1, Math.min(consumer.settings().batchSize(), free / slots.length))
                : Math.max(1, Math.min(consumer.settings().batchSize(), (free + slots.length - 1) / slots.length));
        if (limiter != null && free > perSlot * slots.length) {
            limiter.giveBack(free - perSlot * slots.length);
        }
        long sent = System.currentTimeMillis();
        long sentNanos = timed ? System.nanoTime() : 0;
        Handoff round = new Handoff(buffer, slots.length);
        for (int slot : slots) {
            Pop pop = new Pop(slot, perSlot, sent, consumer.nodeOf(slot), requested, popEnded);
            schedule.sent(pop);
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
                        "polling slot " + slot + " of topic '" + topic + "': no reply from Redis within "
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

    /**
     * One slot's pop answered (or failed): {@code popped} / {@code popFailed} and, timed, {@code operation("receive")}.
     */
    private void reportPop(int slot, PollResult result, Throwable error, long sentNanos) {
        long nanos = timed ? System.nanoTime() - sentNanos : 0;
        Throwable failure = RedisGateway.unwrap(error);
        if (failure == null) {
            instrumentation.popped(id, topic, slot, result.deliveries().size(), nanos);
        }
        else {
            instrumentation.popFailed(id, topic, slot, failure);
        }
        if (timed) {
            instrumentation.operation("receive", topic, nanos, failure);
        }
    }

    /**
     * Pops without a reply for {@link #SLOW_POP_MILLIS} stop taking room in the buffer ({@link Pop#discount()}); on a
     * cluster, while a pop has had no reply for {@link #STUCK_POP_MILLIS}, the client refreshes its topology about
     * every {@link #TOPOLOGY_CHECK_MILLIS} (its end comes back as a {@link TopologyChecked} event). Returns when the
     * poller should look again (Long.MAX_VALUE: no pop under way will need it).
     */
    long checkSlow(long now) {
        long next = Long.MAX_VALUE;
        boolean stuckOnCluster = false;
        for (Pop pop : schedule.pops()) {
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
            consumer.refreshTopology().whenComplete((v, error) -> events.post(new TopologyChecked()));
        }
        return Math.min(next, nextTopologyCheck);
    }

    /** Ends every pop whose slot is now served by another node than the one it went to; they are sent again. */
    void resendMoved() {
        for (Pop pop : schedule.pops()) {
            if (pop == null || pop.node == null || pop.finished()) {
                continue;
            }
            String now = consumer.nodeOf(pop.slot);
            if (now != null && !now.equals(pop.node)) {
                log.info("RMQ listener container '{}': slot {} of topic '{}' moved to another cluster node (failover);"
                        + " polling it there", id, pop.slot, topic);
                pop.finish(null, new Pop.SlotMoved(pop.slot, pop.node, now));
            }
        }
    }

    /** Gives up every pop long past its deadline (a watchdog repair). */
    void abandonOld(long now) {
        for (Pop pop : schedule.pops()) {
            if (pop == null || now - pop.sentMillis <= 2 * commandTimeoutMillis) {
                continue;
            }
            if (pop.finished()) {
                schedule.forget(pop); // it ended but its event never reached the poller: end it here
            }
            else {
                pop.finish(null, new RmqTimeoutException("abandoned by the watchdog"));
            }
        }
    }
}
