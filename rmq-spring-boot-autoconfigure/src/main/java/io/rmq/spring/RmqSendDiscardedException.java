package io.rmq.spring;

import io.rmq.core.RmqException;

/**
 * How the future of a send held by a transaction ends when the transaction does not commit: the send was dropped,
 * nothing was written. See {@link RmqTransactionMode#AFTER_COMMIT}.
 */
public class RmqSendDiscardedException extends RmqException {

    public RmqSendDiscardedException(String message) {
        super(message);
    }
}
