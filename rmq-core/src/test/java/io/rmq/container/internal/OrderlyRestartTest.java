package io.rmq.container.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An ORDERLY container started again after a stop that left a handler running (past the shutdown timeout): the thread
 * that outlived the stop ends once its handler returns; it takes no slot of the new run (it used to go on as one
 * thread too many, since the start cleared the stopping flag it watched).
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderlyRestartTest extends ContainerTestSupport {

    OrderlyRestartTest(RedisTopology topology) {
        super(topology);
    }

    private static ContainerOptions options(String id) {
        return orderlyOptions(id, Duration.ofMillis(500), OrderlyRestartTest::quiet);
    }

    @Test
    void aHandlerThreadThatOutlivedTheStopEndsAndTakesNothingOfTheNextRun() throws Exception {
        engine(RmqInstrumentation.NONE).defineTopic("restarted", TopicType.FIXED_TIME, 1);
        sendDue("restarted", "stuck");
        CountDownLatch inStuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Thread> abandoned = new AtomicReference<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        startOrderly("restarted", (String body, Delivery d) -> {
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
        sendDue("restarted", "after");
        await().atMost(Duration.ofSeconds(30)).until(() -> handled.contains("after"));
    }

    /** Plain threads (the factory the options name). */
    private static Thread quiet(Runnable work) {
        return new Thread(work);
    }
}
