package io.rmq.consumer;

/**
 * Handles one converted payload. Returning normally acknowledges the message; throwing fails the attempt.
 */
@FunctionalInterface
public interface MessageHandler<T> {

    void handle(T payload, Delivery delivery) throws Exception;
}
