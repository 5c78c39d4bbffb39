package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisURI;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.micrometer.RmqQueueSizeMeters;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.TcpProxy;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Assumptions;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** {@link MicrometerInstrumentation} and {@link RmqQueueSizeMeters} on an engine, without Spring. */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class MicrometerMetersTest extends EngineTestSupport {

    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final MicrometerInstrumentation meters = new MicrometerInstrumentation(registry);
    private Rmq engine;
    private ListenerContainer container;
    private RmqQueueSizeMeters sizes;

    MicrometerMetersTest(RedisTopology topology) {
        super(topology);
    }

    @BeforeEach
    void openMeteredEngine() {
        engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix).withInstrumentation(meters));
    }

    @AfterEach
    void closeMeteredEngine() {
        if (sizes != null) {
            sizes.close();
        }
        if (container != null) {
            container.stop();
        }
        engine.close();
    }

    @Test
    void eventsWithoutAMessageHaveTheirMetersAndEachMeterIsCreatedOnce() {
        for (int round = 0; round < 2; round++) {
            meters.popFailed("l", "t", 3, new RedisCommandTimeoutException("no reply"));
            meters.rateLimitWaited("l", "t", TimeUnit.MILLISECONDS.toNanos(40));
            meters.watchdogRepaired("l", "t");
            meters.slotTakenOver("l", "t", 1);
            meters.handedBack("l", "t", 3);
            meters.operation("receive", "t", 1_000_000, new RedisCommandTimeoutException("no reply"));
            meters.operation("something new", "t", 1_000_000, null);
        }
        int created = registry.getMeters().size();
        assertThat(registry.get("rmq.receive.failures").tag("rmq.listener.id", "l").tag("messaging.destination.name", "t")
                .tag("messaging.system", "rmq").tag("error.type", "RedisCommandTimeoutException").counter().count())
                .isEqualTo(2);
        assertThat(registry.get("rmq.ratelimit.wait").tag("rmq.listener.id", "l").timer().totalTime(TimeUnit.MILLISECONDS))
                .isEqualTo(80);
        assertThat(registry.get("rmq.watchdog.repairs").tag("rmq.listener.id", "l").counter().count()).isEqualTo(2);
        assertThat(registry.get("rmq.orderly.takeovers").tag("rmq.listener.id", "l").counter().count()).isEqualTo(2);
        assertThat(registry.get("rmq.handled.messages").tag("rmq.listener.id", "l").tag("rmq.outcome", "cancelled")
                .counter().count()).isEqualTo(6);
        assertThat(registry.get("messaging.client.operation.duration").tag("messaging.operation.name", "receive")
                .tag("error.type", "RedisCommandTimeoutException").timer().count()).isEqualTo(2);
        assertThat(registry.find("messaging.client.operation.duration").tag("messaging.operation.name", "something new")
                .timer()).isNull();
        // the same events again create nothing new
        meters.popFailed("l", "t", 3, new RedisCommandTimeoutException("no reply"));
        meters.handedBack("l", "t", 1);
        assertThat(registry.getMeters()).hasSize(created);
    }

    @Test
    void aRefusedSendIsCountedWithItsErrorType() {
        engine.defineTopic("typed", TopicType.PRIORITY, 2);
        assertThatThrownBy(() -> engine.producer().sendFixedTime("typed", "x", Instant.now()))
                .isInstanceOf(RmqInvalidArgumentException.class);
        engine.producer().sendPriority("typed", "x", 1);
        assertThat(registry.get("messaging.client.sent.messages").tag("messaging.destination.name", "typed")
                .tag("error.type", "RmqInvalidArgumentException").counter().count()).isEqualTo(1);
        assertThat(registry.get("messaging.client.sent.messages").tag("messaging.destination.name", "typed")
                .tag("error.type", "none").counter().count()).isEqualTo(1);
    }

    @Test
    void queueSizesFollowRedisAndOrderlyGaugesFollowTheContainer() throws Exception {
        engine.defineTopic("sized", TopicType.FIXED_TIME, 4);
        CountDownLatch release = new CountDownLatch(1);
        container = engine.container("sized", FAST, String.class, (String body, Delivery delivery) -> {
            if (body.equals("hold")) {
                release.await(20, TimeUnit.SECONDS);
            }
        }, ContainerOptions.of("sized-orderly", 1).withMode(ConsumeMode.ORDERLY));
        sizes = new RmqQueueSizeMeters(engine, Duration.ofMillis(200), () -> List.of(container));
        sizes.bindTo(registry);
        MeterRegistry second = new SimpleMeterRegistry(); // as Spring Boot does without a composite registry
        sizes.bindTo(second);
        container.start();
        engine.producer().sendFixedTime("sized", "hold", Instant.now());
        engine.producer().sendFixedTime("sized", "later", Instant.now().plus(Duration.ofHours(1)));
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> gauge("rmq.messages", "in_flight") == 1
                    && gauge("rmq.messages", "waiting") == 1);
            assertThat(gauge("rmq.messages", "dead")).isZero();
            assertThat(second.get("rmq.messages").tag("messaging.destination.name", "sized").tag("rmq.state", "waiting")
                    .gauge().value()).isEqualTo(1);
            assertThat(gauge("rmq.messages", "retrying")).isZero();
            await().atMost(Duration.ofSeconds(10)).until(() -> registry.find("rmq.orderly.slots.owned")
                    .tag("rmq.listener.id", "sized-orderly").gauge() != null
                    && registry.get("rmq.orderly.slots.owned").tag("rmq.listener.id", "sized-orderly").gauge()
                    .value() == 4);
            assertThat(registry.get("rmq.orderly.slots.suspended").tag("rmq.listener.id", "sized-orderly").gauge()
                    .value()).isZero();
        }
        finally {
            release.countDown();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge("rmq.messages", "in_flight") == 0);
        sizes.close();
        assertThat(registry.find("rmq.messages").gauges()).isEmpty();
        assertThat(registry.find("rmq.orderly.slots.owned").gauges()).isEmpty();
        assertThat(second.getMeters()).isEmpty();
    }

    /** A node that goes away: the listener's pops fail (rejected at once while disconnected) and are counted. */
    @Test
    void popsThatFailWhileRedisIsDownAreCountedAsReceiveFailures() throws Exception {
        Assumptions.assumeTrue(topology == RedisTopology.STANDALONE, "one proxied server shows it");
        RedisEndpoint endpoint = TestRedisServers.standalone();
        try (LogCapture log = LogCapture.of("io.rmq", "io.lettuce.core");
                TcpProxy proxy = new TcpProxy(endpoint.host(), endpoint.port())) {
            RmqRedisClient proxied = RmqRedisClient.standalone(RedisURI.create(endpoint.host(), proxy.port()), null,
                    null, RedisClientSettings.DEFAULT);
            Rmq down = Rmq.create(proxied.client(), RmqOptions.DEFAULT.withKeyPrefix(prefix)
                    .withInstrumentation(meters));
            try {
                down.defineTopic("unreachable", TopicType.FIXED_TIME, 2);
                ListenerContainer listener = down.container("unreachable", FAST, String.class,
                        (String body, Delivery delivery) -> {
                        }, new ContainerOptions("down", 1, Duration.ofMillis(200), Duration.ofSeconds(1), null));
                listener.start();
                try {
                    proxy.close(); // the node is gone
                    await().atMost(Duration.ofSeconds(20)).until(() -> registry.find("rmq.receive.failures")
                            .tag("rmq.listener.id", "down").counters().stream().mapToDouble(c -> c.count()).sum() >= 2);
                }
                finally {
                    listener.stop();
                }
            }
            finally {
                down.close();
                proxied.close();
            }
            var failures = registry.get("rmq.receive.failures").tag("rmq.listener.id", "down")
                    .tag("messaging.destination.name", "unreachable").counters();
            assertThat(failures).allSatisfy(c -> assertThat(c.getId().getTag("error.type")).isNotBlank()
                    .isNotEqualTo("none"));
            assertThat(registry.get("messaging.client.operation.duration").tag("messaging.operation.name", "receive")
                    .tag("messaging.destination.name", "unreachable").timers().stream()
                    .filter(t -> !"none".equals(t.getId().getTag("error.type"))).mapToLong(t -> t.count()).sum())
                    .isGreaterThanOrEqualTo(2);
            assertThat(log.messages()).anyMatch(m -> m.contains("failed to poll slot"));
        }
    }

    /**
     * What a read of the queue-size gauges costs Redis, counted with INFO commandstats (commands run inside scripts
     * count), the figures docs/operations.md gives: the call of gauges.lua that says whose turn it is, one
     * {@code EXISTS} per topic with nothing in Redis on a standalone server (one per slot on a cluster) and no stats
     * script on an empty slot, then the figures written for the fleet. A second instance of the fleet within the
     * interval reads no slot: it takes the figures the first wrote (so it shows them, not a message sent since).
     */
    @Test
    void idleTopicsCostOneExistsEachAndTheFleetSharesTheRead() {
        engine.defineTopic("gauged-time", TopicType.FIXED_TIME, 16);
        engine.defineTopic("gauged-priority", TopicType.PRIORITY, 16);
        engine.admin().stats("gauged-time"); // scripts loaded, connections open
        engine.admin().stats("gauged-priority");
        java.util.Map<String, Long> before = commandCalls();
        sizes = new RmqQueueSizeMeters(engine, Duration.ofHours(1), List::of);
        sizes.bindTo(registry); // one read at once, the next an hour later
        await().atMost(Duration.ofSeconds(10)).until(() -> !Double.isNaN(gaugeOf("gauged-time", "waiting"))
                && !Double.isNaN(gaugeOf("gauged-priority", "waiting")));
        java.util.Map<String, Long> delta = since(before);
        System.out.println("[gauge read cost] " + topology + ", 2 idle topics of 16 slots: " + delta);
        long exists = topology == RedisTopology.STANDALONE ? 2 : 32;
        assertThat(delta).as("gauges.lua only: no stats script on an empty slot").containsEntry("evalsha", 1L)
                .containsEntry("exists", exists);
        assertThat(delta.keySet()).containsOnly("evalsha", "hdel", "time", "hmget", "hset", "pexpire", "exists");
        // gauges.lua: EVALSHA, HDEL (of nothing), TIME, 2 HMGET, HSET (the turns), PEXPIRE; then the EXISTS; then
        // the figures written for the fleet: HSET, PEXPIRE
        assertThat(delta.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(7 + exists + 2);

        engine.producer().sendFixedTime("gauged-time", "later", Instant.now().plus(Duration.ofHours(1)));
        Rmq other = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix));
        MeterRegistry otherRegistry = new SimpleMeterRegistry();
        try (RmqQueueSizeMeters otherSizes = new RmqQueueSizeMeters(other, Duration.ofHours(1), List::of)) {
            other.defineTopic("gauged-time", TopicType.FIXED_TIME, 16);
            other.defineTopic("gauged-priority", TopicType.PRIORITY, 16);
            java.util.Map<String, Long> beforeOther = commandCalls();
            otherSizes.bindTo(otherRegistry);
            await().atMost(Duration.ofSeconds(10)).until(() -> otherRegistry.find("rmq.messages")
                    .tag("messaging.destination.name", "gauged-time").tag("rmq.state", "waiting").gauge() != null
                    && !Double.isNaN(otherRegistry.get("rmq.messages").tag("messaging.destination.name",
                            "gauged-time").tag("rmq.state", "waiting").gauge().value()));
            java.util.Map<String, Long> otherDelta = since(beforeOther);
            assertThat(otherRegistry.get("rmq.messages").tag("messaging.destination.name", "gauged-time")
                    .tag("rmq.state", "waiting").gauge().value()).as("the figures the first instance read").isZero();
            assertThat(otherDelta).as("the second instance read no slot: %s", otherDelta)
                    .containsEntry("evalsha", 1L).doesNotContainKeys("exists", "zcard");
        }
        finally {
            other.close();
        }
        // the engine's own admin reads the slots, and finds the message
        assertThat(engine.admin().stats("gauged-time").waiting()).isEqualTo(1);
    }

    /** The commands Redis ran since {@code before} ({@link #commandCalls}), without connection upkeep. */
    private java.util.Map<String, Long> since(java.util.Map<String, Long> before) {
        java.util.Map<String, Long> after = commandCalls();
        java.util.Map<String, Long> delta = new java.util.TreeMap<>();
        after.forEach((command, calls) -> {
            long d = calls - before.getOrDefault(command, 0L);
            // connection upkeep (the measuring connections, topology refreshes) is not the read's
            if (d > 0 && !java.util.Set.of("info", "cluster", "hello", "client", "command", "ping", "script")
                    .contains(command.split("\\|")[0])) {
                delta.put(command, d);
            }
        });
        return delta;
    }

    private double gaugeOf(String topic, String state) {
        var gauge = registry.find("rmq.messages").tag("messaging.destination.name", topic).tag("rmq.state", state)
                .gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    private double gauge(String name, String state) {
        var gauge = registry.find(name).tag("messaging.destination.name", "sized").tag("rmq.state", state).gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    /** Guards the cost claim of the README: with NONE, the engine asks nothing of the instrumentation. */
    @Test
    void noneIsTheDefault() {
        assertThat(RmqOptions.DEFAULT.instrumentation()).isSameAs(RmqInstrumentation.NONE);
        assertThat(RmqOptions.DEFAULT.withInstrumentation(null).instrumentation()).isSameAs(RmqInstrumentation.NONE);
    }
}
