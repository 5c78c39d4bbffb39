package io.rmq.redis.internal;

/**
 * Marks RMQ's own cluster client, which refreshes its topology by itself, so {@link RedisGateway} does not warn that
 * it would miss a failover. (The client class stays package-private beside {@code RmqRedisClient}.)
 */
public interface FollowsFailover {
}
