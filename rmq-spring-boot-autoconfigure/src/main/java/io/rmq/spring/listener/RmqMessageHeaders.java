package io.rmq.spring.listener;

import java.util.Map;

import org.springframework.messaging.MessageHeaders;

/**
 * The headers of one delivery, without the random {@code id} and the {@code timestamp} {@link MessageHeaders} would
 * add: a UUID per message costs more than the rest of the invocation, and RMQ's identity is the body.
 */
final class RmqMessageHeaders extends MessageHeaders {

    RmqMessageHeaders(Map<String, Object> headers) {
        super(headers, ID_VALUE_NONE, -1L);
    }
}
