package io.rmq.producer;

/**
 * The outcome of a batch send.
 *
 * @param sent         messages in the batch
 * @param added        messages that were new; {@code sent - added} merged into identical waiting bodies (or repeated
 *                     within the batch) or were deduplicated; 0 when held
 * @param held         true when nothing was written yet: RMQ's Spring layer holds a batch sent inside a transaction until
 *                     the transaction commits (and drops it when it rolls back), so how many merge is not known yet
 * @param deduplicated of the messages not added, those dropped by a deduplication window
 *                     ({@link OutgoingMessage#dedupeFor}); 0 when held
 */
public record BatchResult(int sent, long added, boolean held, long deduplicated) {

    /** The outcome of a batch that was written, or held. */
    public BatchResult(int sent, long added, boolean held) {
        this(sent, added, held, 0);
    }

    /** The outcome of a batch that was written. */
    public BatchResult(int sent, long added) {
        this(sent, added, false, 0);
    }

    /** A batch held until a transaction commits: not written yet. */
    public static BatchResult held(int sent) {
        return new BatchResult(sent, 0, true, 0);
    }

    /** Messages that merged, or were deduplicated; 0 when {@link #held()}. */
    public long merged() {
        return held ? 0 : sent - added;
    }
}
