package io.rmq.core;

/** Redis did not answer within the time the engine allows a call (see {@link Timeouts}). */
public class RmqTimeoutException extends RmqException {

    public RmqTimeoutException(String message) {
        super(message);
    }
}
