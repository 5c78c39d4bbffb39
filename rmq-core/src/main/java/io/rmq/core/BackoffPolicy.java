package io.rmq.core;

import java.time.Duration;

/**
 * How long a failed message waits before its next attempt: {@code min(max, initial * multiplier^(failures-1))},
 * reduced by a random fraction of up to {@code jitter}. Computed inside the Redis scripts (one implementation for
 * handler failures and lease expiry).
 *
 * @param initial    delay after the first failure
 * @param multiplier growth per further failure; 1 means a fixed delay
 * @param max        upper bound of the delay
 * @param jitter     fraction (0 to 1) by which each delay is randomly shortened, to spread retry storms
 */
public record BackoffPolicy(Duration initial, double multiplier, Duration max, double jitter) {

    public static final BackoffPolicy DEFAULT = exponential(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(10), 0.2);

    public BackoffPolicy {
        if (initial == null || initial.isNegative()) {
            throw new RmqInvalidArgumentException("backoff initial", initial, "must be zero or positive");
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new RmqInvalidArgumentException("backoff multiplier", multiplier, "must be a finite number >= 1");
        }
        if (max == null || max.compareTo(initial) < 0) {
            throw new RmqInvalidArgumentException("backoff max", max, "must be at least the initial delay " + initial);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new RmqInvalidArgumentException("backoff jitter", jitter, "must be between 0 and 1");
        }
    }

    public static BackoffPolicy fixed(Duration delay) {
        return new BackoffPolicy(delay, 1.0, delay, 0.0);
    }

    public static BackoffPolicy exponential(Duration initial, double multiplier, Duration max, double jitter) {
        return new BackoffPolicy(initial, multiplier, max, jitter);
    }
}
