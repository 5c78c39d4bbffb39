package io.rmq.consumer;

import java.time.Duration;

import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;

/**
 * How a consumer pops and what happens to failures.
 *
 * @param batchSize most messages popped from one slot in one call
 * @param lease     how long a popped message stays reserved before it counts as failed and is redelivered
 * @param retry     retries, backoff and when a message goes to the dead queue
 * @param failures  non-retryable errors, the error handler and the dead-letter topic
 */
public record ConsumerSettings(int batchSize, Duration lease, RetryPolicy retry, FailurePolicy failures) {

    public static final ConsumerSettings DEFAULT = new ConsumerSettings(64, Duration.ofSeconds(30), RetryPolicy.DEFAULT);

    public ConsumerSettings(int batchSize, Duration lease, RetryPolicy retry) {
        this(batchSize, lease, retry, FailurePolicy.DEFAULT);
    }

    public ConsumerSettings {
        if (batchSize < 1 || batchSize > 1000) {
            throw new RmqInvalidArgumentException("batchSize", batchSize, "must be between 1 and 1000");
        }
        if (lease == null || lease.toMillis() < 100) {
            throw new RmqInvalidArgumentException("lease", lease, "must be at least 100 ms");
        }
        if (retry == null) {
            throw new RmqInvalidArgumentException("retry", null, "must not be null");
        }
        if (failures == null) {
            failures = FailurePolicy.DEFAULT;
        }
    }

    public ConsumerSettings withBatchSize(int batchSize) {
        return new ConsumerSettings(batchSize, lease, retry, failures);
    }

    public ConsumerSettings withLease(Duration lease) {
        return new ConsumerSettings(batchSize, lease, retry, failures);
    }

    public ConsumerSettings withRetry(RetryPolicy retry) {
        return new ConsumerSettings(batchSize, lease, retry, failures);
    }

    public ConsumerSettings withFailures(FailurePolicy failures) {
        return new ConsumerSettings(batchSize, lease, retry, failures);
    }
}
