package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.RedisTopology;
import io.rmq.test.TcpProxy;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * ORDERLY settles a group's acknowledgements every 10 ms, also in the middle of the group's run (issue 43): such a
 * report, which takes nothing, is sent without the handler thread waiting for its reply. Through a link that delays
 * every byte 250 ms each way, one handler thread (concurrency 1) runs one group's 60 messages of ~1 ms each: were each
 * report a round trip on that thread, the run would stop 0.5 s at every report (one per ~10 ms of handling, about six
 * in the run: ~3 s); sent without waiting, the run goes through in well under a second, and every message is still
 * acknowledged in Redis.
 */
class OrderlyReportsDoNotHoldHandlersTest extends OrderlyTestSupport {

    private static final int MESSAGES = 60;

    OrderlyReportsDoNotHoldHandlersTest() {
        super(RedisTopology.STANDALONE);
    }

    @Test
    void aGroupsRunGoesOnWhileItsAcknowledgementsTravelOverASlowLink() throws Exception {
        String topic = "slow-link";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        rmq.declareConsumeMode(topic, ConsumeMode.ORDERLY);
        Instant base = Instant.now().minusSeconds(60);
        for (int i = 0; i < MESSAGES; i++) {
            rmq.producer().send(OutgoingMessage.fixedTime(topic, "a:" + i, base.plusMillis(i)).withGroup("A"));
        }
        List<Long> starts = new CopyOnWriteArrayList<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        RedisEndpoint endpoint = TestRedisServers.standalone();
        try (TcpProxy proxy = new TcpProxy(endpoint.host(), endpoint.port())) {
            RedisClient client = RedisClient.create(TestRedisServers.resources(),
                    RedisURI.create(endpoint.host(), proxy.port()));
            try (Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
                engine.defineTopic(topic, TopicType.FIXED_TIME, 1);
                proxy.latency(Duration.ofMillis(250), Duration.ZERO);
                // one batch takes the whole group: its run is 60 messages on the one handler thread
                ConsumerSettings settings = new ConsumerSettings(64, Duration.ofSeconds(30),
                        new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(100))));
                ListenerContainer container = engine.container(topic, settings, String.class, (String body,
                        Delivery d) -> {
                    starts.add(System.nanoTime());
                    Thread.sleep(1);
                    handled.add(body);
                }, ContainerOptions.of("o-slow-link", 1).withMode(ConsumeMode.ORDERLY)
                        .withOwnershipTimeout(Duration.ofSeconds(20)));
                container.start();
                try {
                    await().atMost(Duration.ofSeconds(60)).until(() -> handled.size() >= MESSAGES);
                    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(rmq.admin().stats(topic)
                            .pending()).as("waiting or in flight once the run's reports arrived").isZero());
                }
                finally {
                    container.stop();
                }
            }
            finally {
                client.shutdown();
            }
        }
        List<String> expected = java.util.stream.IntStream.range(0, MESSAGES).mapToObj(i -> "a:" + i).toList();
        assertThat(handled).as("the group's messages, once each, in order").containsExactlyElementsOf(expected);
        long runMillis = (starts.get(MESSAGES - 1) - starts.get(0)) / 1_000_000;
        // a report on the handler thread costs 500 ms here: a run with two of them takes 1 s
        assertThat(runMillis).as("first to last handler start of the group's run (ms)").isLessThan(1_000);
    }
}
