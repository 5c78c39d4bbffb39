package io.rmq.consumer;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.redis.internal.RmqRedisLeases;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.redis.internal.TraceContexts;
import org.jspecify.annotations.Nullable;

/**
 * One delivery of a message: leased to this consumer until {@link #leaseDeadline()}, fenced by its {@link #token()}:
 * ack, nack, extension and release succeed only while the prepare entry still carries it. Every delivery (and every
 * extension) gets a token of its own, so a consumer whose delivery ended can never settle a later delivery of the
 * same body.
 */
public final class Delivery {

    private final SlotKeys slotKeys;
    /** The message's identity in Redis: its body, or 0xFF followed by its id. */
    private final byte[] member;
    private final double score;
    private final int attempt;
    /** CONCURRENT: the lease token, in {@link RmqRedisLeases#TOKEN_UNITS}; ORDERLY: the owner's epoch. */
    private volatile long token;
    private final boolean leased;
    /**
     * Completes once the lease extension under way (if any) has stored its new token here. An ack or nack that Redis
     * fenced because that extension ran first must wait for it: its reply can be handled before the extension's
     * token update runs (the thread that sent the extension may attach the update only after the reply arrived).
     * Null until the first extension (most deliveries are settled before one): no future and no volatile write per
     * delivery.
     */
    private volatile @Nullable CompletableFuture<Void> extension;
    /** What {@link #extension()} gives before any extension: complete, and only ever read (never completed). */
    private static final CompletableFuture<Void> NO_EXTENSION = CompletableFuture.completedFuture(null);
    /** How many characters of the body {@link #toString()} (and so every log line) shows: 0 by default. */
    private final int logBodyChars;
    /**
     * The message's envelope as stored ({@link Envelope}: payload of an id message, headers, trace context), or a
     * legacy trace context ({@link TraceContexts}); null when none. Decoded when first asked for.
     */
    private final byte @Nullable [] stored;
    private @Nullable Envelope envelope;
    /**
     * The field of the body's trace record when the pop read the slot's trace records (see
     * {@link RmqRedisLeases#pop}): the ack names it, so Redis forgets the record without a digest. Null otherwise.
     */
    private final byte @Nullable [] traceField;
    /** Redis's clock (ms) when the pop (or ORDERLY step) that took this delivery ran; for its lateness. */
    private final long poppedAtRedisMillis;
    /** Local {@link System#nanoTime()} when that pop's reply was read. */
    private final long receivedNanos;

    /**
     * @param token  CONCURRENT ({@code leased}): the lease token the pop issued; ORDERLY: the owner's epoch
     * @param leased true for a CONCURRENT delivery (leased), false for one an ORDERLY owner took
     */
    /**
     * @param member the message's member (its body, or the tagged id)
     * @param stored the envelope (or legacy trace context) the pop returned, or null
     * @param traceField the field of the body's trace record the pop read, or null
     */
    Delivery(SlotKeys slotKeys, byte[] member, double score, int attempt, long token, boolean leased, int logBodyChars,
            long poppedAtRedisMillis, long receivedNanos, byte @Nullable [] stored, byte @Nullable [] traceField) {
        this.stored = stored;
        this.traceField = traceField;
        this.logBodyChars = logBodyChars;
        this.poppedAtRedisMillis = poppedAtRedisMillis;
        this.receivedNanos = receivedNanos;
        this.slotKeys = slotKeys;
        this.member = member;
        this.score = score;
        this.attempt = attempt;
        this.token = token;
        this.leased = leased;
    }

    public String topic() {
        return slotKeys.topic();
    }

    public int slot() {
        return slotKeys.slot();
    }

    /**
     * The serialized payload: the body as sent (for a message sent with an id, the latest send's). An id message whose
     * payload is not stored (its envelope was removed by hand, or is damaged) has none: then this throws, and the
     * delivery ends as unreadable.
     */
    public byte[] body() {
        if (!EnvelopeKeys.isIdMember(member)) {
            return member;
        }
        byte[] payload = envelope().payload();
        if (payload == null) {
            // no quote in the text: log lines keep an exception's text up to its first quote unless bodies are logged
            throw new IllegalStateException("this id message has no stored payload: its envelope in the slot's msg"
                    + " HASH is missing or damaged");
        }
        return payload;
    }

    public String bodyAsString() {
        return new String(body(), StandardCharsets.UTF_8);
    }

    /**
     * The message's identity in Redis, what ack, nack and admin operations name: its body, or for a message sent with
     * an id the byte 0xFF followed by the id's UTF-8 bytes.
     */
    /** The field of the body's trace record the pop read (for the ack), or null. */
    byte @Nullable [] traceField() {
        return traceField;
    }

