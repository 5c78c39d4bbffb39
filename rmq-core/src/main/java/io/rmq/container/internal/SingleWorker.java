package io.rmq.container.internal;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.internal.LeaseKeeper.Leased;
import io.rmq.observe.RmqInstrumentation.HandleScope;

/**
 * A handler thread's loop for a {@link MessageHandler}: takes a few entries at a time from the {@link SingleBuffer}
 * and handles and settles each. Threads: runs on every handler thread; what a thread took lives in its own list.
 */
final class SingleWorker extends HandlerWorker {

    /** The most messages a handler thread takes from the queue at once (a fair share of what is queued). */
    private static final int HANDLER_TAKE = 16;

    private final SingleBuffer buffer;
    private final MessageHandler<Object> handler;
    private final int concurrency;
    /** Each running handler thread's view of what it took and has not started, for the instance's report. */
    private final java.util.Set<TakenView> takenViews = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * What one handler thread took from the queue and has not started yet, as other threads may read it: written by
     * that thread only ({@code next} before {@code entries}, so that a reader who sees an array sees an index of that
     * array's round), read by the heartbeat for the instance's report. One volatile write per message.
     */
    private static final class TakenView {
        private static final Leased[] NONE = new Leased[0];
        volatile Leased[] entries = NONE;
        /** The index in {@link #entries} of the first entry not started. */
        volatile int next;
    }

    SingleWorker(SingleBuffer buffer, MessageHandler<Object> handler, int concurrency, SlotConsumer consumer,
            Type payloadType, RunFlags flags, RedisClock clock, LeaseKeeper leases, Runnable wakePoller, String id) {
        super(consumer, payloadType, flags, clock, leases, wakePoller, id);
        this.buffer = buffer;
        this.handler = handler;
        this.concurrency = concurrency;
    }

    @Override
    public void run() {
        // what this thread took and has not started: null where started (handle() then ends it, whatever it throws)
        List<Leased> taken = new ArrayList<>(HANDLER_TAKE);
        TakenView view = new TakenView();
        takenViews.add(view);
        try {
            for (Leased first = next(buffer.queue); first != null; first = next(buffer.queue)) {
                // take a few more without blocking: one wake-up per few messages, not one per message (on a small
                // box the thread hand-offs cost more than a no-op handler)
                taken.add(first);
                try {
                    buffer.queue.drainTo(taken,
                            Math.min(HANDLER_TAKE, Math.max(0, buffer.queue.size() / concurrency)) - 1);
                    if (taken.size() > 1) {
                        view.next = 1;
                        view.entries = taken.toArray(TakenView.NONE);
                    }
                    for (int i = 0; i < taken.size(); i++) {
                        if (i > 0) {
                            view.next = i + 1;
                        }
                        handle(taken.set(i, null));
                    }
                }
                catch (Throwable ex) {
                    // the thread's top: a handler thread that ended here would leave the container a thread short
                    endHeld(taken, ex);
                    threadError(ex);
                }
                view.entries = TakenView.NONE;
                taken.clear();
            }
        }
        catch (Throwable dying) {
            endHeld(taken, dying); // nothing this thread took is held for ever; HandlerThreads replaces it
            throw dying;
        }
        finally {
            takenViews.remove(view);
        }
    }

    /**
     * Adds up to {@code max} of the deliveries the handler threads took and have not started to {@code into} (any
     * thread; a copy as of now, for the instance's report: a message about to start may show here or in its handler).
     */
    void takenNow(List<Delivery> into, int max) {
        for (TakenView view : takenViews) {
            Leased[] entries = view.entries;
            for (int i = view.next; i < entries.length && into.size() < max; i++) {
                if (!entries[i].settled) {
                    into.add(entries[i].delivery);
                }
            }
        }
    }

    /**
     * What the thread took and had not started ends as a failure: no longer unhandled nor outstanding, it is
     * redelivered after its lease.
     */
    private void endHeld(List<Leased> taken, Throwable error) {
        for (int i = 0; i < taken.size(); i++) {
            Leased entry = taken.set(i, null);
            if (entry != null) {
                buffer.handled();
                leases.settled(entry, error);
            }
        }
    }

    private void handle(Leased entry) {
        Delivery delivery = entry.delivery;
        if (lookAheadMillis > 0 && !holdUntilDue(delivery.score())) {
            buffer.handled();
            handBack(List.of(entry));
            return;
        }
        try {
            // right before the handler (conversion included), on its thread
            HandleScope scope = instrumented
                    ? instrumentation.handleStarted(id, delivery, consumer.latenessMillis(delivery))
                    : HandleScope.NONE;
            // the ack goes out batched; the handler thread moves on, the lease stays extended until it is written.
            // The settle always ends, in exactly one call of the callback: ack lanes and lease extensions are bounded
            // (RedisGateway.CALL_TIMEOUT_MILLIS), nacks are synchronous with a deadline. A callback, not a future:
            // one stage less per message on the event loop.
            consumer.handle(delivery, payloadType, handler, scope, error -> leases.settled(entry, error));
        }
        catch (RuntimeException ex) {
            leases.settled(entry, ex); // handle threw: it calls no callback
        }
        catch (Throwable ex) {
            // an Error from the instrumentation or the settlement: the delivery must not stay outstanding (its lease
            // extended for ever); released from the lease keeping (first: the log may fail too), it is redelivered
            // when its lease expires
            leases.settled(entry, ex);
            threadError(ex);
        }
        finally {
            buffer.handled();
        }
        wakePoller.run();
    }
}
