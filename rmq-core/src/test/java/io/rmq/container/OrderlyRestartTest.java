package io.rmq.container;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An ORDERLY container started again after a stop that left a handler running (past the shutdown timeout): the thread
 * that outlived the stop ends once its handler returns; it takes no slot of the new run (it used to go on as one
 * thread too many, since the start cleared the stopping flag it watched).
 */
@ExtendWith(RedisServersExtension.class)
@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderlyRestartTest {

    /** Small batches, a short backoff. */
    private static final ConsumerSettings FAST = new ConsumerSettings(8, Duration.ofSeconds(5),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));

    private final RedisTopology topology;
    private RmqRedisClient client;
    private Rmq engine;
    private ListenerContainer container;

    OrderlyRestartTest(RedisTopology topology) {
        this.topology = topology;
    }

    @AfterEach
    void stop() {
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

    private Rmq engine(RmqInstrumentation instrumentation) {
        client = switch (topology) {
            case STANDALONE -> RmqRedisClient.standalone(topology.uris().get(0), null, TestRedisServers.resources(),
                    RedisClientSettings.DEFAULT);
            case CLUSTER -> RmqRedisClient.cluster(topology.uris(), null, TestRedisServers.resources(),
                    RedisClientSettings.DEFAULT);
        };
        String prefix = "t-" + UUID.randomUUID().toString().substring(0, 8);
        engine = Rmq.create(client.client(), Rmq.Options.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(instrumentation));
        return engine;
    }

    /** ORDERLY, one handler thread, a 1 s ownership (renewed every 200 ms), threads that die quietly on purpose. */
    private static ContainerOptions options(String id) {
        return new ContainerOptions(id, 1, Duration.ofSeconds(1), Duration.ofMillis(500), OrderlyRestartTest::quiet)
                .withMode(ConsumeMode.ORDERLY).withOwnershipTimeout(Duration.ofSeconds(1));
    }

    private ListenerContainer start(String topic, MessageHandler<String> handler, ContainerOptions options,
            SlotCoordinator coordinator) {
        container = engine.container(topic, FAST, String.class, handler, options, coordinator);
        container.start();
        return container;
    }

    private void send(String topic, String... bodies) {
        Instant base = Instant.now().minusSeconds(60);
        for (int i = 0; i < bodies.length; i++) {
            engine.producer().sendFixedTime(topic, bodies[i], base.plusMillis(i));
        }
    }

    @Test
    void aHandlerThreadThatOutlivedTheStopEndsAndTakesNothingOfTheNextRun() throws Exception {
        engine(RmqInstrumentation.NONE).defineTopic("restarted", TopicType.FIXED_TIME, 1);
        send("restarted", "stuck");
        CountDownLatch inStuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Thread> abandoned = new AtomicReference<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        start("restarted", (String body, Delivery d) -> {
            handled.add(body);
            if (body.equals("stuck") && abandoned.compareAndSet(null, Thread.currentThread())) {
                inStuck.countDown();
                while (true) {
                    try {
                        if (release.await(30, TimeUnit.SECONDS)) {
                            break;
                        }
                    }
                    catch (InterruptedException ex) {
                        // on purpose: a handler that ignores the interrupt outlives the stop
                    }
                }
            }
        }, options("restarting"), engine.slotCoordinator());
        assertThat(inStuck.await(30, TimeUnit.SECONDS)).isTrue();
        try (LogCapture log = LogCapture.rmq().expecting("stopped with handlers still running")) {
            container.stop();
        }
        assertThat(container.abandonedOnStop()).isEqualTo(1);
        container.start();
        release.countDown();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(abandoned.get().isAlive())
                .as("the handler thread the stop left behind").isFalse());
        send("restarted", "after");
        await().atMost(Duration.ofSeconds(30)).until(() -> handled.contains("after"));
    }

    /** Plain threads (the factory the options name). */
    private static Thread quiet(Runnable work) {
        return new Thread(work);
    }
}
