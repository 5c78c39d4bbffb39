package io.rmq.admin.internal;

import io.rmq.admin.RmqAdmin;
import io.rmq.core.BodyCodec;
import io.rmq.core.TopicRegistry;
import io.rmq.core.internal.Seam;
import io.rmq.redis.internal.RmqRedisAdmin;

/**
 * Makes the {@link io.rmq.Rmq} facade's admin operations: {@link RmqAdmin}'s constructor takes engine internals and is
 * not public, so the class registers this factory in {@link #SEAM} when it is initialized. Stateless.
 */
@FunctionalInterface
public interface AdminFactory {

    Seam<AdminFactory> SEAM = new Seam<>(RmqAdmin.class);

    /** @param codec serializes bodies exactly as the producer does, so a body finds the message it was sent as */
    RmqAdmin create(RmqRedisAdmin redis, TopicRegistry topics, BodyCodec codec);
}
