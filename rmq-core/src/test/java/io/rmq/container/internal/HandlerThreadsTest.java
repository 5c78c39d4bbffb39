package io.rmq.container.internal;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.rmq.container.ContainerOptions;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A container's handler threads: named from the listener id, a dead one is replaced under its name by the watchdog's
 * check (an ERROR naming listener and thread, a repair counted), and none is replaced once they are being stopped.
 */
class HandlerThreadsTest {

    private static final Logger LOG = LoggerFactory.getLogger(RmqListenerContainer.class);

    private final CountDownLatch release = new CountDownLatch(1);
    private final Set<String> ran = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean killFirst = new AtomicBoolean(true);
    private final ContainerWatchdog watchdog = new ContainerWatchdog("pool", "jobs", LOG, RmqInstrumentation.NONE);
    private HandlerThreads threads;

    /** Runs until released; the first thread to run dies at once. */
    private final Runnable work = () -> {
        if (killFirst.compareAndSet(true, false)) {
            throw new ThreadKilled();
        }
        ran.add(Thread.currentThread().getName());
        try {
            release.await(30, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    };

    private HandlerThreads threads(int concurrency) {
        ContainerOptions options = new ContainerOptions("pool", concurrency, Duration.ofSeconds(1),
                Duration.ofSeconds(1), runnable -> {
                    Thread thread = new Thread(runnable);
                    thread.setUncaughtExceptionHandler((t, e) -> {
                        if (!(e instanceof ThreadKilled)) {
                            e.printStackTrace();
                        }
                    });
                    return thread;
                });
        threads = new HandlerThreads(options, "handler", work, watchdog, "jobs", LOG);
        return threads;
    }

    @AfterEach
    void stop() {
        release.countDown();
        if (threads != null) {
            threads.interruptAndJoin(1000);
        }
    }

    @Test
    void aDeadThreadIsReplacedUnderItsNameAndTheRepairCounted() {
        HandlerThreads pool = threads(2);
        try (LogCapture log = LogCapture.rmq().expecting("has died")) {
            pool.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 1);
            String dead = ran.contains("pool-handler-0") ? "pool-handler-1" : "pool-handler-0";
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                pool.check(System.currentTimeMillis());
                return ran.size() == 2;
            });
            assertThat(ran).containsExactlyInAnyOrder("pool-handler-0", "pool-handler-1");
            assertThat(watchdog.repairs()).isEqualTo(1);
            assertThat(log.messages()).singleElement().asString().contains("'pool'", "'jobs'", dead);
            pool.check(System.currentTimeMillis()); // both alive: nothing to repair
            assertThat(watchdog.repairs()).isEqualTo(1);
        }
    }

    @Test
    void noThreadIsReplacedOnceStopping() {
        HandlerThreads pool = threads(1);
        pool.start();
        release.countDown();
        pool.interruptAndJoin(1000);
        pool.check(System.currentTimeMillis());
        assertThat(ran).isEmpty();
        assertThat(watchdog.repairs()).isZero();
    }

    /** Thrown on purpose (no stack trace: it is expected). */
    static final class ThreadKilled extends Error {
        ThreadKilled() {
            super("handler thread killed by the test", null, false, false);
        }
    }
}
