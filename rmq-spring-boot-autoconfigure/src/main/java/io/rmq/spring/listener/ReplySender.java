package io.rmq.spring.listener;

import java.time.Duration;
import java.time.Instant;

import io.rmq.Rmq;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import org.springframework.messaging.Message;

/**
 * Sends what a {@code @SendTo} listener method returned: an {@link OutgoingMessage} as it is, any other value as the
 * body of a message to the {@code @SendTo} topic with the parameter {@code @RmqReply} gives for that topic's type.
 * The send happens before the delivery is acknowledged, so a failed send fails the attempt (the method runs again on
 * the retry, as with Spring Kafka's replies).
 *
 * @param topic     the {@code @SendTo} topic
 * @param timeRange {@code @RmqReply(timeRange)}, or null
 * @param priority  {@code @RmqReply(priority)}, or null
 * @param delay     {@code @RmqReply(delay)}, or null
 */
record ReplySender(Rmq rmq, String topic, Duration timeRange, Long priority, Duration delay)
        implements MethodInvokingHandler.ReturnValueHandler {

    @Override
    public void handle(Object returned, Message<?> request) {
        rmq.producer().send(returned instanceof OutgoingMessage message ? message : message(returned));
    }

    private OutgoingMessage message(Object body) {
        TopicType type = check(rmq.topics().get(topic));
        return switch (type) {
            case RANGE_MERGE -> OutgoingMessage.rangeMerge(topic, body, timeRange);
            case PRIORITY -> OutgoingMessage.priority(topic, body, priority == null ? 0 : priority);
            case FIXED_TIME -> OutgoingMessage.fixedTime(topic, body,
                    delay == null ? Instant.now() : Instant.now().plus(delay));
        };
    }

    /** The reply topic's type, once it is checked that {@code @RmqReply} gives what that type needs and nothing else. */
    TopicType check(TopicDefinition definition) {
        TopicType type = definition.type();
        String expected = switch (type) {
            case RANGE_MERGE -> "timeRange";
            case PRIORITY -> "priority";
            case FIXED_TIME -> "delay";
        };
        if (type == TopicType.RANGE_MERGE && timeRange == null) {
            throw new IllegalArgumentException("@SendTo topic '" + topic + "' is RANGE_MERGE: set"
                    + " @RmqReply(timeRange = ...) or return an OutgoingMessage");
        }
        String wrong = timeRange != null && type != TopicType.RANGE_MERGE ? "timeRange"
                : priority != null && type != TopicType.PRIORITY ? "priority"
                : delay != null && type != TopicType.FIXED_TIME ? "delay" : null;
        if (wrong != null) {
            throw new IllegalArgumentException("@RmqReply(" + wrong + ") does not fit @SendTo topic '" + topic + "', which is "
                    + type + " (it takes " + expected + ")");
        }
        return type;
    }
}
