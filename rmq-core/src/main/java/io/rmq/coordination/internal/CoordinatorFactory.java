package io.rmq.coordination.internal;

import io.rmq.coordination.RedisSlotCoordinator;
import io.rmq.core.internal.Seam;
import io.rmq.redis.internal.RmqRedis;

/**
 * Makes the {@link io.rmq.Rmq} facade's default coordinator: {@link RedisSlotCoordinator}'s constructor takes engine
 * internals and is not public, so the class registers this factory in {@link #SEAM} when it is initialized.
 * Stateless.
 */
@FunctionalInterface
public interface CoordinatorFactory {

    Seam<CoordinatorFactory> SEAM = new Seam<>(RedisSlotCoordinator.class);

    RedisSlotCoordinator create(RmqRedis redis);
}
