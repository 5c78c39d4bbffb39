package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Where a message (identified by its body, or by the id it was sent with) is. One message can be in more than one
 * place at once: waiting while an earlier copy of it is in flight (a duplicate sent meanwhile), or dead while a new
 * copy waits.
 *
 * @param topic          topic name
 * @param slot           the slot it routes to
 * @param body           the payload: the serialized body (its identity), or for a message sent with an id the payload
 *                       of its latest send (empty when none is stored, e.g. the message is not there)
 * @param waitingScore   its score while it waits in the store (due time in epoch ms, or priority), else null
 * @param inFlight       a delivery of it is under way (leased to a consumer, or taken by an ORDERLY owner)
 * @param retryAt        when its next attempt is due after a failure (Redis clock), else null
 * @param failedAttempts failed attempts of the live (not dead) message so far
 * @param diedAt         when it moved to the dead queue, else null
 * @param deadReason     the last error of the dead copy, else null
 * @param cancelled      it was cancelled while in flight: the current delivery is its last
 * @param id             the id looked for, or null: looked for by body
 * @param headers        its headers as its latest send stored them (the trace context's included); empty when none
 */
public record MessageStatus(String topic, int slot, byte[] body, @Nullable Double waitingScore,
        boolean inFlight, @Nullable Instant retryAt, int failedAttempts, @Nullable Instant diedAt,
        @Nullable String deadReason, boolean cancelled, @Nullable String id, Map<String, String> headers) {

    public MessageStatus {
        headers = Views.headers(headers);
    }

    /** A status of a message looked for by body, without headers. */
    public MessageStatus(String topic, int slot, byte[] body, @Nullable Double waitingScore, boolean inFlight,
            @Nullable Instant retryAt, int failedAttempts, @Nullable Instant diedAt, @Nullable String deadReason,
            boolean cancelled) {
        this(topic, slot, body, waitingScore, inFlight, retryAt, failedAttempts, diedAt, deadReason, cancelled, null,
                Map.of());
    }

    public boolean isWaiting() {
        return waitingScore != null;
    }

    /** Failed and waiting for its next attempt. */
    public boolean isRetrying() {
        return retryAt != null;
    }

    public boolean isDead() {
        return diedAt != null;
    }

    /** Waiting, retrying or in flight: it will still be (or is being) handled. */
    public boolean isPending() {
        return isWaiting() || isRetrying() || inFlight;
    }

    /** Anywhere at all, dead included. */
    public boolean exists() {
        return isPending() || isDead();
    }

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
