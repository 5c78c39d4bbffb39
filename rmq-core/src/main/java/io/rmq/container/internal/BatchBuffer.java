package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.PriorityBlockingQueue;

import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.internal.LeaseKeeper.Leased;

/**
 * The buffer of a container in batch mode: what one pop of one slot brought is queued as one batch (at most
 * {@code batchSize}, in taking order), and batches are ordered by their first delivery. Threads: as
 * {@link HandoffBuffer}; {@link BatchWorker}s take from {@link #batches}.
 */
final class BatchBuffer extends HandoffBuffer {

    final PriorityBlockingQueue<List<Leased>> batches;
    private final int batchSize;

    BatchBuffer(SlotConsumer consumer, LeaseKeeper leases, String id) {
        super(consumer, leases, id);
        this.batches = new PriorityBlockingQueue<>(16, Comparator.comparing((List<Leased> batch) -> batch.get(0),
                order));
        this.batchSize = consumer.settings().batchSize();
    }

    /**
     * Queues what arrived as batches: the deliveries of each slot together (a round holds at most one pop per slot,
     * so each batch is what one pop of one slot brought), at most {@code batchSize} each, in taking order.
     */
    @Override
    void queue(List<Leased> bestFirst) {
        Map<Integer, List<Leased>> bySlot = new LinkedHashMap<>();
        for (Leased entry : bestFirst) {
            bySlot.computeIfAbsent(entry.delivery.slot(), s -> new ArrayList<>()).add(entry);
        }
        for (List<Leased> ofSlot : bySlot.values()) {
            for (int from = 0; from < ofSlot.size(); from += batchSize) {
                batches.add(new ArrayList<>(ofSlot.subList(from, Math.min(ofSlot.size(), from + batchSize))));
            }
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    void queuedNow(List<io.rmq.consumer.Delivery> into, int max) {
        for (Object batch : batches.toArray()) {
            for (Leased entry : (List<Leased>) batch) {
                if (into.size() >= max) {
                    return;
                }
                if (!entry.settled) {
                    into.add(entry.delivery);
                }
            }
        }
    }

    @Override
    void drainQueued(List<Leased> into) {
        List<List<Leased>> left = new ArrayList<>();
        batches.drainTo(left);
        left.forEach(into::addAll);
    }
}
