package io.rmq.consumer;

import java.util.List;

/**
 * What one poll returned.
 *
 * @param deliveries the leased messages (priority topics: highest first; time topics: earliest due first)
 * @param redisNow   Redis's clock at the pop (ms; with several slots, the earliest of their pops)
 * @param nextDue    Redis-clock ms at which the polled slots next hold something due; {@code <= redisNow} when more
 *                   is due already; -1 when they are empty
 * @param slots      the slots polled
 * @param slotNextDue per polled slot (same order as {@code slots}), its own next-due hint
 */
public record PollResult(List<Delivery> deliveries, long redisNow, long nextDue, int[] slots, long[] slotNextDue) {
}
