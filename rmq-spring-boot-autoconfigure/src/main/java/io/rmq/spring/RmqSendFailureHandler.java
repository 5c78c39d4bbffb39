package io.rmq.spring;

import io.rmq.producer.OutgoingMessage;

/**
 * Told about each message that {@link RmqTemplate} held until its transaction committed and then failed to write
 * (Redis unreachable, a timeout, an error reply). The transaction has committed by then, so nobody else hears of it:
 * the sender's code has returned. A bean of this type replaces the default, {@link #logging()}, which logs one ERROR
 * line per message with its topic and id (never its payload or header values); call it from yours to keep the line.
 * <p>
 * Called on a Redis I/O thread (or the committing thread): do not block there. To send the message again, use
 * {@link RmqTemplate#sendAsync}: a message merges with an earlier copy of itself, so a repeat is harmless.
 */
@FunctionalInterface
public interface RmqSendFailureHandler {

    /**
     * @param message the message as it was to be written: its body is the serialized body ({@code byte[]}), so sending
     *                it again writes the same message
     * @param error   why the write failed; for a batch, every message of it is reported with the batch's error (some
     *                of its slots may have been written), except when Redis was full
     *                ({@link io.rmq.core.RmqRedisFullException}): then only the messages that were not stored
     */
    void sendFailed(OutgoingMessage message, Throwable error);

    /** The default: one ERROR line per message, with its topic and id (or its body's size), never its contents. */
    static RmqSendFailureHandler logging() {
        return LoggingSendFailureHandler.INSTANCE;
    }
}
