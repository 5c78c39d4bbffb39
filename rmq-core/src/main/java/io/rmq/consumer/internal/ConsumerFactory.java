package io.rmq.consumer.internal;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.TopicDefinition;
import io.rmq.core.internal.Seam;
import io.rmq.redis.internal.RmqRedis;

/**
 * Makes the {@link io.rmq.Rmq} facade's consumers: {@link RmqConsumer}'s constructor takes engine internals and is
 * not public, so the class registers this factory in {@link #SEAM} when it is initialized. Stateless.
 */
@FunctionalInterface
public interface ConsumerFactory {

    Seam<ConsumerFactory> SEAM = new Seam<>(RmqConsumer.class);

    RmqConsumer create(RmqRedis redis, TopicDefinition topic, ConsumerSettings settings, RmqConsumer.Parts parts);
}
