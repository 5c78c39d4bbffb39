package io.rmq.container.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A CONCURRENT handler thread that dies (a {@code Throwable} escaped its top) is replaced by the watchdog, with an
 * ERROR naming the listener and the thread, and what it held ends as a failure: no longer outstanding nor kept leased,
 * it is redelivered after its lease. Without the replacement the container stayed a thread short for ever, and with
 * one handler thread handled nothing more.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class DeadHandlerThreadTest extends ContainerTestSupport {

    /** Short lease, small backoff. */
    private static final ConsumerSettings FAST = new ConsumerSettings(50, Duration.ofSeconds(5),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));

    DeadHandlerThreadTest(RedisTopology topology) {
        super(topology);
    }

    /** One handler thread, a 1 s idle check (redeliveries are found quickly), threads from {@code factory}. */
    private static ContainerOptions options(String id, ThreadFactory factory) {
        return new ContainerOptions(id, 1, Duration.ofSeconds(1), Duration.ofSeconds(5), factory);
    }

    @Test
    void aHandlerThreadThatDiesAtOnceIsReplaced() {
        engine(RmqInstrumentation.NONE).defineTopic("jobs", TopicType.FIXED_TIME, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        AtomicBoolean killed = new AtomicBoolean();
        // the first handler thread dies before it runs anything: one handler thread, so nothing would be handled
        ThreadFactory factory = work -> quiet(new Thread(() -> {
            if (Thread.currentThread().getName().contains("-handler-") && killed.compareAndSet(false, true)) {
                throw new ThreadKilled();
            }
            work.run();
        }));
        container = engine.container("jobs", FAST, String.class, (String body, Delivery delivery) ->
                handled.add(body), options("dying", factory));
        try (LogCapture log = LogCapture.rmq().expecting("has died")) {
            container.start();
            engine.producer().sendFixedTime("jobs", "after", Instant.now());
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.contains("after"));
            assertThat(killed).isTrue();
            assertThat(container.stallsRepaired()).isPositive();
            assertThat(log.messages()).filteredOn(m -> m.contains("has died")).first().asString()
                    .contains("'dying'", "dying-handler-0");
        }
    }

    @Test
    void whatADyingHandlerThreadHeldEndsAsAFailureAndIsRedelivered() {
        AtomicBoolean broken = new AtomicBoolean();
        // an Error from the instrumentation on "first", whose report then fails too (the log throws an Error): the
        // handler thread dies holding "first" and what it took with it
        engine(new RmqInstrumentation() {
            @Override
            public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
                if (delivery.bodyAsString().contains("first") && broken.compareAndSet(false, true)) {
                    throw new ThreadKilled();
                }
                return HandleScope.NONE;
            }
        }).defineTopic("held", TopicType.FIXED_TIME, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        Instant now = Instant.now();
        // sent before the start: one pop takes all three, the handler thread takes them together
        engine.producer().sendFixedTime("held", "first", now.minusSeconds(3));
        engine.producer().sendFixedTime("held", "second", now.minusSeconds(2));
        engine.producer().sendFixedTime("held", "third", now.minusSeconds(1));
        container = engine.container("held", FAST, String.class, (String body, Delivery delivery) ->
                handled.add(body + "#" + delivery.attempt()), options("holding", work -> quiet(new Thread(work))));
        Logger logger = (Logger) LoggerFactory.getLogger(RmqListenerContainer.class);
        AppenderBase<ILoggingEvent> throwing = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                if (event.getFormattedMessage().contains("unexpected error on handler thread")) {
                    throw new ThreadKilled(); // an Error: logback passes it on to the caller
                }
            }
        };
        throwing.setContext(logger.getLoggerContext());
        throwing.start();
        try (LogCapture log = LogCapture.rmq().expecting("has died", "could not settle", "held")) {
            logger.addAppender(throwing);
            container.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() >= 3);
            // "first" failed (its handler thread died in it); the others were held or queued, so their attempt varies
            assertThat(handled).hasSize(3).contains("first#2").noneMatch(h -> h.equals("first#1"))
                    .anyMatch(h -> h.startsWith("second#")).anyMatch(h -> h.startsWith("third#"));
            assertThat(outstanding()).isZero();
        }
        finally {
            logger.detachAppender(throwing);
        }
    }

    private int outstanding() {
        return ((RmqListenerContainer) container).outstanding();
    }

    /** The deliberate deaths are not reported on stderr; any other is. */
    private static Thread quiet(Thread thread) {
        thread.setUncaughtExceptionHandler((t, e) -> {
            if (!(e instanceof ThreadKilled)) {
                e.printStackTrace();
            }
        });
        return thread;
    }

    /** An Error the test throws on purpose (no stack trace: it is expected). */
    static final class ThreadKilled extends Error {
        ThreadKilled() {
            super("handler thread killed by the test", null, false, false);
        }
    }
}
