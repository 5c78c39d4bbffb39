package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.RmqListenerContainer;
import io.rmq.container.internal.ListenerContainers;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.RedisTopology;
import io.rmq.test.TcpProxy;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static io.rmq.internal.RmqInternals.wakeUps;

/**
 * A listener must never stop consuming while messages are due: duplicates behind an in-flight body, replies that
 * come late, never, or after a reset. The fault-injection suite (rmq-faults) does the same with separate processes.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ContainerLivenessTest extends EngineTestSupport {

    ContainerLivenessTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void aDuplicateSentWhileItsBodyIsInFlightIsDeliveredAsSoonAsTheFirstDeliveryEnds() throws Exception {
        for (TopicType type : List.of(TopicType.PRIORITY, TopicType.FIXED_TIME)) {
            String topic = "dup-" + type.name().toLowerCase().replace('_', '-');
            rmq.defineTopic(topic, type, 4);
            List<Long> starts = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<Long> ends = new java.util.concurrent.CopyOnWriteArrayList<>();
            CountDownLatch firstStarted = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            // the default 30 s lease: before the fix, the duplicate waited for the first delivery's lease deadline
            RmqListenerContainer container = ListenerContainers.concurrent(
                    rmq.consumer(topic, FAST.withLease(Duration.ofSeconds(30))), wakeUps(rmq), String.class,
                    (String body, Delivery d) -> {
                        starts.add(System.currentTimeMillis());
                        firstStarted.countDown();
                        release.await(60, TimeUnit.SECONDS);
                        ends.add(System.currentTimeMillis());
                    }, new ContainerOptions("c-" + topic, 2, Duration.ofSeconds(60), Duration.ofSeconds(5), null));
            container.start();
            try {
                send(topic, type, 1);
                assertThat(firstStarted.await(30, TimeUnit.SECONDS)).isTrue();
                send(topic, type, 2); // same body while the first delivery runs
                Thread.sleep(300);
                assertThat(starts).as("never two deliveries of one body at once").hasSize(1);
                release.countDown();
                await().atMost(Duration.ofSeconds(30)).until(() -> ends.size() == 2);
                long gap = starts.get(1) - ends.get(0);
                // well within the 30 s lease the duplicate waited for before the fix, however loaded the machine
                assertThat(gap).as("%s: ms from the end of the first delivery to the start of the second", type)
                        .isLessThan(15_000);
            }
            finally {
                container.stop();
            }
        }
    }

    private void send(String topic, TopicType type, int round) {
        if (type == TopicType.PRIORITY) {
            rmq.producer().sendPriority(topic, "Z", round);
        }
        else {
            rmq.producer().sendFixedTime(topic, "Z", Instant.now().minusMillis(round));
        }
    }

    @Test
    void consumptionGoesOnThroughRandomLatencyStallsAndResetsOfItsConnection() throws Exception {
        Assumptions.assumeTrue(topology == RedisTopology.STANDALONE, "the proxy fronts one server");
        for (long seed = 1; seed <= 3; seed++) {
            // what the stalls and resets cause on purpose: polls, extensions and settles that time out, handlers that
            // finish after a lease a stalled reply had used up, the wake-up subscription's reconnect (anything else is
            // logged as usual)
            try (LogCapture log = LogCapture.rmq().expecting(CHAOS_LINES)) {
                runThroughProxy(seed);
                String topic = "chaos-" + seed;
                assertThat(log.warnings()).as("lines the chaos caused").allSatisfy(line -> assertThat(line)
                        .containsAnyOf("'" + topic + "'", "'c-" + topic + "'", "Delivery[" + topic + "/",
                                "'" + prefix + ":wake'"));
            }
        }
    }

    /** The lines a proxy's stalls and resets cause on purpose. */
    private static final String[] CHAOS_LINES = {"was handled after its lease had expired", "failed to poll",
            "extending", "could not settle", "could not return", "wake-up subscription"};

    /**
     * A listener container on its own engine whose every byte to and from Redis passes a {@link TcpProxy}: the
     * consumer side of a test whose sender ({@code rmq}) talks to Redis directly. Lettuce reconnects within 200 ms.
     */
    private final class ProxiedContainer implements AutoCloseable {

        final TcpProxy proxy;
        final RmqListenerContainer container;
        private final ClientResources resources = DefaultClientResources.builder()
                .reconnectDelay(RedisGateway.reconnectDelay(Duration.ofMillis(200))).build();
        private final RedisClient client;
        private final Rmq engine;

        ProxiedContainer(String topic, TopicType type, ConsumerSettings settings, ContainerOptions options,
                io.rmq.consumer.MessageHandler<String> handler) throws java.io.IOException {
            RedisEndpoint endpoint = TestRedisServers.standalone();
            proxy = new TcpProxy(endpoint.host(), endpoint.port());
            client = RedisClient.create(resources, RedisURI.create(endpoint.host(), proxy.port()));
            engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix));
            engine.defineTopic(topic, type, 16);
            container = ListenerContainers.concurrent(engine.consumer(topic, settings), wakeUps(engine), String.class,
                    handler, options);
            container.start();
        }

        @Override
        public void close() {
            container.stop();
            engine.close();
            client.shutdown();
            proxy.close();
            resources.shutdown();
        }
    }

    /**
     * A consumer whose every reply passes a proxy that delays chunks at random, stalls longer than the command
     * timeout and resets connections, while messages keep coming: each run must hand every message to the handler,
     * leave nothing in flight and keep polling (the stall of the reported bug left slots busy for good).
     */
    private void runThroughProxy(long seed) throws Exception {
        String topic = "chaos-" + seed;
        rmq.defineTopic(topic, TopicType.RANGE_MERGE, 16);
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
        AtomicLong lastHandled = new AtomicLong();
        try (ProxiedContainer consumer = new ProxiedContainer(topic, TopicType.RANGE_MERGE,
                new ConsumerSettings(16, Duration.ofSeconds(2), FAST.retry()),
                new ContainerOptions("c-" + topic, 4, Duration.ofSeconds(2), Duration.ofSeconds(5), null,
                        Duration.ofMillis(700)), (String body, Delivery d) -> {
                            handled.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
                            lastHandled.set(System.currentTimeMillis());
                        })) {
            consumer.proxy.latency(3).chaos(seed, 400, 0.3, 1500);
            int messages = 3000;
            for (int i = 0; i < messages; i++) {
                rmq.producer().sendAsync(OutgoingMessage.rangeMerge(topic, "m-" + i, Duration.ofMillis(1)));
                if (i % 100 == 99) {
                    Thread.sleep(20);
                }
            }
            Thread.sleep(2000);
            consumer.proxy.calm();
            // everything is handled: what a lost reply had leased comes back after its 2 s lease
            await().atMost(Duration.ofSeconds(120)).until(() -> handled.size() == messages
                    && rmq.admin().stats(topic).inFlight() == 0);
            assertThat(rmq.admin().stats(topic).waiting()).isZero();
            assertThat(rmq.admin().stats(topic).dead()).isZero();
            // and it still polls: a message sent now is handled at once
            long sent = System.currentTimeMillis();
            rmq.producer().sendRangeMerge(topic, "after-" + seed, Duration.ofMillis(1));
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.containsKey("after-" + seed));
            assertThat(lastHandled.get() - sent).as("ms to handle a message after the chaos").isLessThan(30_000);
            assertThat(consumer.container.stallsRepaired()).as("stalls the watchdog had to repair").isZero();
        }
    }

    /**
     * The shape that stalled listeners in the field: a consumer that keeps up, so nearly every send is the first
     * message of its slot and announces itself while pop rounds come and go (announcements for busy slots are
     * deferred behind their rounds), with replies delayed at random. Every message must be handled and the watchdog
     * must never have had to repair anything.
     */
    @Test
    void aTrickleWhereEverySendWakesTheConsumerNeverNeedsTheWatchdog() throws Exception {
        Assumptions.assumeTrue(topology == RedisTopology.STANDALONE, "the proxy fronts one server");
        rmq.defineTopic("trickle", TopicType.FIXED_TIME, 16);
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
        try (ProxiedContainer consumer = new ProxiedContainer("trickle", TopicType.FIXED_TIME,
                new ConsumerSettings(8, Duration.ofSeconds(5), FAST.retry()),
                new ContainerOptions("c-trickle-wake", 4, Duration.ofSeconds(1), Duration.ofSeconds(5), null,
                        Duration.ofMillis(500)), (String body, Delivery d) ->
                                handled.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet())) {
            consumer.proxy.latency(2);
            int messages = 0;
            long end = System.currentTimeMillis() + 12_000;
            while (System.currentTimeMillis() < end) {
                for (int i = 0; i < 4; i++) {
                    rmq.producer().sendAsync(OutgoingMessage.fixedTime("trickle", "t-" + messages++, Instant.now()));
                }
                Thread.sleep(1);
            }
            int sent = messages;
            consumer.proxy.calm();
            await().atMost(Duration.ofSeconds(120)).until(() -> handled.size() == sent
                    && rmq.admin().stats("trickle").inFlight() == 0);
            assertThat(rmq.admin().stats("trickle").waiting()).isZero();
            assertThat(consumer.container.stallsRepaired()).as("stalls the watchdog had to repair").isZero();
        }
    }

    @Test
    void aPopThatNeverGetsAReplyTimesOutAndThePollerMovesOn() throws Exception {
        Assumptions.assumeTrue(topology == RedisTopology.STANDALONE, "the proxy fronts one server");
        rmq.defineTopic("frozen", TopicType.RANGE_MERGE, 16);
        List<String> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.rmq().expecting(CHAOS_LINES);
                ProxiedContainer consumer = new ProxiedContainer("frozen", TopicType.RANGE_MERGE,
                new ConsumerSettings(16, Duration.ofSeconds(1), FAST.retry()),
                new ContainerOptions("c-frozen", 2, Duration.ofMillis(500), Duration.ofSeconds(5), null,
                        Duration.ofMillis(300)), (String body, Delivery d) -> handled.add(body))) {
            Thread.sleep(300);
            // replies are held for 3 s: ten times the command timeout, while messages fall due
            consumer.proxy.stall(3000);
            for (int i = 0; i < 50; i++) {
                rmq.producer().sendRangeMerge("frozen", "f-" + i, Duration.ofMillis(1));
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> handled.size() >= 50
                    && rmq.admin().stats("frozen").pending() == 0);
            assertThat(handled).containsAll(expectedBodies("f-", 50));
            assertThat(log.warnings()).as("the stall, on purpose").anySatisfy(line -> assertThat(line)
                    .contains("failed to poll slot").contains("of topic 'frozen'"));
        }
    }

    private static List<String> expectedBodies(String prefix, int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(prefix + i);
        }
        return out;
    }
}
