package io.rmq.spring;

import java.time.Duration;
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
}
