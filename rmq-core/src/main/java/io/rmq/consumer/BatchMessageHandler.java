package io.rmq.consumer;

import java.util.List;

/**
 * Handles a batch of converted payloads together: up to {@code batchSize} deliveries of <em>one slot</em>, taken by
 * one pop, in the topic's taking order. {@code payloads.get(i)} is the body of {@code deliveries.get(i)}.
 * <ul>
 * <li>Returning normally acknowledges every delivery of the batch (one pipelined call).</li>
 * <li>Throwing {@link RmqBatchFailure} fails only the deliveries at its {@linkplain RmqBatchFailure#failedIndexes()
 * indexes} (each retried or dead by the failure policy, the error handler included) and acknowledges the others.</li>
 * <li>Throwing anything else fails every delivery of the batch, each by the failure policy.</li>
 * </ul>
 * A body that cannot be converted to the payload type is not passed on: that delivery goes to the dead queue at once
 * (non-retryable, with the reason) and the handler gets the others (it is not called when none is left). Not
 * available to ORDERLY listeners (an ordered slot is handled one message after another).
 */
@FunctionalInterface
public interface BatchMessageHandler<T> {

    void handle(List<T> payloads, List<Delivery> deliveries) throws Exception;
}
