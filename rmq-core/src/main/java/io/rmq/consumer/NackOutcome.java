package io.rmq.consumer;

/** What became of a failed delivery. */
public enum NackOutcome {
    /** The lease was no longer held (expired and swept, or redelivered): nothing changed. */
    FENCED,
    /** Back in the queue after its backoff. */
    RETRY,
    /** In the dead queue, with the reason. */
    DEAD;

    static NackOutcome of(long code) {
        return code == 2 ? DEAD : code == 1 ? RETRY : FENCED;
    }
}
