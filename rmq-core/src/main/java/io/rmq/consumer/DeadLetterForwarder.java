package io.rmq.consumer;

import java.util.concurrent.CompletableFuture;

/**
 * Sends the body of a message that just died on to a dead-letter topic, then removes it from the dead queue it died
 * in (in that order: a crash in between leaves it in the dead queue, never nowhere).
 */
@FunctionalInterface
public interface DeadLetterForwarder {

    CompletableFuture<Void> forward(Delivery delivery, String deadLetterTopic);
}
