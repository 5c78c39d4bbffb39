package io.rmq.core;

import org.jspecify.annotations.Nullable;

/**
 * A failure talking to Redis or an unexpected reply; the message says which operation failed.
 */
public class RmqException extends RuntimeException {

    public RmqException(String message) {
        super(message);
    }

    public RmqException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
