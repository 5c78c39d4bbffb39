package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * A message in a dead queue.
 *
 * @param topic     topic name
 * @param slot      the slot it lives in
 * @param body      the payload: the stored body (its identity), or for a message sent with an id the payload of its
 *                  latest send (empty when none is stored); {@link #bodyText()} is its text (JSON shows both:
 *                  {@code body} in base64, exact, and {@code bodyText} readable)
 * @param diedAt    when it was moved to the dead queue (Redis clock)
 * @param attempts  failed attempts it had
 * @param priority  its priority (PRIORITY topics), else null
 * @param lastError the error of its last attempt
 * @param id        the id it was sent with (what requeue and delete name), or null: its body is its identity
 * @param headers   its headers (the trace context's included), in the order they were sent; empty when none
 */
@JsonIgnoreProperties(value = "bodyText", allowGetters = true)
public record DeadMessage(String topic, int slot, byte[] body, Instant diedAt, int attempts, @Nullable Long priority,
        String lastError, @Nullable String id, Map<String, String> headers) {

    public DeadMessage {
        headers = Views.headers(headers);
    }

    /** A message without id or headers. */
    public DeadMessage(String topic, int slot, byte[] body, Instant diedAt, int attempts, @Nullable Long priority,
            String lastError) {
        this(topic, slot, body, diedAt, attempts, priority, lastError, null, Map.of());
    }

    /** The body as UTF-8 text (what RMQ's JSON codec wrote). */
    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** Names this message for the admin's operations ({@link RmqAdmin#requeueDead(MessageRef)}, ...). */
    public MessageRef ref() {
        return MessageRef.shown(topic, slot, id, body, headers);
    }

    /** The body as text, for people and JSON (a {@code bodyText} property beside the base64 {@code body}). */
    @JsonProperty("bodyText")
    public String bodyText() {
        return bodyAsString();
    }
}
