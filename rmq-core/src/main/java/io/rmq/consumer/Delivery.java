package io.rmq.consumer;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.RmqKeys.SlotKeys;

/**
 * One delivery of a message: leased to this consumer until {@link #leaseDeadline()}. The deadline is also the
 * fencing token: ack, nack and extension succeed only while the prepare entry still carries it.
 */
public final class Delivery {

    private final SlotKeys slotKeys;
    private final byte[] body;
    private final double score;
    private final int attempt;
    private volatile long leaseDeadline;
    /**
     * Completes once the lease extension under way (if any) has stored its new token here. An ack or nack that Redis
     * fenced because that extension ran first must wait for it: its reply can be handled before the extension's
     * token update runs (the thread that sent the extension may attach the update only after the reply arrived).
     */
    private volatile CompletableFuture<Void> extension = CompletableFuture.completedFuture(null);
    /** How many characters of the body {@link #toString()} (and so every log line) shows: 0 by default. */
    private final int logBodyChars;

    Delivery(SlotKeys slotKeys, byte[] body, double score, int attempt, long leaseDeadline, int logBodyChars) {
        this.logBodyChars = logBodyChars;
        this.slotKeys = slotKeys;
        this.body = body;
        this.score = score;
        this.attempt = attempt;
        this.leaseDeadline = leaseDeadline;
    }

    public String topic() {
        return slotKeys.topic();
    }

    public int slot() {
        return slotKeys.slot();
    }

    /** The stored body (the message's identity). */
    public byte[] body() {
        return body;
    }

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** The store score it was popped with: due time in epoch ms (time types) or priority. */
    public double score() {
        return score;
    }

    /** 1 on the first delivery, n + 1 after n failed attempts. */
    public int attempt() {
        return attempt;
    }

    /** Redis-clock ms until which this delivery is leased; the fencing token. */
    public long leaseDeadline() {
        return leaseDeadline;
    }

    SlotKeys slotKeys() {
        return slotKeys;
    }

    void leaseExtendedTo(long deadline) {
        this.leaseDeadline = deadline;
    }

    /** Called before an extension of this lease is sent; {@code applied} completes after its token is stored. */
    void extensionUnderWay(CompletableFuture<Void> applied) {
        this.extension = applied;
    }

    CompletableFuture<Void> extension() {
        return extension;
    }

    /**
     * Topic, slot, attempt, score and the body's size; the body itself (truncated) only when the engine was told to
     * log bodies ({@code Rmq.Options#logBodyChars}, {@code rmq.log-bodies}): bodies may hold personal data.
     */
    @Override
    public String toString() {
        String head = "Delivery[" + topic() + "/" + slot() + " attempt " + attempt + " score " + (long) score + " body ";
        if (logBodyChars <= 0) {
            return head + body.length + " bytes]";
        }
        String text = bodyAsString();
        return head + (text.length() > logBodyChars ? text.substring(0, logBodyChars) + "..." : text) + "]";
    }
}
