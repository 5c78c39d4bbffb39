package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * A message in a dead queue.
 *
 * @param topic     topic name
 * @param slot      the slot it lives in
 * @param body      the stored body (its identity), as stored; {@link #bodyText()} is its text (JSON shows both:
 *                  {@code body} in base64, exact, and {@code bodyText} readable)
 * @param diedAt    when it was moved to the dead queue (Redis clock)
 * @param attempts  failed attempts it had
 * @param priority  its priority (PRIORITY topics), else null
 * @param lastError the error of its last attempt
 */
@JsonIgnoreProperties(value = "bodyText", allowGetters = true)
public record DeadMessage(String topic, int slot, byte[] body, Instant diedAt, int attempts, @Nullable Long priority,
        String lastError) {

    /** The body as UTF-8 text (what RMQ's JSON codec wrote). */
    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** The body as text, for people and JSON (a {@code bodyText} property beside the base64 {@code body}). */
    @JsonProperty("bodyText")
    public String bodyText() {
        return bodyAsString();
    }
}
