package io.rmq.admin;

/**
 * What a cancel found and did.
 *
 * @param removedWaiting a waiting message was removed from the store
 * @param removedRetry   a pending retry was removed (a PRIORITY message backing off, an ORDERLY slot's failed head)
 * @param inFlight       a delivery is under way: it cannot be recalled from its handler, but once it ends without an
 *                       ack (failure, lease expiry, shutdown) it is dropped, not handed out again
 * @param dead           the body is in the dead queue; cancel leaves it there (delete it with {@code deleteDead})
 */
public record CancelResult(boolean removedWaiting, boolean removedRetry, boolean inFlight, boolean dead) {

    /** Something that would have been delivered later was removed. */
    public boolean cancelled() {
        return removedWaiting || removedRetry;
    }

    /** The body was anywhere at all. */
    public boolean found() {
        return removedWaiting || removedRetry || inFlight || dead;
    }
}
