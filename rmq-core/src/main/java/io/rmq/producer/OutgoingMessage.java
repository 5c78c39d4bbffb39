package io.rmq.producer;

import java.time.Duration;
import java.time.Instant;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.redis.internal.Envelope;
import org.jspecify.annotations.Nullable;

/**
 * A message to send: its topic, body (the payload), the parameter its topic type needs, and optionally a group, an id
 * and headers.
 * <p>
 * Without an id the body is the message's identity: sends of an equal body merge. With an id, the id is the identity:
 * sends of one id merge whatever their payloads, by the timing rule of the topic type, and the payload and headers
 * delivered are those of the latest send.
 *
 * @param topic     topic name
 * @param body      the payload; {@code String} and {@code byte[]} are stored as they are, other objects as canonical
 *                  JSON
 * @param type      the type the parameter belongs to (must match the topic's type)
 * @param parameter timeRange in ms (RANGE_MERGE), priority (PRIORITY) or epoch ms (FIXED_TIME)
 * @param group     the routing and ordering key: messages of one group share a slot (so an ORDERLY listener handles
 *                  them in order); null: the id, or else the body, routes the message. Formerly "slot basis".
 * @param id        the message's identity for merging (non-empty; at most {@code rmq.max-id-size} bytes), or null: the
 *                  body is its identity
 * @param headers   string headers delivered with the message (names not starting with the reserved {@code rmq_},
 *                  except the {@link #DEAD_LETTER_HEADERS} and {@link #REQUEST_HEADERS}, and not {@link #GROUP_HEADER});
 *                  never null;
 *                  unmodifiable, in the order given
 * @param expiresAt    when the message expires (Redis's clock), or null; see {@link #expiresAt(Instant)}
 * @param expiresAfter how long after it is stored the message expires, or null; see {@link #expiresAfter(Duration)}.
 *                     At most one of the two is set.
 * @param dedupeFor    how long after it is handled a send of the same identity is dropped, or null; see
 *                     {@link #dedupeFor(Duration)}
 */
