package io.rmq.container.internal;

import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.internal.LeaseKeeper.Leased;
import io.rmq.observe.RmqInstrumentation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The work loop of a CONCURRENT container's handler threads: take from the buffer, hold a look-ahead delivery until
 * it is due, handle, settle, hand back what is held at stop. One message at a time ({@link SingleWorker}) or one
 * batch ({@link BatchWorker}). One instance runs on every handler thread: it keeps no state of its own (what a thread
 * holds lives in its own stack).
 * <p>
 * A delivery a handler thread took ends, whatever is thrown where: its settlement ends (acked, failed, given back) and
 * it stops counting as unhandled, so it is never held for ever with its lease extended. A {@code Throwable} is caught
 * at the thread's top and logged once with the listener's id, and the thread goes on; should one still escape (the
 * log itself failing), what the thread held ends as a failure before it dies, and {@link HandlerThreads} replaces it.
 */
abstract class HandlerWorker implements Runnable {

    /** Logs under the container's name ({@link ContainerLoggers}). */
    static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    final SlotConsumer consumer;
    final Type payloadType;
    final RunFlags flags;
    final RedisClock clock;
    final LeaseKeeper leases;
    final Runnable wakePoller;
    final String id;
    final String topic;
    /**
     * {@link io.rmq.consumer.ConsumerSettings#lookAhead()} in ms on a time-ordered topic, else 0: pops take messages
     * due that much ahead, and a handler thread holds each until its due time ({@link #holdUntilDue}).
     */
    final long lookAheadMillis;
    /** The consumer's instrumentation; {@code instrumented} false for NONE (no clock reads, no scopes). */
    final RmqInstrumentation instrumentation;
    final boolean instrumented;

    /** {@code wakePoller}: after each handling, wakes the poller if the buffer has room for a round. */
    HandlerWorker(SlotConsumer consumer, Type payloadType, RunFlags flags, RedisClock clock, LeaseKeeper leases,
            Runnable wakePoller, String id) {
        this.consumer = consumer;
        this.payloadType = payloadType;
        this.flags = flags;
        this.clock = clock;
        this.leases = leases;
        this.wakePoller = wakePoller;
        this.id = id;
        this.topic = consumer.topic().name();
        this.lookAheadMillis = consumer.topic().type().isTimeOrdered() ? consumer.settings().lookAhead().toMillis()
                : 0;
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
    }

    /**
     * The next item of a handler thread's queue, waited for in steps of 50 ms; null once the container is stopping and
     * the queue is empty, or when the thread is interrupted: the handler thread then ends.
     */
    final <E> E next(BlockingQueue<E> from) {
        while (true) {
            E item;
            try {
                item = from.poll(50, TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException ex) {
                return null;
            }
            if (item != null || flags.stopping) {
                return item;
            }
        }
    }

    final void threadError(Throwable error) {
        log.error("RMQ listener container '{}' (topic '{}'): unexpected error on handler thread {}; the thread goes on",
                id, topic, Thread.currentThread().getName(), error);
    }

    /**
     * Look-ahead: parks the handler thread until {@code due} (Redis ms, by the clock offset estimate, which never
     * runs ahead of Redis's clock: see {@link RedisClock}), at most the look-ahead (the delivery is popped at most that
     * early; its lease is extended meanwhile, as every outstanding one). Returns false, at once, when the container
     * begins stopping or the thread is interrupted first: the caller hands the delivery back.
     */
    final boolean holdUntilDue(double due) {
        while (true) {
            long wait = (long) Math.ceil(due) - clock.offset() - System.currentTimeMillis();
            if (wait <= 0) {
                return true;
            }
            if (flags.stopping || Thread.currentThread().isInterrupted()) {
                return false;
            }
            // in short steps: stop() sets the flag before it interrupts anyone
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.min(wait, 20)));
        }
    }

    /**
     * Gives held deliveries back to the store (the container is stopping); they count as settled once released. The
     * release is under way before anything else can throw, so their settlement always ends.
     */
    final void handBack(List<Leased> entries) {
        List<Delivery> deliveries = LeaseKeeper.deliveriesOf(entries);
        CompletableFuture<Integer> released;
        try {
            released = consumer.releaseAsync(deliveries);
        }
        catch (RuntimeException ex) {
            released = CompletableFuture.failedFuture(ex);
        }
        released.whenComplete((count, ex) -> {
            log.debug("Container '{}' stopped while holding {} deliveries popped ahead of their due time; released {}",
                    id, deliveries.size(), count, ex);
            leases.settlementsEnded(entries);
        });
        if (instrumented) {
            instrumentation.handedBack(id, topic, deliveries.size());
        }
    }
}
