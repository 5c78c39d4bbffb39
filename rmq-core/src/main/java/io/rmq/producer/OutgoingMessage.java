package io.rmq.producer;

import java.time.Duration;
import java.time.Instant;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import org.jspecify.annotations.Nullable;

/**
 * A message to send: its topic, body, the parameter its topic type needs, and an optional slot basis.
 *
 * @param topic     topic name
 * @param body      the body; {@code String} and {@code byte[]} are stored as they are, other objects as canonical JSON
 * @param type      the type the parameter belongs to (must match the topic's type)
 * @param parameter timeRange in ms (RANGE_MERGE), priority (PRIORITY) or epoch ms (FIXED_TIME)
 * @param slotBasis what routes the message to its slot instead of the body (same basis, same slot); may be null
 */
public record OutgoingMessage(String topic, Object body, TopicType type, long parameter, @Nullable String slotBasis) {

    /** Largest priority magnitude that a Redis sorted-set score (a double) holds exactly. */
    public static final long MAX_PRIORITY = 1L << 53;

    /**
     * Longest time range: the due time (Redis's now + timeRange) must stay a score Redis holds exactly (±2^53 ms, as
     * the other types); 2^52 ms leaves the other half for now.
     */
    public static final long MAX_TIME_RANGE_MILLIS = 1L << 52;

    private static final String TIME_RANGE_RULE = "must be at most 2^52 ms (about 142,000 years), so that its due time"
            + " is a score Redis holds exactly (topic '";
    private static final String FIXED_TIME_RULE = "must be within ±2^53 ms of the epoch (topic '";

    public OutgoingMessage {
        TopicDefinition.validateName(topic);
        if (body == null) {
            throw new RmqInvalidArgumentException("body", null, "must not be null (topic '" + topic + "')");
        }
        if (type == null) {
            throw new RmqInvalidArgumentException("type", null, "must be set (topic '" + topic + "')");
        }
        switch (type) {
            case RANGE_MERGE -> {
                if (parameter <= 0) {
                    throw new RmqInvalidArgumentException("timeRange", parameter + "ms",
                            "must be greater than 0 ms (topic '" + topic + "')");
                }
                if (parameter > MAX_TIME_RANGE_MILLIS) {
                    throw new RmqInvalidArgumentException("timeRange", parameter + "ms", TIME_RANGE_RULE + topic + "')");
                }
            }
            case PRIORITY -> {
                if (Math.abs(parameter) > MAX_PRIORITY) {
                    throw new RmqInvalidArgumentException("priority", parameter,
                            "must be between -2^53 and 2^53 (topic '" + topic + "')");
                }
            }
            case FIXED_TIME -> {
                // a time at or before now is due at once (host clocks are not Redis's; a deadline may pass while a
                // request is processed): only times a score cannot hold exactly are refused
                if (Math.abs(parameter) > MAX_PRIORITY) {
                    throw new RmqInvalidArgumentException("fixedTime", parameter + "ms", FIXED_TIME_RULE + topic + "')");
                }
            }
        }
        if (slotBasis != null && slotBasis.isEmpty()) {
            throw new RmqInvalidArgumentException("slotBasis", "", "must be null or non-empty (topic '" + topic + "')");
        }
    }

    /** Delivered {@code timeRange} after the first send; duplicates sent meanwhile merge into it. */
    public static OutgoingMessage rangeMerge(String topic, Object body, Duration timeRange) {
        if (timeRange == null) {
            throw new RmqInvalidArgumentException("timeRange", null, "must be greater than 0 ms (topic '" + topic + "')");
        }
        if (timeRange.compareTo(Duration.ofMillis(MAX_TIME_RANGE_MILLIS)) > 0) {
            // checked before toMillis(), which overflows (ArithmeticException) for very long durations
            throw new RmqInvalidArgumentException("timeRange", timeRange, TIME_RANGE_RULE + topic + "')");
        }
        return new OutgoingMessage(topic, body, TopicType.RANGE_MERGE, timeRange.toMillis(), null);
    }

    /** Higher priority first; a duplicate merges and takes the latest priority. */
    public static OutgoingMessage priority(String topic, Object body, long priority) {
        return new OutgoingMessage(topic, body, TopicType.PRIORITY, priority, null);
    }

    /**
     * Delivered at {@code fixedTime} (Redis's clock); a time at or before now is due at once, oldest first. A duplicate
     * merges and takes the latest time.
     */
    public static OutgoingMessage fixedTime(String topic, Object body, Instant fixedTime) {
        if (fixedTime == null) {
            throw new RmqInvalidArgumentException("fixedTime", null, "must not be null (topic '" + topic + "')");
        }
        if (fixedTime.isAfter(Instant.ofEpochMilli(MAX_PRIORITY))
                || fixedTime.isBefore(Instant.ofEpochMilli(-MAX_PRIORITY))) {
            // checked before toEpochMilli(), which overflows (ArithmeticException) for far times
            throw new RmqInvalidArgumentException("fixedTime", fixedTime, FIXED_TIME_RULE + topic + "')");
        }
        return new OutgoingMessage(topic, body, TopicType.FIXED_TIME, fixedTime.toEpochMilli(), null);
    }

    /** The same message routed by {@code slotBasis} (messages with the same basis share a slot). */
    public OutgoingMessage withSlotBasis(@Nullable String slotBasis) {
        return new OutgoingMessage(topic, body, type, parameter, slotBasis);
    }
}
