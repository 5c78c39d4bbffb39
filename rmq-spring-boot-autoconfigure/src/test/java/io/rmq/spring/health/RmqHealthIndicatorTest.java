package io.rmq.spring.health;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.rmq.Rmq;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.autoconfigure.RmqHealthContributorAutoConfiguration;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.LateRedisServer;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The rmq health indicator on a real Redis, standalone and cluster: UP with details, a paused listener, a stopped one,
 * thresholds; DOWN when the Redis server goes away (a server of the test's own); and when the indicator appears.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
@ParameterizedClass
@EnumSource(RedisTopology.class)
@SuppressWarnings("unchecked")
class RmqHealthIndicatorTest {

    private final RedisTopology topology;

    RmqHealthIndicatorTest(RedisTopology topology) {
        this.topology = topology;
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class,
                        RmqHealthContributorAutoConfiguration.class))
                .withPropertyValues(topology.propertyValues("health-" + UUID.randomUUID()))
                .withPropertyValues("rmq.topics.h-orders.type=FIXED_TIME", "rmq.topics.h-orders.slot-amount=4",
                        "rmq.topics.h-jobs.type=PRIORITY", "rmq.topics.h-jobs.slot-amount=2",
                        "rmq.health.cache-time-to-live=0s");
    }

    /** A listener on h-orders (RMQ's own registry starts it with the context). */
    @Configuration(proxyBeanMethods = false)
    static class WithListener {

        final BlockingQueue<String> handled = new LinkedBlockingQueue<>();

        @RmqListener(id = "orders-listener", topic = "h-orders", concurrency = "2")
        void on(String body) {
            handled.add(body);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> detail(Health health, String... path) {
        Object value = health.getDetails().get(path[0]);
        for (int i = 1; i < path.length; i++) {
            value = ((Map<String, Object>) value).get(path[i]);
        }
        return (Map<String, Object>) value;
    }

    @Test
    void upWithDetailsPausedIsNotDownAndAStoppedListenerIs() {
        runner().withUserConfiguration(WithListener.class).run(context -> {
            assertThat(context).hasNotFailed();
            HealthIndicator indicator = context.getBean("rmqHealthIndicator", HealthIndicator.class);
            RmqTemplate template = context.getBean(RmqTemplate.class);
            template.sendFixedTime("h-orders", "later", Instant.now().plusSeconds(600));
            template.sendPriority("h-jobs", "job", 5);

            Health health = indicator.health();
            assertThat(health.getStatus()).as("%s", health).isEqualTo(Status.UP);
            assertThat(detail(health, "redis")).hasSize(topology == RedisTopology.CLUSTER ? 3 : 1)
                    .allSatisfy((node, check) -> assertThat((Map<String, Object>) check)
                            .containsEntry("reachable", true).containsEntry("scriptsLoaded", true));
            assertThat(health.getDetails()).containsEntry("wakeUpSubscription", "up");
            assertThat(detail(health, "listeners", "orders-listener")).containsEntry("topic", "h-orders")
                    .containsEntry("mode", "CONCURRENT").containsEntry("status", "RUNNING")
                    .containsEntry("concurrency", 2).containsEntry("stallsRepaired", 0L);
            assertThat(detail(health, "topics", "h-orders")).containsEntry("waiting", 1L)
                    .containsEntry("inFlight", 0L).containsEntry("retrying", 0L).containsEntry("dead", 0L)
                    .containsKey("oldestDue");
            assertThat(Instant.parse((String) detail(health, "topics", "h-orders").get("oldestDue")))
                    .isAfter(Instant.now().plusSeconds(500));
            assertThat(detail(health, "topics", "h-jobs")).containsEntry("waiting", 1L).doesNotContainKey("oldestDue");
            assertThat(health.getDetails()).doesNotContainKeys("problems", "thresholdsExceeded");

            RmqListenerEndpointRegistry registry = context.getBean(RmqListenerEndpointRegistry.class);
            registry.pause("orders-listener");
            Health paused = indicator.health();
            assertThat(paused.getStatus()).as("paused on purpose is not down").isEqualTo(Status.UP);
            assertThat(detail(paused, "listeners", "orders-listener")).containsEntry("status", "PAUSED");
            registry.resume("orders-listener");

            try (LogCapture log = LogCapture.rmq()) {
                registry.getListenerContainer("orders-listener").stop();
                Health stopped = indicator.health();
                assertThat(stopped.getStatus()).isEqualTo(Status.DOWN);
                assertThat((List<String>) stopped.getDetails().get("problems"))
                        .containsExactly("listener 'orders-listener' is stopped");
                assertThat(stopped.getDetails()).containsEntry("wakeUpSubscription",
                        "not needed (no listener running)");
                registry.getListenerContainer("orders-listener").start();
                assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
            }
        });
    }

    @Test
    void exceededThresholdsReportTheChosenStatusAndNameTheThreshold() {
        runner().withPropertyValues("rmq.health.dead-threshold=0", "rmq.health.oldest-due-threshold=30s",
                "rmq.health.threshold-status=out_of_service").run(context -> {
                    HealthIndicator indicator = context.getBean("rmqHealthIndicator", HealthIndicator.class);
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);

                    template.sendFixedTime("h-orders", "overdue", Instant.now().minusSeconds(120));
                    Health overdue = indicator.health();
                    assertThat(overdue.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                    assertThat((List<String>) overdue.getDetails().get("thresholdsExceeded")).singleElement()
                            .asString().contains("h-orders").contains("threshold PT30S");

                    RmqConsumer consumer = context.getBean(Rmq.class).consumer("h-jobs",
                            ConsumerSettings.DEFAULT);
                    template.sendPriority("h-jobs", "poison", 1);
                    Delivery delivery = consumer.poll().deliveries().get(0);
                    consumer.deadLetter(delivery, "dead on purpose");
                    Health dead = indicator.health();
                    assertThat(dead.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                    assertThat((List<String>) dead.getDetails().get("thresholdsExceeded")).hasSize(2)
                            .anyMatch(s -> s.contains("'h-jobs' holds 1 dead messages (threshold 0)"));
                });
        // by default, an exceeded threshold is reported with UP, and named in the details
        runner().withPropertyValues("rmq.health.dead-threshold=0").run(context -> {
            Rmq rmq = context.getBean(Rmq.class);
            rmq.producer().send(io.rmq.producer.OutgoingMessage.priority("h-jobs", "poison", 1));
            RmqConsumer consumer = rmq.consumer("h-jobs", ConsumerSettings.DEFAULT);
            consumer.deadLetter(consumer.poll().deliveries().get(0), "dead on purpose");
            Health health = context.getBean("rmqHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat((List<String>) health.getDetails().get("thresholdsExceeded")).hasSize(1);
        });
    }

    @Test
    void scriptsANodeLostAreLoadedAgainAndCounted() {
        runner().run(context -> {
            HealthIndicator indicator = context.getBean("rmqHealthIndicator", HealthIndicator.class);
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
            io.lettuce.core.AbstractRedisClient client = topology.newClient();
            try {
                if (client instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
                    try (var connection = cluster.connect()) {
                        connection.sync().upstream().commands().scriptFlush();
                    }
                }
                else {
                    try (var connection = ((io.lettuce.core.RedisClient) client).connect()) {
                        connection.sync().scriptFlush();
                    }
                }
            }
            finally {
                client.shutdown();
            }
            try (LogCapture log = LogCapture.rmq()) {
                Health health = indicator.health();
                assertThat(health.getStatus()).isEqualTo(Status.UP);
                assertThat(detail(health, "redis")).allSatisfy((node, check) -> assertThat((Map<String, Object>) check)
                        .containsEntry("scriptsLoaded", true).containsKey("scriptsReloaded"));
                assertThat(log.messages()).anyMatch(m -> m.contains("loaded") && m.contains("again"));
                assertThat(detail(indicator.health(), "redis")).allSatisfy((node, check) ->
                        assertThat((Map<String, Object>) check).doesNotContainKey("scriptsReloaded"));
            }
        });
    }

    @Test
    void aResultIsReusedWithinItsTimeToLive() {
        runner().withPropertyValues("rmq.health.cache-time-to-live=1h").run(context -> {
            HealthIndicator indicator = context.getBean("rmqHealthIndicator", HealthIndicator.class);
            Health first = indicator.health();
            context.getBean(RmqTemplate.class).sendPriority("h-jobs", "job", 5);
            assertThat(indicator.health()).isSameAs(first);
        });
    }

    @Test
    void downWhenTheRedisServerStops() throws Exception {
        if (topology == RedisTopology.CLUSTER) {
            return; // a server of the test's own: standalone (the cluster case is the same check on every master)
        }
        int port = LateRedisServer.freePort();
        LateRedisServer redis = LateRedisServer.startOn(port);
        try (LogCapture log = LogCapture.of("io.rmq", "io.lettuce.core")) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                            JacksonAutoConfiguration.class, RmqAutoConfiguration.class,
                            RmqHealthContributorAutoConfiguration.class))
                    .withUserConfiguration(WithListener.class)
                    .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
                            "rmq.topics.h-orders.type=FIXED_TIME", "rmq.health.cache-time-to-live=0s",
                            "rmq.health.timeout=500ms", "rmq.shutdown-timeout=1s")
                    .run(context -> {
                        HealthIndicator indicator = context.getBean("rmqHealthIndicator", HealthIndicator.class);
                        assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
                        redis.close(); // stops the server's own process (by its PID), nothing else
                        Health down = indicator.health();
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(detail(down, "redis", "standalone")).containsEntry("reachable", false)
                                .containsKey("error");
                        assertThat((List<String>) down.getDetails().get("problems")).singleElement().asString()
                                .startsWith("Redis standalone: ");
                        assertThat(down.getDetails()).doesNotContainKey("topics");
                    });
        }
        finally {
            redis.close();
        }
    }

    // ------------------------------------------------------------------ a full Redis

    @Test
    void downWhenRedisIsFullWithItsMemoryAndPolicyInTheDetailsAndSendsSayWhy() {
        runner().run(context -> {
            HealthIndicator indicator = context.getBean("rmqHealthIndicator", HealthIndicator.class);
            Health up = indicator.health();
            assertThat(up.getStatus()).as("%s", up).isEqualTo(Status.UP);
            assertThat(detail(up, "redis")).allSatisfy((node, check) -> assertThat((Map<String, Object>) check)
                    .containsEntry("full", false).containsKeys("memory", "maxmemoryPolicy"));
            Map<String, String[]> saved = setMaxmemoryOnEveryMaster("1", null);
            try {
                assertThatThrownBy(() -> context.getBean(RmqTemplate.class).sendFixedTime("h-orders", "x",
                        Instant.now())).isInstanceOf(io.rmq.core.RmqRedisFullException.class)
                        .hasMessageContaining("the message was NOT stored");
                Health full = indicator.health();
                assertThat(full.getStatus()).as("%s", full).isEqualTo(Status.DOWN);
                assertThat(detail(full, "redis")).hasSize(topology == RedisTopology.CLUSTER ? 3 : 1)
                        .allSatisfy((node, check) -> assertThat((Map<String, Object>) check)
                                .containsEntry("full", true).containsEntry("maxmemoryPolicy", "noeviction")
                                .hasEntrySatisfying("memory", memory -> assertThat((String) memory)
                                        .endsWith(" of 1B")));
                assertThat((List<String>) full.getDetails().get("problems")).isNotEmpty().allMatch(problem -> problem
                        .contains("is full (") && problem.contains("sends fail with RmqRedisFullException"));
            }
            finally {
                setMaxmemoryOnEveryMaster(null, saved);
            }
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
        });
    }

    /** Sets maxmemory (policy noeviction) on every master, or restores {@code saved}; returns the values before. */
    private Map<String, String[]> setMaxmemoryOnEveryMaster(String maxmemory, Map<String, String[]> saved) {
        Map<String, String[]> before = new java.util.HashMap<>();
        io.lettuce.core.AbstractRedisClient client = topology.newClient();
        try {
            List<io.lettuce.core.api.sync.RedisServerCommands<String, String>> masters = new java.util.ArrayList<>();
            List<String> names = new java.util.ArrayList<>();
            if (client instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
                var connection = cluster.connect();
                for (var node : cluster.getPartitions()) {
                    if (node.is(io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag.UPSTREAM)) {
                        masters.add(connection.getConnection(node.getNodeId()).sync());
                        names.add(node.getNodeId());
                    }
                }
            }
            else {
                masters.add(((io.lettuce.core.RedisClient) client).connect().sync());
                names.add("standalone");
            }
            for (int i = 0; i < masters.size(); i++) {
                var commands = masters.get(i);
                before.put(names.get(i), new String[] {commands.configGet("maxmemory").get("maxmemory"),
                        commands.configGet("maxmemory-policy").get("maxmemory-policy")});
                String[] restore = saved == null ? new String[] {maxmemory, "noeviction"} : saved.get(names.get(i));
                commands.configSet("maxmemory-policy", restore[1]);
                commands.configSet("maxmemory", restore[0]);
            }
        }
        finally {
            client.shutdown();
        }
        return before;
    }

    // ------------------------------------------------------------------ when the indicator appears

    @Test
    void appearsWithHealthOnTheClassPathBacksOffAndCanBeDisabled() {
        if (topology == RedisTopology.CLUSTER) {
            return; // conditions only: once is enough
        }
        runner().run(context -> assertThat(context).hasSingleBean(RmqHealthIndicator.class)
                .hasBean("rmqHealthIndicator"));
        runner().withPropertyValues("management.health.rmq.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RmqHealthIndicator.class));
        runner().withPropertyValues("management.health.defaults.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RmqHealthIndicator.class));
        runner().withBean("rmqHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
                .run(context -> assertThat(context).doesNotHaveBean(RmqHealthIndicator.class)
                        .hasBean("rmqHealthIndicator"));
        runner().withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RmqHealthIndicator.class));
        runner().withPropertyValues("rmq.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RmqHealthIndicator.class));
    }
}
