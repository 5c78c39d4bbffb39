package io.rmq.producer.internal;

import java.util.concurrent.CompletableFuture;

import io.rmq.core.internal.Seam;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.RmqProducer;
import io.rmq.producer.SendResult;

/**
 * Sends of messages that Redis already holds (a dead message forwarded to its dead-letter topic): written as any send,
 * but not checked against this producer's size limits (body, id, headers). Those limits were applied when the message
 * was first sent, perhaps by an instance configured otherwise; a message RMQ stored must never be refused on its way
 * on. {@link RmqProducer} registers the access in {@link #SEAM} when it is initialized, so the method stays off its
 * public API. Stateless.
 */
public final class StoredSends {

    /** What {@link RmqProducer} registers. */
    @FunctionalInterface
    public interface Access {

        CompletableFuture<SendResult> send(RmqProducer producer, OutgoingMessage message);
    }

    public static final Seam<Access> SEAM = new Seam<>(RmqProducer.class);

    private StoredSends() {
    }

    /** Sends {@code message} with {@code producer}, without its size limits; other validation as any send. */
    public static CompletableFuture<SendResult> send(RmqProducer producer, OutgoingMessage message) {
        return SEAM.get().send(producer, message);
    }
}
