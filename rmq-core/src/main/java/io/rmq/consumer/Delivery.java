package io.rmq.consumer;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One delivery of a message: leased to this consumer until {@link #leaseDeadline()}, fenced by its {@link #token()}:
 * ack, nack, extension and release succeed only while the prepare entry still carries it. Every delivery (and every
 * extension) gets a token of its own, so a consumer whose delivery ended can never settle a later delivery of the
 * same body.
 * <p>
 * Made by the engine only (a pop or an ORDERLY step hands deliveries out; settling one it did not make fails).
 * {@link Object#toString()} shows topic, slot, attempt, score, the id and the body's size; the body itself (truncated)
 * only when the engine was told to log bodies ({@code rmq.log-bodies}): bodies may hold personal data.
 */
public interface Delivery {

    /** The topic the message was taken from. */
    String topic();

    /** The slot of the topic it was taken from. */
    int slot();

    /**
     * The serialized payload: the body as sent (for a message sent with an id, the latest send's). An id message whose
     * payload is not stored (its envelope was removed by hand, or is damaged) has none: then this throws, and the
     * delivery ends as unreadable.
     */
    byte[] body();

    /** {@link #body()} as UTF-8 text. */
    String bodyAsString();

    /**
     * The message's identity in Redis, what ack, nack and admin operations name: its body, or for a message sent with
     * an id the byte 0xFF followed by the id's UTF-8 bytes, or for a body sent with a group to an ORDERLY topic the
     * byte 0xFE, the group's length and the group before the body (docs/redis-layout.md).
     */
    byte[] member();

    /** The id the message was sent with, or null: its body is its identity. */
    @Nullable String id();

    /**
     * The headers the message was sent with, the trace context's included ({@code traceparent}, ...), as the latest
     * send of its identity set them; empty when none. Unmodifiable. A message of an ORDERLY topic sent with a group
     * has that group here too, as {@code rmq-group} (see {@link #group()}): the first of the headers (for an id
     * message, after only a {@code traceparent} that the envelope stores compactly).
     */
    Map<String, String> headers();

    /**
     * The group the message was sent with, as stored with it: only for a message of an ORDERLY topic (its producer
     * knew the mode when sending; see {@code docs/ordering.md}); null for a message sent without a group, and for any
     * message of a CONCURRENT topic, whose group routes it but is not stored.
     */
    @Nullable String group();

    /** The store score it was popped with: due time in epoch ms (time types) or priority. */
    double score();

    /** 1 on the first delivery, n + 1 after n failed attempts. */
    int attempt();

    /**
     * Redis-clock ms until which this delivery is leased: the whole milliseconds of its {@link #token()}; -1 for a
     * delivery of an ORDERLY slot, which is held under its owner's epoch, not leased.
     */
    long leaseDeadline();

    /**
     * The fencing token of this delivery. CONCURRENT: its prepare score (the lease deadline in ms plus a fraction that
     * makes it unique) times {@code TOKEN_UNITS} (1,024); every pop and every extension of a slot issues a higher
     * one. ORDERLY: the epoch under which the owner took the slot.
     */
    long token();

    /**
     * The headers a propagator reads the sender's trace context from ({@code rmq.observation.propagate-context}), e.g.
     * {@code traceparent}: the message's {@link #headers()} (which hold the context when the sender stored one), or a
     * context that an engine before headers stored beside the body (read only with {@code RmqOptions#propagateContext}
     * on). Unmodifiable.
     */
    Map<String, String> context();
}
