package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.internal.Timeouts;

/**
 * Smart batching per slot: single calls (one send, one ack) that arrive while a call to the same slot is under way
 * are collected and go out together as one multi-member script call when it returns. An idle slot sends at once
 * (no added latency); a busy one batches by itself, so one-at-a-time callers get batch throughput.
 * <p>
 * A lane is busy iff exactly one call of it is under way; the call ends that state on every path (reply, error,
 * or no reply within {@code timeoutMillis}), so one lost reply cannot hold the slot's later items back.
 *
 * @param <T> an item to write
 * @param <R> its per-item result
 */
public final class SlotBatcher<T, R> {

    private final int maxBatch;
    private final long timeoutMillis;
    private final BiFunction<SlotKeys, List<T>, CompletableFuture<List<R>>> call;
    private final Map<SlotKeys, Lane> lanes = new ConcurrentHashMap<>();

    /**
     * @param maxBatch      most items per call
     * @param timeoutMillis longest a call may go without a reply before its items fail with a timeout
     * @param call          writes a slot's items, returning one result per item in order
     */
    public SlotBatcher(int maxBatch, long timeoutMillis, BiFunction<SlotKeys, List<T>, CompletableFuture<List<R>>> call) {
        this.maxBatch = maxBatch;
        this.timeoutMillis = timeoutMillis;
        this.call = call;
    }

    public CompletableFuture<R> submit(SlotKeys slot, T item) {
        Lane lane = lanes.computeIfAbsent(slot, Lane::new);
        CompletableFuture<R> result = new CompletableFuture<>();
        lane.queue.add(new Pending<>(item, result));
        lane.drain();
        return result;
    }

    private record Pending<T, R>(T item, CompletableFuture<R> result) {
    }

    private final class Lane {

        final SlotKeys slot;
        final ConcurrentLinkedQueue<Pending<T, R>> queue = new ConcurrentLinkedQueue<>();
        final AtomicBoolean busy = new AtomicBoolean();

        Lane(SlotKeys slot) {
            this.slot = slot;
        }

        void drain() {
            while (!queue.isEmpty() && busy.compareAndSet(false, true)) {
                List<Pending<T, R>> batch = new ArrayList<>();
                Pending<T, R> next;
                while (batch.size() < maxBatch && (next = queue.poll()) != null) {
                    batch.add(next);
                }
                if (batch.isEmpty()) {
                    busy.set(false);
                    continue;
                }
                List<T> items = new ArrayList<>(batch.size());
                for (Pending<T, R> p : batch) {
                    items.add(p.item());
                }
                CompletableFuture<List<R>> sent;
                try {
                    sent = Timeouts.within(call.apply(slot, items), timeoutMillis,
                            () -> "a call of " + items.size() + " to slot " + slot.slot() + " of topic '" + slot.topic()
                                    + "'");
                }
                catch (RuntimeException ex) {
                    sent = CompletableFuture.failedFuture(ex);
                }
                sent.whenComplete((results, error) -> {
                    for (int i = 0; i < batch.size(); i++) {
                        if (error != null) {
                            batch.get(i).result().completeExceptionally(error);
                        }
                        else {
                            batch.get(i).result().complete(results.get(i));
                        }
                    }
                    busy.set(false);
                    drain();
                });
                return;
            }
        }
    }
}
