package io.rmq.container.internal;

import java.util.List;
import java.util.concurrent.PriorityBlockingQueue;

import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.internal.LeaseKeeper.Leased;

/**
 * The buffer of a container that hands out one message at a time: a priority queue of entries in taking order.
 * Threads: as {@link HandoffBuffer}; {@link SingleWorker}s take from {@link #queue}.
 */
final class SingleBuffer extends HandoffBuffer {

    final PriorityBlockingQueue<Leased> queue;

    SingleBuffer(SlotConsumer consumer, LeaseKeeper leases, String id) {
        super(consumer, leases, id);
        this.queue = new PriorityBlockingQueue<>(64, order);
    }

    @Override
    void queue(List<Leased> bestFirst) {
        queue.addAll(bestFirst);
    }

    @Override
    void queuedNow(List<io.rmq.consumer.Delivery> into, int max) {
        for (Leased entry : queue.toArray(new Leased[0])) {
            if (into.size() >= max) {
                return;
            }
            if (!entry.settled) {
                into.add(entry.delivery);
            }
        }
    }

    @Override
    void drainQueued(List<Leased> into) {
        queue.drainTo(into);
    }
}
