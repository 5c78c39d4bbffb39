package io.rmq.admin;

import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Queue figures of a topic, read in one call per slot (all slots pipelined). Every message of the topic is counted
 * exactly once, in one of {@code waiting}, {@code inFlight}, {@code retrying} or {@code dead}; a body sent again
 * while an earlier copy of it is in flight or backing off is a second message (it waits in store).
 *
 * @param topic     topic name
 * @param waiting   messages in the store, due or waiting for their time (PRIORITY: for their turn), and PRIORITY
 *                  retries whose backoff is over (due again); not those still backing off ({@code retrying})
 * @param inFlight  messages taken by consumers and not settled: leased (CONCURRENT) or held by the owner of an ORDERLY
 *                  slot, except a failed ORDERLY head waiting for its retry ({@code retrying})
 * @param dead      messages in the dead queue
 * @param retrying  failed messages waiting out their backoff before the next attempt: PRIORITY retries in the slot's
 *                  retry set, time-typed retries in the store with a retry time still ahead (a message with an
 *                  attempt count and a due time after now: a duplicate of a failed body sent while it backed off
 *                  is counted here too), and failed ORDERLY heads that suspend their slot
 * @param oldestDue RANGE_MERGE / FIXED_TIME: the earliest due time in the store (Redis clock; in the past when
 *                  messages wait longer than they should, in the future when nothing is due yet), retries in the
 *                  store included; null for PRIORITY topics or an empty store
 * @param slots     the same figures per slot
 */
public record TopicStats(String topic, long waiting, long inFlight, long dead, long retrying,
        @Nullable Instant oldestDue, List<SlotStats> slots) {

    /** Messages not settled yet: waiting + in flight + retrying (dead ones excluded). */
    public long pending() {
        return waiting + inFlight + retrying;
    }

    /** A summary: the totals and how many slots ({@link #slots()} has the figures per slot). */
    @Override
    public String toString() {
        return "TopicStats[topic=" + topic + ", waiting=" + waiting + ", inFlight=" + inFlight + ", retrying="
                + retrying + ", dead=" + dead + (oldestDue == null ? "" : ", oldestDue=" + oldestDue) + ", slots="
                + slots.size() + "]";
    }

    /** Queue figures of one slot (see {@link TopicStats} for what each counts). */
    public record SlotStats(int slot, long waiting, long inFlight, long dead, long retrying,
            @Nullable Instant oldestDue) {
    }
}
