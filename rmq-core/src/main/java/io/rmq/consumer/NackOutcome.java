package io.rmq.consumer;

/** What became of a failed delivery. */
public enum NackOutcome {
    /** The lease was no longer held (expired and swept, or redelivered): nothing changed. */
    FENCED,
    /** Back in the queue after its backoff. */
    RETRY,
    /** In the dead queue, with the reason. */
    DEAD,
    /** Gone for good: it was cancelled while in flight, or the error handler dropped it. */
    DROPPED
}
