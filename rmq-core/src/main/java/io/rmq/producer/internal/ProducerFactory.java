package io.rmq.producer.internal;

import io.rmq.core.BodyCodec;
import io.rmq.core.TopicRegistry;
import io.rmq.core.internal.Seam;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.producer.MessageLimits;
import io.rmq.producer.RmqProducer;
import io.rmq.redis.internal.RmqRedis;

/**
 * Makes the {@link io.rmq.Rmq} facade's producer: {@link RmqProducer}'s constructor takes engine internals and is not
 * public, so the class registers this factory in {@link #SEAM} when it is initialized. Stateless.
 */
@FunctionalInterface
public interface ProducerFactory {

    Seam<ProducerFactory> SEAM = new Seam<>(RmqProducer.class);

    RmqProducer create(RmqRedis redis, TopicRegistry topics, BodyCodec codec, int maxBodyBytes, MessageLimits limits,
            RmqInstrumentation instrumentation);
}
