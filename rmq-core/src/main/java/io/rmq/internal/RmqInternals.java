package io.rmq.internal;

import io.rmq.Rmq;
import io.rmq.core.internal.Seam;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.RmqRedisAdmin;
import io.rmq.redis.internal.WakeUpSubscriber;

/**
 * The engine plumbing behind an {@link Rmq}, for RMQ's Spring layer, benchmarks and tests: the facade keeps it
 * private and registers an {@link Access} to it in {@link #SEAM} when the class is initialized. Stateless.
 */
public final class RmqInternals {

    /** What {@link Rmq} registers: reads of its private parts. */
    public interface Access {

        RmqRedis redis(Rmq rmq);

        RmqRedisAdmin redisAdmin(Rmq rmq);

        WakeUpSubscriber wakeUps(Rmq rmq);
    }

    public static final Seam<Access> SEAM = new Seam<>(Rmq.class);

    private RmqInternals() {
    }

    /** Low-level Redis access, the hot path. */
    public static RmqRedis redis(Rmq rmq) {
        return SEAM.get().redis(rmq);
    }

    /** Low-level Redis access, admin and inspection (applications use {@link Rmq#admin()}). */
    public static RmqRedisAdmin redisAdmin(Rmq rmq) {
        return SEAM.get().redisAdmin(rmq);
    }

    /** Announcements of newly due messages, for sleeping consumers (subscribes on first registration). */
    public static WakeUpSubscriber wakeUps(Rmq rmq) {
        return SEAM.get().wakeUps(rmq);
    }
}
