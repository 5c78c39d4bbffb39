package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Where a message (identified by its body) is. One body can be in more than one place at once: waiting while an
 * earlier copy of it is in flight (a duplicate sent meanwhile), or dead while a new copy waits.
 *
 * @param topic          topic name
 * @param slot           the slot its body routes to
 * @param body           the serialized body (its identity)
 * @param waitingScore   its score while it waits in the store (due time in epoch ms, or priority), else null
 * @param inFlight       a delivery of it is under way (leased to a consumer, or taken by an ORDERLY owner)
 * @param retryAt        when its next attempt is due after a failure (Redis clock), else null
 * @param failedAttempts failed attempts of the live (not dead) message so far
 * @param diedAt         when it moved to the dead queue, else null
 * @param deadReason     the last error of the dead copy, else null
 * @param cancelled      it was cancelled while in flight: the current delivery is its last
 */
public record MessageStatus(String topic, int slot, byte[] body, @Nullable Double waitingScore,
        boolean inFlight, @Nullable Instant retryAt, int failedAttempts, @Nullable Instant diedAt,
        @Nullable String deadReason, boolean cancelled) {

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
