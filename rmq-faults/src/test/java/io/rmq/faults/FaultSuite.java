package io.rmq.faults;

import java.util.List;

import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * What every fault suite shares: one set of Lettuce client resources per class for the test's own observers (a
 * failover watch, raw commands), and the sender's client, which talks to Redis as an application without Spring does:
 * through RMQ's own client with its default settings ({@link RedisClientSettings#DEFAULT}) and resources of its own.
 * <p>
 * The sender's resources are its own because they must end with it: a connection attempt that failed during a fault
 * leaves a handshake timeout on the resources' timer (the command timeout); on resources that outlived the client,
 * it fired after the client had released its event loops, and netty logged "Failed to submit a listener notification
 * task. Event loop shut down?" once per attempt, up to a minute later, in whichever scenario ran then.
 */
abstract class FaultSuite {

    static ClientResources resources;

    @BeforeAll
    static void openClientResources() {
        resources = DefaultClientResources.create();
    }

    @AfterAll
    static void releaseClientResources() {
        resources.shutdown();
    }

    /** The sender's client of a standalone Redis; the {@link FaultRun} given it closes it. */
    static RmqRedisClient sender(RedisNode redis) {
        return RmqRedisClient.standalone(redis.uri(), null, null, RedisClientSettings.DEFAULT);
    }

    /** The sender's client of a Redis Cluster; the {@link FaultRun} given it closes it. */
    static RmqRedisClient sender(List<RedisURI> seeds) {
        return RmqRedisClient.cluster(seeds, null, null, RedisClientSettings.DEFAULT);
    }
}
