package io.rmq.consumer;

import org.jspecify.annotations.Nullable;

/**
 * Why a message died, as dead-letter forwarding tells the dead-letter topic (headers {@code rmq_dlt_*}).
 *
 * @param exception     the class name of what failed the last attempt (the root cause), or null when nothing was
 *                      thrown (e.g. an unreadable body found by the engine)
 * @param reason        the last failure's description, as the dead queue keeps it: body text only with
 *                      {@code rmq.log-bodies}
 * @param attempts      the attempts made, the last one included
 * @param failedAtMillis when the last attempt failed: epoch ms of Redis's clock (the clock of due times), as the
 *                      consumer estimates it from its pop's reply; the engine's forwarder sends the dead queue's
 *                      died-at in its place ({@code rmq_dlt_failed_at})
 */
public record DeadLetterStory(@Nullable String exception, String reason, int attempts, long failedAtMillis) {
}
