package io.rmq.admin;

import java.util.List;

/**
 * Queue sizes of a topic.
 *
 * @param topic    topic name
 * @param waiting  messages in store, plus retries waiting out their backoff
 * @param inFlight messages leased to consumers (prepare)
 * @param dead     messages in the dead queue
 * @param slots    the same figures per slot
 */
public record TopicStats(String topic, long waiting, long inFlight, long dead, List<SlotStats> slots) {

    /** A summary: the totals and how many slots ({@link #slots()} has the figures per slot). */
    @Override
    public String toString() {
        return "TopicStats[topic=" + topic + ", waiting=" + waiting + ", inFlight=" + inFlight + ", dead=" + dead
                + ", slots=" + slots.size() + "]";
    }

    /** Queue sizes of one slot. */
    public record SlotStats(int slot, long waiting, long inFlight, long dead) {
    }
}
