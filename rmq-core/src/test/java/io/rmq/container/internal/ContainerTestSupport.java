package io.rmq.container.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.ThreadFactory;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the container tests that need their own engine (their own instrumentation): each concrete class runs once
 * against a standalone Redis and once against a 3-master cluster ({@code @ParameterizedClass
 * @EnumSource(RedisTopology.class)}); each engine gets its own key prefix. What a test starts ({@link #container}) is
 * stopped after it, then the engine and the client are closed.
 */
@ExtendWith(RedisServersExtension.class)
abstract class ContainerTestSupport {

    /** Small batches, a short backoff. */
    static final ConsumerSettings ORDERLY_FAST = new ConsumerSettings(8, Duration.ofSeconds(5),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));

    final RedisTopology topology;
    RmqRedisClient client;
    Rmq engine;
    ListenerContainer container;

    ContainerTestSupport(RedisTopology topology) {
        this.topology = topology;
    }

    @AfterEach
    void stopAll() {
        if (container != null) {
            container.stop();
        }
        if (engine != null) {
            engine.close();
        }
        if (client != null) {
            client.close();
        }
    }

    /** The test's engine, with {@code instrumentation}, on a client as the starter builds it. */
    Rmq engine(RmqInstrumentation instrumentation) {
        client = switch (topology) {
            case STANDALONE -> RmqRedisClient.standalone(topology.uris().get(0), null, TestRedisServers.resources(),
                    RedisClientSettings.DEFAULT);
            case CLUSTER -> RmqRedisClient.cluster(topology.uris(), null, TestRedisServers.resources(),
                    RedisClientSettings.DEFAULT);
        };
        String prefix = "t-" + UUID.randomUUID().toString().substring(0, 8);
        engine = Rmq.create(client.client(), RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(instrumentation));
        return engine;
    }

    /** Sends {@code bodies} to a FIXED_TIME topic, all due a minute ago, in this order. */
    void sendDue(String topic, String... bodies) {
        Instant base = Instant.now().minusSeconds(60);
        for (int i = 0; i < bodies.length; i++) {
            engine.producer().sendFixedTime(topic, bodies[i], base.plusMillis(i));
        }
    }

    /** ORDERLY, one handler thread, a 1 s ownership (renewed every 200 ms), threads from {@code threads}. */
    static ContainerOptions orderlyOptions(String id, Duration shutdownTimeout, ThreadFactory threads) {
        return new ContainerOptions(id, 1, Duration.ofSeconds(1), shutdownTimeout, threads)
                .withMode(ConsumeMode.ORDERLY).withOwnershipTimeout(Duration.ofSeconds(1));
    }

    /** Starts the test's ORDERLY container ({@link #ORDERLY_FAST}) on {@code topic}. */
    ListenerContainer startOrderly(String topic, MessageHandler<String> handler, ContainerOptions options,
            SlotCoordinator coordinator) {
        container = engine.container(topic, ORDERLY_FAST, String.class, handler, options, coordinator);
        container.start();
        return container;
    }
}
