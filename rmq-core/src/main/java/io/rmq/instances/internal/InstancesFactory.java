package io.rmq.instances.internal;

import java.util.Collection;
import java.util.function.Supplier;

import io.rmq.container.ListenerContainer;
import io.rmq.core.internal.Seam;
import io.rmq.instances.RmqInstances;
import io.rmq.redis.internal.RmqRedis;

/**
 * Makes the {@link io.rmq.Rmq} facade's instance registry: {@link RmqInstances}'s constructor takes engine internals
 * and is not public, so the class registers this factory in {@link #SEAM} when it is initialized. Stateless.
 */
@FunctionalInterface
public interface InstancesFactory {

    Seam<InstancesFactory> SEAM = new Seam<>(RmqInstances.class);

    /** @param containers the listener containers the engine made, read at every heartbeat */
    RmqInstances create(RmqRedis redis, Supplier<Collection<ListenerContainer>> containers);
}
