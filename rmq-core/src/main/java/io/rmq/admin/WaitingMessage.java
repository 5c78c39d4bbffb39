package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A message waiting in a topic's store, as {@code browse} lists it.
 *
 * @param topic          topic name
 * @param slot           its slot
 * @param body           the payload: the serialized body (its identity), or for a message sent with an id the payload
 *                       of its latest send (empty when none is stored)
 * @param score          due time in epoch ms (RANGE_MERGE, FIXED_TIME) or priority (PRIORITY)
 * @param failedAttempts failed attempts so far (above 0: it waits for a retry)
 * @param id             the id it was sent with, or null: its body is its identity
 * @param headers        its headers (the trace context's included), in the order they were sent; empty when none
 */
public record WaitingMessage(String topic, int slot, byte[] body, double score, int failedAttempts,
        @Nullable String id, Map<String, String> headers) {

    public WaitingMessage {
        headers = Views.headers(headers);
    }

    /** A message without id or headers. */
    public WaitingMessage(String topic, int slot, byte[] body, double score, int failedAttempts) {
        this(topic, slot, body, score, failedAttempts, null, Map.of());
    }

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** Names this message for the admin's operations ({@link RmqAdmin#cancel}, {@link RmqAdmin#runNow}, ...). */
    public MessageRef ref() {
        return MessageRef.shown(topic, slot, id, body, headers);
    }
}
