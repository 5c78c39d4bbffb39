package io.rmq.consumer;

import java.time.Duration;

import io.rmq.core.RmqInvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * What becomes of a failed delivery, as an {@link RmqErrorHandler} decides it.
 */
public final class FailureDecision {

    private static final FailureDecision STANDARD = new FailureDecision("standard", null);
    private static final FailureDecision RETRY = new FailureDecision("retry", null);
    private static final FailureDecision DEAD = new FailureDecision("dead", null);
    private static final FailureDecision DROP = new FailureDecision("drop", null);

    private final String name;
    /** For {@link #retryAfter}: the delay; null for the others. */
    private final @Nullable Duration delay;

    private FailureDecision(String name, @Nullable Duration delay) {
        this.name = name;
        this.delay = delay;
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
        return new FailureDecision("retry after " + delay.toMillis() + " ms", delay);
    }

    /** To the dead queue at once, with the error as its reason. */
    public static FailureDecision dead() {
        return DEAD;
    }

    /** Removed for good: neither retried nor kept in the dead queue. */
    public static FailureDecision drop() {
        return DROP;
    }

    /** The delay of a {@link #retryAfter} decision; null for any other. */
    public @Nullable Duration retryDelay() {
        return delay;
    }

    @Override
    public String toString() {
        return name;
    }
}
