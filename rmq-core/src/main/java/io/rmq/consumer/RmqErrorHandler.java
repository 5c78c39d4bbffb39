package io.rmq.consumer;

/**
 * Decides what becomes of each failed delivery (as spring-kafka's error handlers do): retry after a delay, dead
 * queue, drop, or {@link FailureDecision#standard() as configured}. Called on the handler's thread, after the handler
 * threw and before anything is written to Redis. An exception thrown here is logged and the standard decision applies.
 * Bodies that cannot be converted to the payload type go to the dead queue without asking.
 */
@FunctionalInterface
public interface RmqErrorHandler {

    FailureDecision handle(FailedMessage failure);
}
