package io.rmq.consumer.internal;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.BooleanSupplier;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailedMessage;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.FailurePolicy;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqBatchFailure;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.SlotConsumer.Outcome;
import io.rmq.core.BodyCodec;
import io.rmq.core.RmqPayloadMismatchException;
import org.jspecify.annotations.Nullable;

/**
 * Converts a delivery's body and calls the user's handler, and decides what becomes of a failure (unreadable body →
 * dead; otherwise the error handler, then the standard rule); writes nothing to Redis ({@link Settlement} does). Not
 * API: {@link RmqConsumer}'s part, called on the handler threads (a container's workers, or whoever calls
 * {@code RmqConsumer.handle}); it holds no mutable state.
 */
final class DeliveryHandler {

    /** Under RmqConsumer's name: that is the logger users configure and the README names. */
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqConsumer.class);

    private static final BooleanSupplier ALWAYS = () -> true;

    private final String topicName;
    private final ConsumerSettings settings;
    private final BodyCodec codec;
    /** How much of a body log lines and reasons show (0: none; bodies may hold personal data). */
    private final int logBodyChars;

    DeliveryHandler(String topicName, ConsumerSettings settings, BodyCodec codec, int logBodyChars) {
        this.topicName = topicName;
        this.settings = settings;
        this.codec = codec;
        this.logBodyChars = logBodyChars;
    }

    /** Resolves the conversion to {@code payloadType} ahead of the first message (see {@link BodyCodec#prepare}). */
    void prepare(Type payloadType) {
        codec.prepare(payloadType);
    }

    /** Converts and handles one delivery, deciding a failure; see {@link SlotConsumer#handle}. */
    <T> Outcome invoke(Delivery delivery, Type payloadType, MessageHandler<T> handler) {
        return invoke(delivery, payloadType, handler, ALWAYS);
    }

    /** See {@link SlotConsumer#invoke}: null when {@code mayStart} says no once the body is converted. */
    <T> @Nullable Outcome invoke(Delivery delivery, Type payloadType, MessageHandler<T> handler,
            BooleanSupplier mayStart) {
        T payload;
        try {
            payload = codec.decode(delivery.body(), payloadType);
        }
        catch (RuntimeException ex) {
            return unreadable(delivery, payloadType, ex);
        }
        if (!mayStart.getAsBoolean()) {
            return null;
        }
        try {
            handler.handle(payload, delivery);
            return Outcome.OK;
        }
        catch (Exception | Error ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return new Outcome(Reasons.describe(ex), false, ex, decide(delivery, payload, ex));
        }
    }

    /**
     * Converts a batch and hands what could be read to {@code handler} (not called when nothing could); returns, per
     * delivery (same order), what became of it (see {@link SlotConsumer#handleBatchAsync}).
     */
    <T> Outcome[] invokeBatch(List<Delivery> deliveries, Type payloadType, BatchMessageHandler<T> handler) {
        int size = deliveries.size();
        Outcome[] outcomes = new Outcome[size];
        List<T> payloads = new ArrayList<>(size);
        List<Delivery> readable = new ArrayList<>(size);
        int[] positions = new int[size]; // index in what the handler gets -> index in the batch
        for (int i = 0; i < size; i++) {
            Delivery delivery = deliveries.get(i);
            try {
                payloads.add(codec.decode(delivery.body(), payloadType));
                positions[readable.size()] = i;
                readable.add(delivery);
            }
            catch (RuntimeException ex) {
                outcomes[i] = unreadable(delivery, payloadType, ex);
            }
        }
        if (!readable.isEmpty()) {
            callBatch(handler, payloads, readable, positions, outcomes);
        }
        return outcomes;
    }

    /** Calls a batch handler and records, per delivery, what it made of it. */
    private <T> void callBatch(BatchMessageHandler<T> handler, List<T> payloads, List<Delivery> readable,
            int[] positions, Outcome[] outcomes) {
        Throwable failure = null;
        try {
            handler.handle(Collections.unmodifiableList(payloads), Collections.unmodifiableList(readable));
        }
        catch (Exception | Error ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            failure = ex;
        }
        RmqBatchFailure partial = failure instanceof RmqBatchFailure batchFailure ? batchFailure : null;
        if (partial != null && (partial.failedIndexes().first() < 0
                || partial.failedIndexes().last() >= readable.size())) {
            log.error("A batch listener of topic '{}' threw an RmqBatchFailure naming indexes {} of a batch of {};"
                    + " failing the whole batch", topicName, partial.failedIndexes(), readable.size());
            partial = null;
        }
        for (int k = 0; k < readable.size(); k++) {
            Throwable error = partial != null
                    ? (partial.failedIndexes().contains(k) ? partial.causeOf(k) : null)
                    : failure;
            outcomes[positions[k]] = error == null ? Outcome.OK
                    : new Outcome(Reasons.describe(error), false, error,
                            decide(readable.get(k), payloads.get(k), error));
        }
    }

    private Outcome unreadable(Delivery delivery, Type payloadType, RuntimeException ex) {
        if (ex instanceof RmqPayloadMismatchException mismatch) {
            return new Outcome(Reasons.truncate(mismatch.reason(delivery.body(), logBodyChars)), true, ex,
                    FailureDecision.dead());
        }
        return new Outcome("unreadable message: cannot convert body to " + payloadType.getTypeName() + ": "
                + (logBodyChars > 0 ? Reasons.describe(ex) : Reasons.describeWithoutBody(ex)), true, ex,
                FailureDecision.dead());
    }

    private FailureDecision decide(Delivery delivery, Object payload, Throwable error) {
        FailurePolicy policy = settings.failures();
        boolean retryable = !policy.nonRetryable(error);
        FailureDecision decision = FailureDecision.standard();
        if (policy.errorHandler() != null) {
            try {
                decision = policy.errorHandler().handle(new FailedMessage(delivery, payload, error,
                        settings.retry().maxRetries(), retryable));
            }
            catch (RuntimeException ex) {
                log.error("The error handler of topic '{}' failed on {}; the standard decision applies", topicName,
                        delivery, ex);
            }
            if (decision == null) {
                decision = FailureDecision.standard();
            }
        }
        if (decision == FailureDecision.standard()) {
            decision = retryable ? FailureDecision.retry() : FailureDecision.dead();
        }
        return decision;
    }
}
