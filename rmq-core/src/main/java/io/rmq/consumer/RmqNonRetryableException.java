package io.rmq.consumer;

/**
 * Thrown by a handler (or found among the causes of what it threw) when retrying cannot help, e.g. the message is
 * invalid: the message goes to the dead queue at once, with this exception as its reason, instead of being retried.
 * An {@link RmqErrorHandler} can still decide otherwise.
 */
public class RmqNonRetryableException extends RuntimeException {

    public RmqNonRetryableException(String message) {
        super(message);
    }

    public RmqNonRetryableException(String message, Throwable cause) {
        super(message, cause);
    }
}
