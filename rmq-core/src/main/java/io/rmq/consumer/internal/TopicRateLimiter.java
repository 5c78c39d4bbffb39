package io.rmq.consumer.internal;

import java.util.concurrent.atomic.AtomicLong;

import io.rmq.core.RateLimit;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;

/**
 * One consumer's handle on a topic's cluster-wide rate limit (the token bucket of rate.lua): permits are taken
 * before messages are, and permits a pop did not use are given back with the next request.
 */
public final class TopicRateLimiter {

    private final RmqRedis redis;
    private final String topic;
    private final RateLimit limit;
    private final AtomicLong unused = new AtomicLong();

    TopicRateLimiter(RmqRedis redis, String topic, RateLimit limit) {
        this.redis = redis;
        this.topic = topic;
        this.limit = limit;
    }

    public RateLimit limit() {
        return limit;
    }

    /**
     * Takes up to {@code wanted} permits, waiting at most {@code timeoutMillis} for Redis.
     *
     * @return {permits granted, ms until a permit is free when none was}
     */
    public long[] acquire(int wanted, long timeoutMillis) {
        // given back at most once: if the call fails, they are lost (the limit errs on the low side)
        long back = unused.getAndSet(0);
        return RedisGateway.await(redis.ratePermits(topic, limit.perSecond(), limit.burst(), wanted, back),
                "taking rate-limit permits of topic '" + topic + "'", timeoutMillis);
    }

    /** Permits taken but not used (fewer messages were due): returned with the next request. */
    public void giveBack(long permits) {
        if (permits > 0) {
            unused.addAndGet(permits);
        }
    }
}
