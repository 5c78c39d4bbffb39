package io.rmq.producer;

/**
 * The outcome of one send.
 *
 * @param topic        topic name
 * @param slot         the slot the message went (or, when held, goes) to
 * @param merged       true when nothing new was stored: an identical body (or the same id) was already waiting and this
 *                     send merged into it, or the send was {@link #deduplicated}; false when held
 * @param held         true when nothing was written yet: RMQ's Spring layer holds a send made inside a transaction until
 *                     the transaction commits (and drops it when it rolls back), so whether it merges is not known yet
 * @param deduplicated true when the send was dropped, nothing written: it had a deduplication window
 *                     ({@link OutgoingMessage#dedupeFor}) and a message of its identity was handled within the window
 *                     of that message
 */
public record SendResult(String topic, int slot, boolean merged, boolean held, boolean deduplicated) {

    /** The outcome of a send that was written, or held. */
    public SendResult(String topic, int slot, boolean merged, boolean held) {
        this(topic, slot, merged, held, false);
    }

    /** The outcome of a send that was written. */
    public SendResult(String topic, int slot, boolean merged) {
        this(topic, slot, merged, false, false);
    }

    /** A send held until a transaction commits: not written yet, so not known to merge. */
    public static SendResult held(String topic, int slot) {
        return new SendResult(topic, slot, false, true, false);
    }

    /** A send dropped by a deduplication window: nothing written. */
    public static SendResult deduplicated(String topic, int slot) {
        return new SendResult(topic, slot, true, false, true);
    }
}
