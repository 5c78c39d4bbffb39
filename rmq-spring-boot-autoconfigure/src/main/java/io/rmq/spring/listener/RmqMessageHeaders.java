package io.rmq.spring.listener;

import java.util.Map;

import org.springframework.messaging.MessageHeaders;

/**
 * The headers of one delivery (or batch), without the random {@code id} and the {@code timestamp}
 * {@link MessageHeaders} would add: a UUID per message costs more than the rest of the invocation, and RMQ's identity
 * is its own ({@link io.rmq.spring.RmqHeaders#ID}). A header a sender named {@code id} or {@code timestamp} is left out
 * here for the same reason (Spring reads those names as its own types); {@code RmqMessage#headers()} has it.
 */
final class RmqMessageHeaders extends MessageHeaders {

    RmqMessageHeaders(Map<String, Object> headers) {
        super(headers, ID_VALUE_NONE, -1L);
    }
}
