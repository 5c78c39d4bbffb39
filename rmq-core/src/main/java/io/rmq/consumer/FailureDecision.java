package io.rmq.consumer;

import java.time.Duration;

import io.rmq.core.RmqInvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * What becomes of a failed delivery, as an {@link RmqErrorHandler} decides it.
 */
public final class FailureDecision {

    private static final FailureDecision STANDARD = new FailureDecision("standard", null);
    private static final FailureDecision RETRY = new FailureDecision("retry", "");
    private static final FailureDecision DEAD = new FailureDecision("dead", "d");
    private static final FailureDecision DROP = new FailureDecision("drop", "x");

    private final String name;
    /** The action the scripts take (see fail() in _common.lua); null for {@link #standard()} (not resolved yet). */
    private final @Nullable String action;

    private FailureDecision(String name, @Nullable String action) {
        this.name = name;
        this.action = action;
    }

    /**
     * As configured: a non-retryable error ({@link RmqNonRetryableException}, or a class the listener lists in
     * {@code noRetryFor}) goes to the dead queue at once; anything else is retried after its backoff, and goes to
     * the dead queue after {@code maxRetries} retries.
     */
    public static FailureDecision standard() {
        return STANDARD;
    }

    /** Retried after its backoff, to the dead queue after {@code maxRetries} retries, whatever the error. */
    public static FailureDecision retry() {
        return RETRY;
    }

    /** Retried after {@code delay}, even past {@code maxRetries} (the attempt is counted). */
    public static FailureDecision retryAfter(Duration delay) {
        if (delay == null || delay.isNegative()) {
            throw new RmqInvalidArgumentException("delay", delay, "must be zero or positive");
        }
        return new FailureDecision("retry after " + delay.toMillis() + " ms", Long.toString(delay.toMillis()));
    }

    /** To the dead queue at once, with the error as its reason. */
    public static FailureDecision dead() {
        return DEAD;
    }

    /** Removed for good: neither retried nor kept in the dead queue. */
    public static FailureDecision drop() {
        return DROP;
    }

    boolean isStandard() {
        return this == STANDARD;
    }

    /**
     * The scripts' action code for a decision: '' the retry policy (also for null and {@link #standard()}, which the
     * consumer resolves before it writes), 'd' dead, 'x' drop, or the delay in ms.
     */
    static @Nullable String actionOf(@Nullable FailureDecision decision) {
        return decision == null || decision.isStandard() ? "" : decision.action;
    }

    @Override
    public String toString() {
        return name;
    }
}
