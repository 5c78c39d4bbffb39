package io.rmq.admin;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

import io.rmq.core.RmqInvalidArgumentException;

/**
 * What happened to a topic over the last hour (per minute) or day (per hour), as the engines that send to and consume
 * it counted it: every RMQ instance adds its counts to Redis once per flush interval ({@code RmqOptions}
 * {@code historyFlushInterval}, 10 s by default), filed under Redis's clock at the time of that write. So a count
 * lands in the interval in which its instance wrote it, at most one flush interval (longer while Redis could not be
 * reached) after it happened.
 *
 * @param topic      topic name
 * @param resolution minutes (the last 60 points) or hours (the last 24)
 * @param from       the start of the first point
 * @param to         the end of the last point (the current minute or hour, which is still filling)
 * @param points     oldest first, one per minute or hour, zeros where nothing was counted
 */
public record TopicHistory(String topic, Resolution resolution, Instant from, Instant to, List<Point> points) {

    /**
     * The counts of one minute or hour.
     *
     * @param at      its start
     * @param sent    messages written by sends (new, or merged into a waiting duplicate)
     * @param handled deliveries handled and acknowledged
     * @param failed  deliveries whose handler failed (then retried, dead or dropped)
     * @param dead    of those, the ones moved to the dead queue
     * @param trimmed dead messages deleted by the dead-letter retention (the oldest, beyond the topic's most count or
     *                older than its longest age; see {@code DeadLetterRetention})
     * @param expired messages that expired before a handler saw them (dropped, or moved to the dead queue without
     *                counting as failed or dead; see {@code OutgoingMessage#expiresAt})
     */
    public record Point(Instant at, long sent, long handled, long failed, long dead, long trimmed, long expired) {

        /** A point without trims and expiries. */
        public Point(Instant at, long sent, long handled, long failed, long dead) {
            this(at, sent, handled, failed, dead, 0, 0);
        }

        /** A point without expiries. */
        public Point(Instant at, long sent, long handled, long failed, long dead, long trimmed) {
            this(at, sent, handled, failed, dead, trimmed, 0);
        }
    }

    /** How fine a history is. */
    public enum Resolution {

        /** The last 60 minutes, a point per minute. */
        MINUTE(60_000, 60),

        /** The last 24 hours, a point per hour. */
        HOUR(3_600_000, 24);

        private final long millis;
        private final int points;

        Resolution(long millis, int points) {
            this.millis = millis;
            this.points = points;
        }

        /** The length of one point in ms. */
        public long millis() {
            return millis;
        }

        /** How many points a history of this resolution has. */
        public int points() {
            return points;
        }

        /** {@code minute} or {@code hour}, in any case; anything else is refused naming the value. */
        public static Resolution parse(String value) {
            if (value != null) {
                for (Resolution r : values()) {
                    if (r.name().equalsIgnoreCase(value.trim())) {
                        return r;
                    }
                }
            }
            throw new RmqInvalidArgumentException("resolution", value, "must be minute or hour");
        }

        /** {@code minute} or {@code hour}. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}
