package io.rmq.reply;

import io.rmq.core.RmqException;

/**
 * The handler of a request failed, and the request asked for its failure back
 * ({@link RmqReplies#request(io.rmq.producer.OutgoingMessage, java.lang.reflect.Type, java.time.Duration, boolean)}
 * with {@code failuresBack}): the requester's future fails with this, naming what the handler threw.
 */
public class RmqReplyFailureException extends RmqException {

    private final String topic;
    private final String correlationId;
    private final String failure;

    public RmqReplyFailureException(String topic, String correlationId, String failure) {
        super("the handler of request " + correlationId + " on topic '" + topic + "' failed: " + failure);
        this.topic = topic;
        this.correlationId = correlationId;
        this.failure = failure;
    }

    public String getTopic() {
        return topic;
    }

    public String getCorrelationId() {
        return correlationId;
    }

    /** What the handler threw, as its class name and message ({@code "java.lang.IllegalStateException: ..."}). */
    public String getFailure() {
        return failure;
    }
}
