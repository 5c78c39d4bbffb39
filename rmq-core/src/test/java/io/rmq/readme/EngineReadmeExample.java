package io.rmq.readme;

import java.time.Instant;

import io.lettuce.core.RedisURI;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.MessageRef;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.TopicType;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;

/**
 * The example of docs/engine.md ("Using the engine without Spring"), compiled here so it cannot name an API that does
 * not exist; QuickStartReadmeTest (rmq-samples) checks the docs block is this region, with the method's indentation
 * removed. Not run: it talks to redis://localhost.
 */
final class EngineReadmeExample {

    record Order(String id) {
    }

    private EngineReadmeExample() {
    }

    static void close(Order order) {
    }

    static void example(Order order, Instant deadline) {
        // tag::engine[]
        // RMQ's own client with RMQ's settings (or RmqRedisClient.cluster(seeds, …)); null: no SSL options, own resources
        try (RmqRedisClient client = RmqRedisClient.standalone(RedisURI.create("redis://localhost"), null, null,
                RedisClientSettings.DEFAULT);
                Rmq rmq = Rmq.create(client.client(), RmqOptions.DEFAULT)) {
            rmq.defineTopic("orders", TopicType.FIXED_TIME, 16);
            rmq.producer().sendFixedTime("orders", order, deadline);
            RmqConsumer consumer = rmq.consumer("orders", ConsumerSettings.DEFAULT);
            consumer.pollAndHandle(Order.class, (o, delivery) -> close(o));   // or poll() / ack() / nack() yourself
            // or run a container (CONCURRENT or ORDERLY):
            // rmq.container("orders", settings, Order.class, handler, ContainerOptions.of("orders", 4)).start()
            rmq.admin().cancel(MessageRef.body("orders", order));             // the order was paid: no close
        }
        // end::engine[]
    }
}