    public byte[] member() {
        return member;
    }

    /** The id the message was sent with, or null: its body is its identity. */
    public @Nullable String id() {
        return EnvelopeKeys.idOf(member);
    }

    /**
     * The headers the message was sent with, the trace context's included ({@code traceparent}, ...), as the latest
     * send of its identity set them; empty when none. Unmodifiable. A message of an ORDERLY topic sent with a group
     * has that group here too, as {@code rmq-group} (see {@link #group()}): the first of the headers, after only a
     * {@code traceparent} that the envelope stores compactly.
     */
    public Map<String, String> headers() {
        return envelope().headers();
    }

    /**
     * The group the message was sent with, as stored with it: only for a message of an ORDERLY topic (its producer
     * knew the mode when sending; see {@code docs/ordering.md}); null for a message sent without a group, and for any
     * message of a CONCURRENT topic, whose group routes it but is not stored.
     */
    public @Nullable String group() {
        return envelope().headers().get(Envelope.GROUP);
    }

    /** The store score it was popped with: due time in epoch ms (time types) or priority. */
    public double score() {
        return score;
    }

    /** 1 on the first delivery, n + 1 after n failed attempts. */
    public int attempt() {
        return attempt;
    }

    /**
     * Redis-clock ms until which this delivery is leased: the whole milliseconds of its {@link #token()}; -1 for a
     * delivery of an ORDERLY slot, which is held under its owner's epoch, not leased.
     */
    public long leaseDeadline() {
        return leased ? Math.floorDiv(token, RmqRedisLeases.TOKEN_UNITS) : -1;
    }

    /**
     * The fencing token of this delivery. CONCURRENT: its prepare score (the lease deadline in ms plus a fraction that
     * makes it unique) times {@link RmqRedisLeases#TOKEN_UNITS}; every pop and every extension of a slot issues a
     * higher one. ORDERLY: the epoch under which the owner took the slot.
     */
    public long token() {
        return token;
    }

    /**
     * The headers a propagator reads the sender's trace context from ({@code rmq.observation.propagate-context}), e.g.
     * {@code traceparent}: the message's {@link #headers()} (which hold the context when the sender stored one), or a
     * context that an engine before headers stored beside the body (read only with {@code RmqOptions#propagateContext}
     * on). Unmodifiable.
     */
    public Map<String, String> context() {
        return headers();
    }

    private Envelope envelope() {
        Envelope decoded = envelope;
        if (decoded == null) {
            decoded = Envelope.read(stored);
            envelope = decoded;
        }
        return decoded;
    }

    SlotKeys slotKeys() {
        return slotKeys;
    }

    /**
     * Estimated Redis clock now (ms): Redis's time when the pop ran plus the local time elapsed since its reply (no
     * call to Redis; one clock read).
     */
    long redisNowEstimate() {
        if (receivedNanos == 0) {
            return poppedAtRedisMillis; // the reply's arrival was not timed (no instrumentation): the pop's time
        }
        return poppedAtRedisMillis + (System.nanoTime() - receivedNanos) / 1_000_000;
    }

    /** An extension issued {@code token}: the lease now lasts longer and the old token is fenced. */
    void leaseExtendedTo(long token) {
        this.token = token;
    }

    /** Called before an extension of this lease is sent; {@code applied} completes after its token is stored. */
    void extensionUnderWay(CompletableFuture<Void> applied) {
        this.extension = applied;
    }

    CompletableFuture<Void> extension() {
        CompletableFuture<Void> underWay = extension;
        return underWay != null ? underWay : NO_EXTENSION;
    }

    /**
     * Topic, slot, attempt, score, the id (ids are identifiers) and the body's size; the body itself (truncated) only
     * when the engine was told to log bodies ({@code RmqOptions#logBodyChars}, {@code rmq.log-bodies}): bodies may
     * hold personal data. Header values never (names only).
     */
    @Override
    public String toString() {
        String id = id();
        String head = "Delivery[" + topic() + "/" + slot() + " attempt " + attempt + " score " + (long) score
                + (id == null ? "" : " id " + (id.length() > 64 ? id.substring(0, 64) + "..." : id))
                + (stored == null || headers().isEmpty() ? "" : " headers " + headers().keySet()) + " body ";
        byte[] body;
        try {
            body = body();
        }
        catch (IllegalStateException ex) {
            return head + "missing]";
        }
        if (logBodyChars <= 0) {
            return head + body.length + " bytes]";
        }
        String text = new String(body, StandardCharsets.UTF_8);
        return head + (text.length() > logBodyChars ? text.substring(0, logBodyChars) + "..." : text) + "]";
    }
}
