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
 * @param lookAhead CONCURRENT listeners of FIXED_TIME and RANGE_MERGE topics: how long before its due time a message
 *                  may be popped (zero, the default: popped once due). The container holds a message popped ahead
 *                  and calls the handler not before its due time (by its estimate of Redis's clock), so a pop's
 *                  round trip under load no longer makes the handler late. The trade-off: a message leaves the store
 *                  up to this long before it is due, so in that window a duplicate no longer merges into it (it is
 *                  delivered separately, at its own time), a FIXED_TIME duplicate with a later time no longer
 *                  postpones it, and a cancel finds it in flight (it is marked; the delivery ends normally if the
 *                  handler acks it). PRIORITY topics, ORDERLY listeners and {@link RmqConsumer}'s own polls
 *                  ignore it. Zero or positive, at most 1 s and at most a third of the lease
 */
public record ConsumerSettings(int batchSize, Duration lease, RetryPolicy retry, FailurePolicy failures,
        Duration lookAhead) {

    /** The longest {@link #lookAhead()} accepted. */
    public static final Duration MAX_LOOK_AHEAD = Duration.ofSeconds(1);

    public static final ConsumerSettings DEFAULT = new ConsumerSettings(64, Duration.ofSeconds(30), RetryPolicy.DEFAULT);

    public ConsumerSettings(int batchSize, Duration lease, RetryPolicy retry) {
        this(batchSize, lease, retry, FailurePolicy.DEFAULT);
    }

    /** Without look-ahead (messages are popped once due). */
    public ConsumerSettings(int batchSize, Duration lease, RetryPolicy retry, FailurePolicy failures) {
        this(batchSize, lease, retry, failures, Duration.ZERO);
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
        if (lookAhead == null) {
            lookAhead = Duration.ZERO;
        }
        if (lookAhead.isNegative() || lookAhead.compareTo(MAX_LOOK_AHEAD) > 0
                || lookAhead.toMillis() * 3 > lease.toMillis()) {
            throw new RmqInvalidArgumentException("lookAhead", lookAhead,
                    "must be zero or positive, at most 1 s and at most a third of the lease (" + lease + ")");
        }
    }

    public ConsumerSettings withBatchSize(int batchSize) {
        return new ConsumerSettings(batchSize, lease, retry, failures, lookAhead);
    }

    public ConsumerSettings withLease(Duration lease) {
        return new ConsumerSettings(batchSize, lease, retry, failures, lookAhead);
    }

    public ConsumerSettings withRetry(RetryPolicy retry) {
        return new ConsumerSettings(batchSize, lease, retry, failures, lookAhead);
    }

    public ConsumerSettings withFailures(FailurePolicy failures) {
        return new ConsumerSettings(batchSize, lease, retry, failures, lookAhead);
    }

    /** See {@link #lookAhead()}: off (zero) by default. */
    public ConsumerSettings withLookAhead(Duration lookAhead) {
        return new ConsumerSettings(batchSize, lease, retry, failures, lookAhead);
    }
}
