package io.rmq.core;

/**
 * What happens after a failed attempt.
 *
 * @param maxRetries  how many retries follow the first attempt; the failure after the last retry sends the message
 *                    to the dead queue (0 = the first failure does)
 * @param backoff     the wait before each retry
 * @param deadLetters how many dead messages the topic keeps, and how long (applied when this policy buries one)
 */
public record RetryPolicy(int maxRetries, BackoffPolicy backoff, DeadLetterRetention deadLetters) {

    /** 16 retries, as in the original RMQ design, with exponential backoff; the default dead-letter retention. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(16, BackoffPolicy.DEFAULT);

    /** With the default dead-letter retention ({@link DeadLetterRetention#DEFAULT}). */
    public RetryPolicy(int maxRetries, BackoffPolicy backoff) {
        this(maxRetries, backoff, DeadLetterRetention.DEFAULT);
    }

    public RetryPolicy {
        if (maxRetries < 0) {
            throw new RmqInvalidArgumentException("maxRetries", maxRetries, "must be zero or positive");
        }
        if (backoff == null) {
            throw new RmqInvalidArgumentException("backoff", null, "must not be null");
        }
        if (deadLetters == null) {
            throw new RmqInvalidArgumentException("deadLetters", null, "must not be null");
        }
    }

    /** This policy keeping dead messages as {@code retention} says. */
    public RetryPolicy withDeadLetters(DeadLetterRetention retention) {
        return new RetryPolicy(maxRetries, backoff, retention);
    }
}
