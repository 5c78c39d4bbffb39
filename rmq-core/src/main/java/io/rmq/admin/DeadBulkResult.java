package io.rmq.admin;

/**
 * What a requeue or delete of the dead messages matching a search did ({@link RmqAdmin#requeueDeadMatching},
 * {@link RmqAdmin#deleteDeadMatching}). One request acts on at most {@link RmqAdmin#MAX_SELECTION} matches among at most
 * {@link RmqAdmin#DEAD_SEARCH_EXAMINED} dead messages examined; {@code more} says to run it again.
 *
 * @param acted   how many were requeued or deleted (a match that another operator or the retention removed between
 *                the search and the change is not counted)
 * @param matched how many matched when this request searched (among those examined)
 * @param scanned dead messages this request examined
 * @param more    matches were left for another request: more than one request acts on, or the examined bound stopped
 *                the search before the end of the dead queue
 */
public record DeadBulkResult(long acted, long matched, long scanned, boolean more) {
}
