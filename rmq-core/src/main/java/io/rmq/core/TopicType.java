package io.rmq.core;

/**
 * What the score of a message in a topic's store means, and so how it is sent, merged and popped.
 */
public enum TopicType {

    /**
     * Score = due time (ms), set to Redis-now + {@code timeRange} on the <em>first</em> send. Duplicates sent before
     * delivery merge into it and do not move its time.
     */
    RANGE_MERGE(true),

    /** Score = priority; highest first. A duplicate merges and takes the latest priority. */
    PRIORITY(false),

    /** Score = absolute due time (ms). Late messages go oldest first. A duplicate takes the latest time. */
    FIXED_TIME(true);

    private final boolean timeOrdered;

    TopicType(boolean timeOrdered) {
        this.timeOrdered = timeOrdered;
    }

    /** True when the store score is a due time (popped when due, oldest first). */
    public boolean isTimeOrdered() {
        return timeOrdered;
    }
}
