package io.rmq.spring;

import java.util.LinkedHashMap;
import java.util.Map;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.producer.OutgoingMessage;
import org.jspecify.annotations.Nullable;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHeaders;

/**
 * What a Spring {@link Message} given to {@link RmqTemplate} becomes: its payload the body, {@link RmqHeaders#ID} the
 * id, {@link RmqHeaders#GROUP} the group, every other header a header of the message, except the ones Spring adds to
 * every message ({@code id}, {@code timestamp}) or reads as its own ({@code contentType}). RMQ headers are strings:
 * any other value is refused, as is a name with the reserved prefix (by {@link OutgoingMessage}), before anything is
 * written.
 */
final class SpringMessageMapping {

    private SpringMessageMapping() {
    }

    /** {@code base} (the payload as body, the type's parameter) with the id, group and headers of {@code message}. */
    static OutgoingMessage withHeadersOf(OutgoingMessage base, Message<?> message) {
        String topic = base.topic();
        String id = null;
        String group = null;
        Map<String, String> headers = new LinkedHashMap<>();
        for (Map.Entry<String, Object> header : message.getHeaders().entrySet()) {
            String name = header.getKey();
            Object value = header.getValue();
            switch (name) {
                case MessageHeaders.ID, MessageHeaders.TIMESTAMP, MessageHeaders.CONTENT_TYPE -> {
                    // Spring's own: a random UUID and a time every Message gets, and a conversion hint
                }
                case RmqHeaders.ID -> id = string(topic, name, value);
                case RmqHeaders.GROUP -> group = string(topic, name, value);
                default -> {
                    if (name.equalsIgnoreCase(OutgoingMessage.GROUP_HEADER)) {
                        // where RMQ stores the group: a Spring sender names the group with RmqHeaders.GROUP
                        throw new RmqInvalidArgumentException("header", name, "is reserved: RMQ stores the message's"
                                + " group under it; set the group with the header " + RmqHeaders.GROUP
                                + " (RmqHeaders.GROUP) (topic '" + topic + "')");
                    }
                    headers.put(name, string(topic, name, value));
                }
            }
        }
        // the constructor checks the id (non-empty) and the names (reserved prefix); the producer the sizes
        return new OutgoingMessage(topic, base.body(), base.type(), base.parameter(), group, id, headers,
                base.expiresAt(), base.expiresAfter(), base.dedupeFor());
    }

    private static String string(String topic, String name, @Nullable Object value) {
        if (value instanceof String text) {
            return text;
        }
        throw new RmqInvalidArgumentException("header '" + name + "' value", value == null ? null
                : "of type " + value.getClass().getName(), "must be a String (topic '" + topic
                        + "'; RMQ headers are strings: convert it before sending)");
    }
}
