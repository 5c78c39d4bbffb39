/**
 * All of RMQ's Redis access: its Lettuce client, the Lua scripts and the commands around them. The API here is the
 * client ({@link io.rmq.redis.RmqRedisClient}, {@link io.rmq.redis.RedisClientSettings}); the plumbing is in
 * {@code io.rmq.redis.internal}, and the scripts stay at {@code io/rmq/redis/scripts/}.
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.redis;

import org.jspecify.annotations.NullMarked;
