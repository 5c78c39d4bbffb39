package io.rmq.spring;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import io.rmq.producer.OutgoingMessage;
import org.jspecify.annotations.Nullable;

/**
 * A received message with its delivery details; declare {@code RmqMessage<T>} as the listener parameter to get them.
 *
 * @param topic      topic name
 * @param slot       the slot it came from
 * @param attempt    1 on the first delivery, n + 1 after n failed attempts
 * @param maxRetries the retries the listener allows after the first attempt: a failure of attempt
 *                   {@code maxRetries + 1} moves the message to the dead queue
 * @param score      its store score: due time in epoch ms (RANGE_MERGE, FIXED_TIME) or priority (PRIORITY)
 * @param payload    the body converted to {@code T}
 * @param body       the serialized payload as stored; the message's identity when it was sent without an id
 * @param id         the id it was sent with (its identity for merging), or null: its body is its identity
 * @param headers    the headers it was sent with (the latest send's, when sends merged), the trace context's
 *                   included; empty when none; unmodifiable
 */
public record RmqMessage<T>(String topic, int slot, int attempt, int maxRetries, double score, T payload, byte[] body,
        @Nullable String id, Map<String, String> headers) {

    public RmqMessage {
        headers = headers == null ? Map.of() : headers;
    }

    /**
     * A message without id and headers.
     *
     * @deprecated messages have an id and headers now: use the canonical constructor
     */
    @Deprecated(since = "0.1.0")
    public RmqMessage(String topic, int slot, int attempt, int maxRetries, double score, T payload, byte[] body) {
        this(topic, slot, attempt, maxRetries, score, payload, body, null, Map.of());
    }

    /** The value of header {@code name}, or null when the message has none of that name. */
    public @Nullable String header(String name) {
        return headers.get(name);
    }

    /**
     * The group RMQ stored with the message (header {@code rmq-group}): only for a message of an ORDERLY topic sent
     * with a group; null otherwise.
     */
    public @Nullable String group() {
        return headers.get(OutgoingMessage.GROUP_HEADER);
    }

    /** True when a failure of this attempt moves the message to the dead queue (no retries left). */
    public boolean lastAttempt() {
        return attempt > maxRetries;
    }

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