public record OutgoingMessage(String topic, Object body, TopicType type, long parameter, @Nullable String group,
        @Nullable String id, Map<String, String> headers, @Nullable Instant expiresAt,
        @Nullable Duration expiresAfter, @Nullable Duration dedupeFor) {

    /** Header names that start with this prefix belong to RMQ. */
    public static final String RESERVED_PREFIX = "rmq_";

    /**
     * The header under which RMQ stores the group of a message sent to an ORDERLY topic ({@code rmq-group}); deliveries
     * show it among their headers. Reserved: a message's group is set with {@link #withGroup}.
     */
    public static final String GROUP_HEADER = Envelope.GROUP;

    /**
     * The reserved headers RMQ's dead-letter forwarding adds, which a message may carry (a dead letter re-sent as it
     * came keeps its story).
     */
    public static final Set<String> DEAD_LETTER_HEADERS = Set.of("rmq_dlt_original_topic", "rmq_dlt_original_slot",
            "rmq_dlt_exception", "rmq_dlt_exception_message", "rmq_dlt_attempts", "rmq_dlt_failed_at");

    /** The request's correlation id, on a request ({@code RmqReplies}); its reply carries it back. */
    public static final String CORRELATION_ID_HEADER = "rmq_correlation_id";
    /** The inbox of the requester that waits for the reply, on a request ({@code RmqReplies}). */
    public static final String REPLY_TO_HEADER = "rmq_reply_to";
    /** {@code true} on a request whose requester wants a handler's failure back instead of a timeout. */
    public static final String REPLY_FAILURES_HEADER = "rmq_reply_failures";
    /** How long the requester waits (ms), on a request: its reply is kept untaken no longer than that. */
    public static final String REPLY_TIMEOUT_HEADER = "rmq_reply_timeout";

    /** The reserved headers a request carries ({@code RmqReplies} sets them; a message may carry them). */
    public static final Set<String> REQUEST_HEADERS = Set.of(CORRELATION_ID_HEADER, REPLY_TO_HEADER,
            REPLY_FAILURES_HEADER, REPLY_TIMEOUT_HEADER);

    /**
     * Longest value of one of the {@link #DEAD_LETTER_HEADERS} (UTF-8 bytes; forwarding cuts longer exception names and
     * messages to it). Those headers are RMQ's: they do not count against the user's limits ({@link MessageLimits}),
     * only this bound applies to them, so a dead letter re-sent as it came is never refused for its story.
     */
    public static final int MAX_DEAD_LETTER_HEADER_BYTES = 1024;

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

    /** Longest {@link #expiresAfter(Duration)}, as {@link #MAX_TIME_RANGE_MILLIS}: the instant stays an exact score. */
    public static final long MAX_EXPIRES_AFTER_MILLIS = MAX_TIME_RANGE_MILLIS;

    /** Longest {@link #dedupeFor(Duration)}: a year (the window is kept in Redis memory that long). */
    public static final Duration MAX_DEDUPE_FOR = Duration.ofDays(366);

    /** A message that does not expire. */
    public OutgoingMessage(String topic, Object body, TopicType type, long parameter, @Nullable String group,
            @Nullable String id, Map<String, String> headers) {
        this(topic, body, type, parameter, group, id, headers, null, null, null);
    }

    /** A message without a deduplication window. */
    public OutgoingMessage(String topic, Object body, TopicType type, long parameter, @Nullable String group,
            @Nullable String id, Map<String, String> headers, @Nullable Instant expiresAt,
            @Nullable Duration expiresAfter) {
        this(topic, body, type, parameter, group, id, headers, expiresAt, expiresAfter, null);
    }

    /** A message without id and headers, routed by {@code group} (null: by its body). */
    public OutgoingMessage(String topic, Object body, TopicType type, long parameter, @Nullable String group) {
        this(topic, body, type, parameter, group, null, Map.of());
    }

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
        if (group != null && group.isEmpty()) {
            throw new RmqInvalidArgumentException("group", "", "must be null or non-empty (topic '" + topic + "')");
        }
        if (id != null && id.isEmpty()) {
            throw new RmqInvalidArgumentException("id", "", "must be null or non-empty (topic '" + topic + "')");
        }
        headers = copyHeaders(topic, headers);
        checkExpiry(topic, type, parameter, expiresAt, expiresAfter);
        // the bound first: toNanos() overflows for durations of centuries
        if (dedupeFor != null && (dedupeFor.isNegative() || dedupeFor.compareTo(MAX_DEDUPE_FOR) > 0
                || dedupeFor.toNanos() < 1_000_000)) {
            throw new RmqInvalidArgumentException("dedupeFor", dedupeFor, "must be between 1 ms and "
                    + MAX_DEDUPE_FOR.toDays() + " days (topic '" + topic + "')");
        }
    }

    /**
     * An expiry must leave the message a chance: after now (the host's clock; Redis checks its own again when it
     * stores the message) and after the message's due time.
     */
    private static void checkExpiry(String topic, TopicType type, long parameter, @Nullable Instant expiresAt,
            @Nullable Duration expiresAfter) {
        if (expiresAt != null && expiresAfter != null) {
            throw new RmqInvalidArgumentException("expiresAfter", expiresAfter, "must not be set with expiresAt ("
                    + expiresAt + "): a message has one expiry (topic '" + topic + "')");
        }
        if (expiresAfter != null) {
            if (expiresAfter.isNegative() || expiresAfter.isZero()
                    || expiresAfter.compareTo(Duration.ofMillis(MAX_EXPIRES_AFTER_MILLIS)) > 0
                    || expiresAfter.toMillis() == 0) {
                throw new RmqInvalidArgumentException("expiresAfter", expiresAfter, "must be between 1 ms and 2^52 ms"
                        + " (topic '" + topic + "')");
            }
            if (type == TopicType.FIXED_TIME && System.currentTimeMillis() + expiresAfter.toMillis() <= parameter) {
                throw new RmqInvalidArgumentException("expiresAfter", expiresAfter, "must end after the message's"
                        + " fixedTime (" + Instant.ofEpochMilli(parameter) + "): it would expire before it is due (topic '"
                        + topic + "')");
            }
            if (type == TopicType.RANGE_MERGE && expiresAfter.toMillis() <= parameter) {
                throw new RmqInvalidArgumentException("expiresAfter", expiresAfter, "must be longer than the message's"
                        + " timeRange (" + parameter + " ms): it would expire before it is due (topic '" + topic + "')");
            }
        }
        if (expiresAt != null) {
            if (expiresAt.isAfter(Instant.ofEpochMilli(MAX_PRIORITY))) {
                throw new RmqInvalidArgumentException("expiresAt", expiresAt, FIXED_TIME_RULE + topic + "')");
            }
            long at = expiresAt.toEpochMilli();
            long now = System.currentTimeMillis();
            if (at <= now) {
                throw new RmqInvalidArgumentException("expiresAt", expiresAt, "must be in the future (now is "
                        + Instant.ofEpochMilli(now) + "; topic '" + topic + "')");
            }
            if (type == TopicType.FIXED_TIME && at <= parameter) {
                throw new RmqInvalidArgumentException("expiresAt", expiresAt, "must be after the message's fixedTime ("
                        + Instant.ofEpochMilli(parameter) + "): it would expire before it is due (topic '" + topic
                        + "')");
            }
            if (type == TopicType.RANGE_MERGE && at <= now + parameter) {
                throw new RmqInvalidArgumentException("expiresAt", expiresAt, "must be after the message's due time"
                        + " (now + timeRange " + parameter + " ms): it would expire before it is due (topic '" + topic
                        + "')");
            }
        }
    }

    private static Map<String, String> copyHeaders(String topic, @Nullable Map<String, String> headers) {
        if (headers instanceof CheckedHeaders) {
            return headers; // an earlier message's copy, validated and unmodifiable: the with-methods pass it on
        }
        if (headers == null || headers.isEmpty()) {
            return Map.of();
        }
        Map<String, String> copy = new LinkedHashMap<>(headers.size() * 2);
        // entries as Objects: a raw or unchecked map (a Spring Message's headers) may hold other types
        for (Map.Entry<?, ?> header : ((Map<?, ?>) headers).entrySet()) {
            Object name = header.getKey();
            if (name != null && !(name instanceof String)) {
                throw new RmqInvalidArgumentException("header name", name, "must be a String (topic '" + topic + "')");
            }
            validateHeader(topic, (String) name, header.getValue());
            copy.put((String) name, (String) header.getValue());
        }
        return new CheckedHeaders(copy);
    }

    /** Headers a message copied and validated: unmodifiable, in the order given; passed on by the with-methods. */
    private static final class CheckedHeaders extends AbstractMap<String, String> {

        private final Map<String, String> entries;

        CheckedHeaders(Map<String, String> copy) {
            this.entries = Collections.unmodifiableMap(copy);
        }

        @Override
        public Set<Entry<String, String>> entrySet() {
            return entries.entrySet();
        }

        @Override
        public @Nullable String get(Object key) {
            return entries.get(key);
        }

        @Override
        public boolean containsKey(Object key) {
            return entries.containsKey(key);
        }

        @Override
        public int size() {
            return entries.size();
        }
    }

    /** The rules every header follows wherever it comes from (limits on size are the producer's: configurable). */
    static void validateHeader(String topic, @Nullable String name, @Nullable Object value) {
        if (name == null || name.isEmpty()) {
            throw new RmqInvalidArgumentException("header name", name, "must be non-empty (topic '" + topic + "')");
        }
        if (name.regionMatches(true, 0, RESERVED_PREFIX, 0, RESERVED_PREFIX.length())
                && !DEAD_LETTER_HEADERS.contains(name)
                && !REQUEST_HEADERS.contains(name)) {
            throw new RmqInvalidArgumentException("header", name, "uses the reserved prefix " + RESERVED_PREFIX
                    + " (topic '" + topic + "')");
        }
        if (name.equalsIgnoreCase(GROUP_HEADER)) {
            throw new RmqInvalidArgumentException("header", name, "is reserved: RMQ stores the message's group under"
                    + " it; use withGroup (topic '" + topic + "')");
        }
        if (value == null) {
            throw new RmqInvalidArgumentException("header '" + name + "' value", null,
                    "must not be null (topic '" + topic + "')");
        }
        if (!(value instanceof String)) {
            throw new RmqInvalidArgumentException("header '" + name + "' value", "of type "
                    + value.getClass().getSimpleName(), "must be a String (topic '" + topic + "'; convert it before sending)");
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

    /** The same message in {@code group} (messages of one group share a slot; ORDERLY handles them in order). */
    public OutgoingMessage withGroup(@Nullable String group) {
        return new OutgoingMessage(topic, body, type, parameter, group, id, headers, expiresAt, expiresAfter, dedupeFor);
    }

    /** The same message with {@code id} as its identity for merging (null: the body is its identity). */
    public OutgoingMessage withId(@Nullable String id) {
        return new OutgoingMessage(topic, body, type, parameter, group, id, headers, expiresAt, expiresAfter, dedupeFor);
    }

    /**
     * The same message, expiring at {@code instant} on Redis's clock (null: it does not expire): a consumer that takes
     * it later does not hand it to its handler; it is dropped, or moved to the dead queue when the topic keeps expired
     * messages ({@code DeadLetterRetention#keepExpired}). Must be after now and after the message's due time. A send
     * that merges into a waiting message sets its expiry (the latest send with an expiry wins); a send without one
     * leaves it.
     */
    public OutgoingMessage expiresAt(@Nullable Instant instant) {
        return new OutgoingMessage(topic, body, type, parameter, group, id, headers, instant, null, dedupeFor);
    }

    /**
     * The same message, expiring {@code duration} after Redis stores it (null: it does not expire); see
     * {@link #expiresAt(Instant)}. Measured on Redis's clock, so host clocks do not matter.
     */
    public OutgoingMessage expiresAfter(@Nullable Duration duration) {
        return new OutgoingMessage(topic, body, type, parameter, group, id, headers, null, duration, dedupeFor);
    }

    /**
     * The same message with a deduplication window (null: none): once a message of its identity (its id, or its body
     * when it has none) was handled, sends of that identity with a window are dropped until {@code window} has passed
     * since the handling ({@link SendResult#deduplicated()}). Unlike merging, which joins duplicates while a message
     * waits, the window starts when the message is handled; a send while the message waits merges as always, one while
     * it is in flight is delivered after it. Sends without a window are never dropped. The window is kept in Redis, in
     * the message's slot: it survives restarts and failovers. Between 1 ms and {@link #MAX_DEDUPE_FOR}.
     */
    public OutgoingMessage dedupeFor(@Nullable Duration window) {
        return new OutgoingMessage(topic, body, type, parameter, group, id, headers, expiresAt, expiresAfter, window);
    }

    /** Whether the message expires ({@link #expiresAt()} or {@link #expiresAfter()} set). */
    public boolean expires() {
        return expiresAt != null || expiresAfter != null;
    }

    /** The same message with one more header (or that header's value replaced). */
    public OutgoingMessage withHeader(String name, String value) {
        validateHeader(topic, name, value);
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new OutgoingMessage(topic, body, type, parameter, group, id, more, expiresAt, expiresAfter, dedupeFor);
    }

    /** The same message with {@code headers} added (replacing values of names it already has). */
    public OutgoingMessage withHeaders(Map<String, String> headers) {
        if (this.headers.isEmpty() && headers != null) {
            // the constructor copies (and checks) them
            return new OutgoingMessage(topic, body, type, parameter, group, id, headers, expiresAt, expiresAfter,
                    dedupeFor);
        }
        Map<String, String> more = new LinkedHashMap<>(this.headers);
        more.putAll(headers);
        return new OutgoingMessage(topic, body, type, parameter, group, id, more, expiresAt, expiresAfter, dedupeFor);
    }

    /**
     * The group.
     *
     * @deprecated the routing key is called {@link #group()} now
     */
    @Deprecated(since = "0.1.0")
    public @Nullable String slotBasis() {
        return group;
    }

    /**
     * The same message in group {@code slotBasis}.
     *
     * @deprecated use {@link #withGroup(String)}
     */
    @Deprecated(since = "0.1.0")
    public OutgoingMessage withSlotBasis(@Nullable String slotBasis) {
        return withGroup(slotBasis);
    }
}
