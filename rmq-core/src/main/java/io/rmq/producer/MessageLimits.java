package io.rmq.producer;

import io.rmq.core.RmqInvalidArgumentException;

/**
 * The sizes a message's id and headers may have, checked before anything is written (the body's limit is
 * {@code RmqOptions#maxBodyBytes}). Sizes are UTF-8 bytes. The header limits count the sender's own headers: not
 * RMQ's dead-letter headers ({@link OutgoingMessage#DEAD_LETTER_HEADERS}, bounded by
 * {@link OutgoingMessage#MAX_DEAD_LETTER_HEADER_BYTES} each), the stored group or the trace context. A dead message
 * forwarded to its dead-letter topic is not checked against them again.
 *
 * @param maxIdBytes          longest id ({@code rmq.max-id-size}, default 256 bytes)
 * @param maxHeaderValueBytes longest header value ({@code rmq.max-header-value-size}, default 1 KiB)
 * @param maxHeadersBytes     all header names and values of a message together ({@code rmq.max-headers-size},
 *                            default 8 KiB)
 * @param maxHeaders          most headers per message ({@code rmq.max-headers}, default 32)
 */
public record MessageLimits(int maxIdBytes, int maxHeaderValueBytes, int maxHeadersBytes, int maxHeaders) {

    public static final MessageLimits DEFAULT = new MessageLimits(256, 1024, 8 * 1024, 32);

    public MessageLimits {
        positive("maxIdBytes", maxIdBytes);
        positive("maxHeaderValueBytes", maxHeaderValueBytes);
        positive("maxHeadersBytes", maxHeadersBytes);
        positive("maxHeaders", maxHeaders);
    }

    private static void positive(String field, int value) {
        if (value < 1 || value > 64 * 1024 * 1024) {
            throw new RmqInvalidArgumentException(field, value, "must be between 1 and 64 MiB");
        }
    }
}
