package io.rmq.consumer;

import java.util.concurrent.CompletableFuture;

/**
 * Sends a message that just died (its payload, id and headers) on to a dead-letter topic, then removes it from the dead queue it died
 * in (in that order: a crash in between leaves it in the dead queue, never nowhere).
 */
@FunctionalInterface
public interface DeadLetterForwarder {

    CompletableFuture<Void> forward(Delivery delivery, String deadLetterTopic);

    /**
     * As {@link #forward(Delivery, String)}, knowing why the message died; the engine's forwarder adds it to the
     * forwarded message as {@code rmq_dlt_*} headers.
     */
    default CompletableFuture<Void> forward(Delivery delivery, String deadLetterTopic, DeadLetterStory story) {
        return forward(delivery, deadLetterTopic);
    }
}
