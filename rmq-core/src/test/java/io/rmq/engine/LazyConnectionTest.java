package io.rmq.engine;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqUnavailableException;
import io.rmq.core.TopicType;
import io.rmq.test.LateRedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** An engine made while Redis is down ({@code Rmq.connectLazily}) starts, fails sends at once, and catches up. */
class LazyConnectionTest {

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final List<Logger> captured = List.of((Logger) LoggerFactory.getLogger("io.rmq"));
    private int port;
    private RedisClient client;

    @BeforeEach
    void setUp() throws Exception {
        port = LateRedisServer.freePort();
        client = RedisClient.create("redis://127.0.0.1:" + port);
        logs.start();
        for (Logger logger : captured) {
            // the failures here are on purpose: keep them out of the build log, but assert on them
            logger.addAppender(logs);
            logger.setAdditive(false);
        }
    }

    @AfterEach
    void tearDown() {
        for (Logger logger : captured) {
            logger.detachAppender(logs);
            logger.setAdditive(true);
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @ParameterizedTest
    @EnumSource(ConsumeMode.class)
    void aListenerStartedWhileRedisIsDownConsumesOnceRedisIsUpAndSendsFailAtOnceUntilThen(ConsumeMode mode)
            throws Exception {
        String prefix = "lazy-" + UUID.randomUUID().toString().substring(0, 8);
        Queue<String> handled = new ConcurrentLinkedQueue<>();
        long created = System.nanoTime();
        try (Rmq rmq = Rmq.connectLazily(client, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
            rmq.defineTopic("late", TopicType.PRIORITY, 4);
            ListenerContainer container = rmq.container("late", ConsumerSettings.DEFAULT, String.class,
                    (String body, io.rmq.consumer.Delivery delivery) -> handled.add(body),
                    ContainerOptions.of("late-listener", 2).withMode(mode));
            container.start();
            // nothing waited for Redis (a cold JVM's class loading alone takes about a second here, several on a
            // loaded machine; waiting for Redis would mean waiting forever)
            assertThat(Duration.ofNanos(System.nanoTime() - created)).isLessThan(Duration.ofSeconds(30));
            assertThat(rmq.isConnected()).isFalse();
            await().atMost(Duration.ofSeconds(30)).until(() -> !outageLines().isEmpty()); // the first attempt failed

            long sending = System.nanoTime();
            assertThatThrownBy(() -> rmq.producer().sendPriority("late", "too-early", 1))
                    .isInstanceOf(RmqUnavailableException.class)
                    .hasMessageStartingWith("Redis is not reachable (since ")
                    .hasMessageContaining("Connection refused")
                    .hasMessageContaining("sending to topic 'late' failed at once");
            // at once: not after the 5 s a call waits for a reply (generous for a loaded machine)
            assertThat(Duration.ofNanos(System.nanoTime() - sending)).isLessThan(Duration.ofSeconds(3));
            assertThatThrownBy(() -> rmq.admin().stats("late")).isInstanceOf(RmqUnavailableException.class);

            try (LateRedisServer redis = LateRedisServer.startOn(port)) {
                await().atMost(Duration.ofSeconds(30)).until(rmq::isConnected);
                rmq.producer().sendPriority("late", "on-time", 1);
                await().atMost(Duration.ofSeconds(30)).until(() -> handled.contains("on-time"));
                assertThat(handled).containsExactly("on-time");
                try (StatefulRedisConnection<String, String> raw = client.connect()) {
                    // registered once Redis was reached, with the consume mode the listener declared
                    assertThat(raw.sync().hget(prefix + ":topics", "late")).isEqualTo("PRIORITY:4:" + mode);
                }
                container.stop();
            }
        }
        List<String> outageLines = outageLines();
        assertThat(outageLines).hasSize(1);
        assertThat(outageLines.get(0)).startsWith("RMQ cannot reach Redis (").contains("Connection refused")
                .contains("Listeners wait");
        assertThat(logs.list).allSatisfy(e -> assertThat(e.getThrowableProxy()).isNull());
        assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage())
                .startsWith("RMQ reached Redis after").contains("registered 1 topic(s)"));
    }

    private List<String> outageLines() {
        return logs.list.stream()
                .filter(e -> e.getLoggerName().equals(Rmq.class.getName()) && e.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).toList();
    }
}
