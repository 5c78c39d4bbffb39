package io.rmq.redis.internal;

import org.jspecify.annotations.Nullable;

/**
 * A message moved from store to prepare.
 *
 * @param envelope   its stored {@link Envelope} (or a legacy trace context, {@link TraceContexts}), or null: none
 *                   stored (a legacy context: none, or not asked for)
 * @param envelopeKey the body's envelope key ({@link EnvelopeKeys#of}) when the consumer computed it to read the
 *                   slot's trace records itself and found one, {@link EnvelopeKeys#NOTHING_STORED} when it found
 *                   none (named again in the ack, see ack.lua); null otherwise
 */
public record Popped(byte[] member, double score, int attempt, byte @Nullable [] envelope,
        byte @Nullable [] envelopeKey) {

    public Popped(byte[] member, double score, int attempt, byte @Nullable [] envelope) {
        this(member, score, attempt, envelope, null);
    }
}
