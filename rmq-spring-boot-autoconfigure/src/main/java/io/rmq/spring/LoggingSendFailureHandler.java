package io.rmq.spring;

import io.rmq.producer.OutgoingMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link RmqSendFailureHandler#logging()}: names the message by topic and id, never by its contents. */
final class LoggingSendFailureHandler implements RmqSendFailureHandler {

    static final LoggingSendFailureHandler INSTANCE = new LoggingSendFailureHandler();

    private static final Logger log = LoggerFactory.getLogger(RmqSendFailureHandler.class);

    private LoggingSendFailureHandler() {
    }

    @Override
    public void sendFailed(OutgoingMessage message, Throwable error) {
        log.error("RMQ could not send a message held until its transaction committed (topic '{}', {}): {}. The"
                + " transaction committed; the message is not in Redis unless it is sent again", message.topic(),
                identity(message), error.toString(), error);
    }

    /** The id, or what can be said of a body-identified message without showing the body. */
    static String identity(OutgoingMessage message) {
        if (message.id() != null) {
            return "id '" + message.id() + "'";
        }
        return message.body() instanceof byte[] body ? "no id, a " + body.length + "-byte body" : "no id";
    }
}
