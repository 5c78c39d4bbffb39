package io.rmq.consumer.internal;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.rmq.consumer.Delivery;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.redis.internal.RmqRedisLeases;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.redis.internal.TraceContexts;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Delivery} the engine hands out: what the pop (or ORDERLY step) returned, the token that fences its
 * settlement, and the bookkeeping of a lease extension under way. Threads: the fields are final but the token and the
 * extension, which the thread extending the lease writes (volatile) and settling threads read; the envelope is
 * decoded at most a few times (a benign race: each decode gives an equal value).
 */
public final class DefaultDelivery implements Delivery {

    private final SlotKeys slotKeys;
    /** The message's identity in Redis: its body, a grouped body (0xFE, its group, the body), or 0xFF and its id. */
    private final byte[] member;
    /** The body of a member that holds one (for a grouped member a copy, made once); null for an id member. */
    private final byte @Nullable [] body;
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
     * The body's envelope key ({@link EnvelopeKeys#of}) when the pop computed it to read the slot's trace records (see
     * {@link RmqRedisLeases#pop}); null otherwise.
     */
    private final byte @Nullable [] envelopeKey;
    /** Redis's clock (ms) when the pop (or ORDERLY step) that took this delivery ran; for its lateness. */
    private final long poppedAtRedisMillis;
    /** Local {@link System#nanoTime()} when that pop's reply was read. */
    private final long receivedNanos;

    /**
     * @param member the message's member (its body, a grouped body, or the tagged id)
     * @param token  CONCURRENT ({@code leased}): the lease token the pop issued; ORDERLY: the owner's epoch
     * @param leased true for a CONCURRENT delivery (leased), false for one an ORDERLY owner took
     * @param stored the envelope (or legacy trace context) the pop returned, or null
     * @param envelopeKey the body's envelope key, when the pop computed it (to read its trace record), or null
     */
    public DefaultDelivery(SlotKeys slotKeys, byte[] member, double score, int attempt, long token, boolean leased,
            int logBodyChars, long poppedAtRedisMillis, long receivedNanos, byte @Nullable [] stored,
            byte @Nullable [] envelopeKey) {
        this.stored = stored;
        this.envelopeKey = envelopeKey;
        this.logBodyChars = logBodyChars;
        this.poppedAtRedisMillis = poppedAtRedisMillis;
        this.receivedNanos = receivedNanos;
        this.slotKeys = slotKeys;
        this.member = member;
        // every delivery's body is read at least once (its conversion): a grouped one is copied here, not per read
        this.body = EnvelopeKeys.isIdMember(member) ? null : EnvelopeKeys.bodyOf(member);
        this.score = score;
        this.attempt = attempt;
        this.token = token;
        this.leased = leased;
    }

    /** {@code delivery} as this engine made it: one made elsewhere cannot be settled here. */
    static DefaultDelivery of(Delivery delivery) {
        if (delivery instanceof DefaultDelivery made) {
            return made;
        }
        throw new RmqInvalidArgumentException("delivery", delivery, "must be one this engine handed out (a pop or an"
                + " ORDERLY step)");
    }

    @Override
    public String topic() {
        return slotKeys.topic();
    }

    @Override
    public int slot() {
        return slotKeys.slot();
    }

    @Override
    public byte[] body() {
        if (body != null) {
            return body;
        }
        byte[] payload = envelope().payload();
        if (payload == null) {
            // no quote in the text: log lines keep an exception's text up to its first quote unless bodies are logged
            throw new IllegalStateException("this id message has no stored payload: its envelope in the slot's msg"
                    + " HASH is missing or damaged");
        }
        return payload;
    }

    @Override
    public String bodyAsString() {
        return new String(body(), StandardCharsets.UTF_8);
    }

    /**
     * The envelope key the ack names for this delivery (ack.lua forgets the envelope and trace record by it, with no
     * digest in Lua): a body's that came with an envelope or a trace record; {@link EnvelopeKeys#NOTHING_STORED} for
     * a body whose pop read the trace records and found none; null for an id (its member is its key) and for a body
     * that came with neither otherwise (usually nothing to forget: Redis looks only where the slot has some).
     */
    byte @Nullable [] envelopeKey() {
        if (envelopeKey != null) {
            return envelopeKey;
        }
        return stored == null || EnvelopeKeys.isIdMember(member) ? null : EnvelopeKeys.of(member);
    }

    @Override
    public byte[] member() {
        return member;
    }

    @Override
    public @Nullable String id() {
        return EnvelopeKeys.idOf(member);
    }

    @Override
    public Map<String, String> headers() {
        return envelope().headers();
    }

    @Override
    public @Nullable String group() {
        String group = EnvelopeKeys.groupOf(member); // a grouped body's, with no envelope to decode
        return group != null ? group : envelope().headers().get(Envelope.GROUP);
    }

    @Override
    public double score() {
        return score;
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public long leaseDeadline() {
        return leased ? Math.floorDiv(token, RmqRedisLeases.TOKEN_UNITS) : -1;
    }

    @Override
    public long token() {
        return token;
    }

    @Override
    public Map<String, String> context() {
        return headers();
    }

    private Envelope envelope() {
        Envelope decoded = envelope;
        if (decoded == null) {
            decoded = Envelope.read(stored);
            String group = EnvelopeKeys.groupOf(member);
            if (group != null) {
                decoded = decoded.withGroup(group); // kept in the member: a header like an id message's
            }
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
