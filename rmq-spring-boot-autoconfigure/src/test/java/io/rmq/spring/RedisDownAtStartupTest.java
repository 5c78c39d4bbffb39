package io.rmq.spring;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.rmq.Rmq;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.core.RmqUnavailableException;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.LateRedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** With rmq.startup.fail-fast=false (the default) an application starts while Redis is down and catches up. */
class RedisDownAtStartupTest {

    static final Queue<String> handled = new ConcurrentLinkedQueue<>();

    static class LateListener {
        @RmqListener(topic = "late")
        void handle(String body) {
            handled.add(body);
        }
    }

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger rmqLogs = (Logger) LoggerFactory.getLogger("io.rmq");
    private int port;

    @BeforeEach
    void setUp() throws Exception {
        port = LateRedisServer.freePort();
        handled.clear();
        logs.start();
        // the outage is on purpose: keep its lines out of the build log, and assert on them
        rmqLogs.addAppender(logs);
        rmqLogs.setAdditive(false);
    }

    /** What was logged so far (the appender appends under its own lock, on the application's threads). */
    private List<ILoggingEvent> logged() {
        synchronized (logs) {
            return List.copyOf(logs.list);
        }
    }

    @AfterEach
    void tearDown() {
        rmqLogs.detachAppender(logs);
        rmqLogs.setAdditive(true);
    }

    @Test
    void theApplicationStartsWithoutRedisSendsFailAtOnceAndTheListenerConsumesOnceRedisIsUp() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
                        "rmq.key-prefix=down-" + UUID.randomUUID().toString().substring(0, 8),
                        "rmq.topics.late.type=PRIORITY", "rmq.topics.late.slot-amount=4")
                .withBean("lateListener", LateListener.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqTemplate template = context.getBean(RmqTemplate.class);

                    long sending = System.nanoTime();
                    assertThatThrownBy(() -> template.sendPriority("late", "too-early", 1))
                            .isInstanceOf(RmqUnavailableException.class)
                            .hasMessageContaining("Redis is not reachable (since ")
                            .hasMessageContaining("sending to topic 'late' failed at once");
                    // at once: not after the 5 s a call waits for a reply (generous for a loaded machine)
                    assertThat(Duration.ofNanos(System.nanoTime() - sending)).isLessThan(Duration.ofSeconds(3));

                    try (LateRedisServer redis = LateRedisServer.startOn(port)) {
                        Rmq rmq = context.getBean(Rmq.class);
                        await().atMost(Duration.ofSeconds(30)).until(rmq::isConnected);
                        template.sendPriority("late", "on-time", 1);
                        await().atMost(Duration.ofSeconds(30)).until(() -> handled.contains("on-time"));
                        context.close(); // stop the listener while its Redis is still there
                    }
                });
        assertThat(handled).containsExactly("on-time");
        assertThat(logs.list).filteredOn(e -> e.getLoggerName().equals(Rmq.class.getName())
                && e.getLevel() == Level.WARN).singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage()).startsWith("RMQ cannot reach Redis (")
                        .contains("127.0.0.1", "Connection refused"));
        assertThat(logs.list).allSatisfy(e -> assertThat(e.getThrowableProxy()).isNull());
    }

    @Test
    void theApplicationStartsWhileRedisIsStillLoadingItsDataAndConsumesOnceLoaded() throws Exception {
        // a Redis restarted with its data: it answers, but only -LOADING, for up to ~20 s (20,000 keys, 1 ms each),
        // so that even a slow start on a busy machine meets it, which the WARN line proves; once the application has
        // met it, the rest loads at once (the ~20 s were a margin for a slow start, not a part of the scenario)
        try (LateRedisServer redis = LateRedisServer.startLoading(port, 20_000, 1_000)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                            JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
                            "rmq.key-prefix=loading-" + UUID.randomUUID().toString().substring(0, 8),
                            "rmq.topics.late.type=PRIORITY", "rmq.topics.late.slot-amount=4")
                    .withBean("lateListener", LateListener.class)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        Rmq rmq = context.getBean(Rmq.class);
                        await().atMost(Duration.ofSeconds(30)).until(() -> logged().stream().anyMatch(e -> e
                                .getFormattedMessage().startsWith("RMQ cannot reach Redis (")
                                && e.getFormattedMessage().contains("LOADING")));
                        assertThat(rmq.isConnected()).as("connected while Redis still loads").isFalse();
                        redis.finishLoading();
                        await().atMost(Duration.ofSeconds(60)).until(rmq::isConnected);
                        assertThat(redis.loaded()).isTrue();
                        context.getBean(RmqTemplate.class).sendPriority("late", "after-loading", 1);
                        await().atMost(Duration.ofSeconds(30)).until(() -> handled.contains("after-loading"));
                        context.close();
                    });
        }
        assertThat(handled).containsExactly("after-loading");
        assertThat(logs.list).filteredOn(e -> e.getLoggerName().equals(Rmq.class.getName())
                && e.getLevel() == Level.WARN).singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage()).startsWith("RMQ cannot reach Redis (")
                        .contains("LOADING"));
        assertThat(logs.list).allSatisfy(e -> assertThat(e.getThrowableProxy()).isNull());
    }

    @Test
    void withFailFastAStartWhileRedisIsLoadingFailsSayingSo() throws Exception {
        try (LateRedisServer redis = LateRedisServer.startLoading(port, 20_000, 1_000)) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                            JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                    .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
                            "rmq.startup.fail-fast=true")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("LOADING");
                        Throwable failure = context.getStartupFailure();
                        while (failure != null && !(failure instanceof io.rmq.autoconfigure.RedisUnreachableException)) {
                            failure = failure.getCause();
                        }
                        assertThat(failure).as("a RedisUnreachableException in the cause chain").isNotNull()
                                .hasMessageStartingWith("RMQ could not reach Redis at 127.0.0.1:" + port + ": LOADING");
                    });
        }
    }
}
