package io.rmq.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.RmqInvalidArgumentException;

/**
 * Sends messages: validates them, serializes bodies canonically, routes each to its slot and writes it with the merge
 * rule of its topic type. Get it from {@link io.rmq.Rmq#producer()}. Thread-safe.
 * <p>
 * Validation errors ({@link RmqInvalidArgumentException}, naming field, value and rule) are thrown at once, with
 * nothing written; Redis failures are thrown by the waiting methods and complete the futures of the others
 * exceptionally.
 */
public interface RmqProducer {

    /** A RANGE_MERGE send: due {@code timeRange} from the first send; a waiting duplicate keeps its due time. */
    SendResult sendRangeMerge(String topic, Object body, Duration timeRange);

    /** A PRIORITY send; a waiting duplicate takes this priority (docs/messages.md). */
    SendResult sendPriority(String topic, Object body, long priority);

    /** A FIXED_TIME send: due at {@code fixedTime}; a waiting duplicate takes the latest time. */
    SendResult sendFixedTime(String topic, Object body, Instant fixedTime);

    /** Sends {@code message} and waits for Redis's answer. */
    SendResult send(OutgoingMessage message);

    /** Sends {@code message}; the future completes with Redis's answer. */
    CompletableFuture<SendResult> sendAsync(OutgoingMessage message);

    /** Sends {@code messages} together and waits; every message is validated before anything is written. */
    BatchResult sendBatch(Collection<OutgoingMessage> messages);

    /**
     * Sends {@code messages} together, grouped by slot; every message is validated before anything is written (a bad
     * one is thrown at once).
     */
    CompletableFuture<BatchResult> sendBatchAsync(Collection<OutgoingMessage> messages);

    /**
     * Checks a message as sending it would (topic defined, type, body, id and header sizes) and writes nothing: throws
     * the {@link RmqInvalidArgumentException} the send would throw. For callers that send later and want bad input
     * refused when it is given (RMQ's Spring layer holds the sends made inside a transaction until it commits).
     *
     * @return the slot the message goes to
     */
    int validate(OutgoingMessage message);
}
