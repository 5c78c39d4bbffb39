package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A message waiting for a retry after a failed attempt, as {@link RmqAdmin#retries} lists it.
 *
 * @param topic         topic name
 * @param slot          its slot
 * @param body          the payload: the serialized body (its identity), or for a message sent with an id the payload
 *                      of its latest send (empty when none is stored)
 * @param attempts      attempts made so far, all failed (the next one is {@code attempts + 1})
 * @param nextAttemptAt when its backoff ends and it is due again (Redis clock)
 * @param lastError     why its latest attempt failed (cut to 500 bytes), or null when that failure was recorded by an
 *                      engine that kept no reason for retries (before the slot's {@code errors} HASH existed)
 * @param failedAt      when its latest attempt failed (Redis clock), null with {@code lastError}
 * @param id            the id it was sent with, or null: its body is its identity
 * @param headers       its headers (the trace context's included), in the order they were sent; empty when none
 */
public record RetryingMessage(String topic, int slot, byte[] body, int attempts, Instant nextAttemptAt,
        @Nullable String lastError, @Nullable Instant failedAt, @Nullable String id, Map<String, String> headers) {

    public RetryingMessage {
        headers = Views.headers(headers);
    }

    /** The body as UTF-8 text (what RMQ's JSON codec wrote). */
    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** Names this message for the admin's operations ({@link RmqAdmin#cancel}, {@link RmqAdmin#runNow}, ...). */
    public MessageRef ref() {
        return MessageRef.shown(topic, slot, id, body, headers);
    }
}
