package io.rmq.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.redis.RedisClientSettings.ConnectionHealth;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TcpProxy;
import io.rmq.test.TcpProxy.Direction;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * RMQ's client through a {@link TcpProxy} that blackholes the link (swallows everything, never resets, and the
 * blackholed connection stays dead after the heal): the connection is found silent, closed and replaced.
 */
class ConnectionHealthTest {

    private static final Duration SILENCE = Duration.ofSeconds(2);
    private static final RedisClientSettings SETTINGS = RedisClientSettings.DEFAULT
            .withHealth(ConnectionHealth.DEFAULT.withSilenceTimeout(SILENCE));

    private final RedisEndpoint redis = TestRedisServers.standalone();

    @Test
    void aConnectionBlackholedWhileOwingRepliesIsClosedAfterTheSilenceAndReplacedOnceTheLinkIsBack() throws Exception {
        try (TcpProxy proxy = new TcpProxy(redis.host(), redis.port());
                RmqRedisClient client = RmqRedisClient.standalone(RedisURI.create(redis.host(), proxy.port()), null,
                        null, SETTINGS);
                StatefulRedisConnection<String, String> connection = ((RedisClient) client.client()).connect();
                LogCapture log = LogCapture.of(
                        "io.rmq.redis.internal.SilentConnectionGuard").expecting("has received nothing for")) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            assertThat(proxy.accepted()).isEqualTo(1);

            proxy.blackhole(Direction.BOTH);
            long cut = System.nanoTime();
            CompletableFuture<String> unanswered = connection.async().ping().toCompletableFuture();
            // found dead and closed: SILENCE after the unanswered command, plus the check's tenth
            await().atMost(SILENCE.plusSeconds(5)).until(() -> !log.warnings().isEmpty());
            long foundMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
            assertThat(foundMillis).isBetween(SILENCE.toMillis() - 100, SILENCE.toMillis() + 3000);
            assertThat(log.warnings().get(0)).contains("owes 1 replies", "closing it so that it is replaced");
            assertThat(unanswered).isCompletedExceptionally();

            // still blackholed: the replacements are dead too; after the heal a fresh connection works
            proxy.heal();
            long healed = System.nanoTime();
            await().atMost(Duration.ofSeconds(20)).ignoreExceptions()
                    .until(() -> "PONG".equals(connection.async().ping().get(1, TimeUnit.SECONDS)));
            long resumedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed);
            assertThat(proxy.accepted()).isGreaterThanOrEqualTo(2);
            // bound: a replacement made during the blackhole is dead, found after SILENCE; then a reconnect delay
            assertThat(resumedMillis).isLessThan(SILENCE.toMillis() + 8000);
        }
    }

    @Test
    void anIdleConnectionIsNotClosedHoweverLongItIsQuiet() throws Exception {
        try (TcpProxy proxy = new TcpProxy(redis.host(), redis.port());
                RmqRedisClient client = RmqRedisClient.standalone(RedisURI.create(redis.host(), proxy.port()), null,
                        null, SETTINGS);
                StatefulRedisConnection<String, String> connection = ((RedisClient) client.client()).connect()) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            Thread.sleep(SILENCE.toMillis() * 2);
            assertThat(connection.sync().ping()).isEqualTo("PONG");
            assertThat(proxy.accepted()).isEqualTo(1);
        }
    }

    @Test
    void aSlowLinkThatStillAnswersIsNotClosed() throws Exception {
        try (TcpProxy proxy = new TcpProxy(redis.host(), redis.port());
                RmqRedisClient client = RmqRedisClient.standalone(RedisURI.create(redis.host(), proxy.port()), null,
                        null, SETTINGS);
                StatefulRedisConnection<String, String> connection = ((RedisClient) client.client()).connect()) {
            proxy.latency(Duration.ofMillis(200), Duration.ofMillis(50));
            long until = System.nanoTime() + SILENCE.multipliedBy(2).toNanos();
            while (System.nanoTime() < until) {
                List<CompletableFuture<String>> pings = List.of(connection.async().ping().toCompletableFuture(),
                        connection.async().ping().toCompletableFuture());
                assertThat(CompletableFuture.allOf(pings.toArray(CompletableFuture[]::new)))
                        .succeedsWithin(Duration.ofSeconds(5));
            }
            assertThat(proxy.accepted()).isEqualTo(1);
        }
    }

    @Test
    void badHealthSettingsAreRefusedNamingTheField() {
        assertThatThrownBy(() -> new ConnectionHealth(Duration.ofSeconds(15), Duration.ofSeconds(5), 0, Duration.ZERO,
                Duration.ofSeconds(10))).isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("keepAliveCount");
        assertThatThrownBy(() -> ConnectionHealth.DEFAULT.withSilenceTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("silenceTimeout");
    }
}
