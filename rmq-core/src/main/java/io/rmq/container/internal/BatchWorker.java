package io.rmq.container.internal;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.internal.LeaseKeeper.Leased;
import io.rmq.observe.RmqInstrumentation.HandleScope;

/**
 * A handler thread's loop in batch mode: takes one batch at a time from the {@link BatchBuffer}, hands it to the
 * {@link BatchMessageHandler} and settles it ({@link SlotConsumer#handleBatchAsync}). Its deliveries stop counting as
 * unhandled when the call returns and leave {@code outstanding} when their settlement ends. Instrumentation is per
 * delivery: {@code handleStarted} for each delivery of the batch (in order, right before the call; nested observation
 * scopes, the handler runs in the last one's), then its {@code handlerReturned} and {@code settled}, so metrics count
 * messages. Threads: runs on every handler thread; a batch lives on its thread's stack.
 */
final class BatchWorker extends HandlerWorker {

    private final BatchBuffer buffer;
    private final BatchMessageHandler<Object> batchHandler;

    BatchWorker(BatchBuffer buffer, BatchMessageHandler<Object> batchHandler, SlotConsumer consumer, Type payloadType,
            RunFlags flags, RedisClock clock, LeaseKeeper leases, Runnable wakePoller, String id) {
        super(consumer, payloadType, flags, clock, leases, wakePoller, id);
        this.buffer = buffer;
        this.batchHandler = batchHandler;
    }

    @Override
    public void run() {
        for (List<Leased> batch = next(buffer.batches); batch != null; batch = next(buffer.batches)) {
            try {
                handleBatch(batch); // ends the batch's settlement whatever it throws
            }
            catch (Throwable ex) {
                threadError(ex); // the thread's top, as in SingleWorker
            }
        }
    }

    /** Hands one batch to the batch handler and settles it; its settlement is under way before anything can throw. */
    private void handleBatch(List<Leased> entries) {
        List<Delivery> batch = LeaseKeeper.deliveriesOf(entries);
        double lastDue = Double.NEGATIVE_INFINITY;
        for (Delivery delivery : batch) {
            lastDue = Math.max(lastDue, delivery.score());
        }
        // a batch is handed over once its last message is due (none of them before its due time)
        if (lookAheadMillis > 0 && !holdUntilDue(lastDue)) {
            buffer.handled(batch.size());
            handBack(entries);
            return;
        }
        CompletableFuture<Void> settled;
        Throwable unexpected = null;
        try {
            List<HandleScope> scopes = new ArrayList<>(batch.size());
            for (Delivery delivery : batch) {
                scopes.add(instrumented
                        ? instrumentation.handleStarted(id, delivery, consumer.latenessMillis(delivery))
                        : HandleScope.NONE);
            }
            settled = consumer.handleBatchAsync(batch, payloadType, batchHandler, scopes);
        }
        catch (RuntimeException ex) {
            settled = CompletableFuture.failedFuture(ex);
        }
        catch (Throwable ex) {
            // as in SingleWorker: an Error must not leave the batch outstanding nor end the thread
            unexpected = ex;
            settled = CompletableFuture.failedFuture(ex);
        }
        finally {
            buffer.handled(batch.size());
        }
        wakePoller.run();
        settled.whenComplete((v, ex) -> {
            if (ex != null) {
                log.warn("Container '{}' could not settle a batch of {} on slot {}; what was not settled will be"
                        + " redelivered after its lease: {}", id, batch.size(), batch.get(0).slot(),
                        String.valueOf(ex));
            }
            leases.settlementsEnded(entries);
        });
        if (unexpected != null) {
            threadError(unexpected); // once the batch's settlement is under way: the log may fail too
        }
    }
}
