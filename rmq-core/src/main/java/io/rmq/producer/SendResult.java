package io.rmq.producer;

/**
 * The outcome of one send.
 *
 * @param topic  topic name
 * @param slot   the slot the message went (or, when held, goes) to
 * @param merged true when an identical body was already waiting and this send merged into it; false when held
 * @param held   true when nothing was written yet: RMQ's Spring layer holds a send made inside a transaction until the
 *               transaction commits (and drops it when it rolls back), so whether it merges is not known yet
 */
public record SendResult(String topic, int slot, boolean merged, boolean held) {

    /** The outcome of a send that was written. */
    public SendResult(String topic, int slot, boolean merged) {
        this(topic, slot, merged, false);
    }

    /** A send held until a transaction commits: not written yet, so not known to merge. */
    public static SendResult held(String topic, int slot) {
        return new SendResult(topic, slot, false, true);
    }
}
