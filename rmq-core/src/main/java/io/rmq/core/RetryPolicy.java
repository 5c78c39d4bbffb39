package io.rmq.core;

/**
 * What happens after a failed attempt.
 *
 * @param maxRetries how many retries follow the first attempt; the failure after the last retry sends the message
 *                   to the dead queue (0 = the first failure does)
 * @param backoff    the wait before each retry
 */
public record RetryPolicy(int maxRetries, BackoffPolicy backoff) {

    /** 16 retries, as in the original RMQ design, with exponential backoff. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(16, BackoffPolicy.DEFAULT);

    public RetryPolicy {
        if (maxRetries < 0) {
            throw new RmqInvalidArgumentException("maxRetries", maxRetries, "must be zero or positive");
        }
        if (backoff == null) {
            throw new RmqInvalidArgumentException("backoff", null, "must not be null");
        }
    }
}
