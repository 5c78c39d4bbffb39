package io.rmq.autoconfigure;

import java.time.Duration;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.core.TopicConflictException;
import io.rmq.core.TopicType;
import io.rmq.internal.RmqInternals;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.listener.RmqListenerAnnotationBeanPostProcessor;
import io.rmq.spring.listener.RmqListenerContainerFactory;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class RmqAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class))
            .withPropertyValues(props(RedisTopology.STANDALONE))
            .withPropertyValues("rmq.key-prefix=ac-" + UUID.randomUUID());

    private static String[] props(RedisTopology topology) {
        return topology.propertyValues();
    }

    @Test
    void withoutARedisConnectionFactoryThereAreNoRmqBeans() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RmqAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(Rmq.class);
                    assertThat(context).doesNotHaveBean(RmqTemplate.class);
                    assertThat(context).doesNotHaveBean(RmqListenerAnnotationBeanPostProcessor.class);
                });
    }

    @Test
    void theHistoryIsWrittenEveryTenSecondsByDefaultAndTheFlushIntervalAndSwitchAreHonoured() {
        runner.run(context -> assertThat(context.getBean(Rmq.class).options().historyFlushInterval())
                .isEqualTo(java.time.Duration.ofSeconds(10)));
        runner.withPropertyValues("rmq.history.flush-interval=2s").run(context -> assertThat(
                context.getBean(Rmq.class).options().historyFlushInterval()).isEqualTo(java.time.Duration.ofSeconds(2)));
        runner.withPropertyValues("rmq.history.enabled=false").run(context -> assertThat(
                context.getBean(Rmq.class).options().historyFlushInterval()).as("nothing counted or written").isZero());
        runner.withPropertyValues("rmq.history.flush-interval=1ms").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessageContaining("rmq.history.flush-interval")
                .hasMessageContaining("at least 10ms"));
    }

    @Test
    void rmqEnabledFalseTurnsItOff() {
        runner.withPropertyValues("rmq.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(Rmq.class);
            assertThat(context).doesNotHaveBean(RmqTemplate.class);
            assertThat(context).doesNotHaveBean(RmqListenerEndpointRegistry.class);
        });
    }

    @Test
    void topicNamesWithDotsMayBeWrittenWithoutBrackets() {
        runner.withPropertyValues("rmq.topics.orders.type=FIXED_TIME", "rmq.topics.orders.dlt.type=FIXED_TIME",
                "rmq.topics.orders.dlt.slot-amount=4", "rmq.topics.audit.trail.type=PRIORITY",
                "rmq.topics.audit.trail.rate-limit=5/s", "rmq.topics[billing.dlt].type=RANGE_MERGE").run(context -> {
                    assertThat(context).hasNotFailed();
                    io.rmq.core.TopicRegistry topics = context.getBean(Rmq.class).topics();
                    assertThat(topics.all()).containsOnlyKeys("orders", "orders.dlt", "audit.trail", "billing.dlt");
                    assertThat(topics.get("orders.dlt"))
                            .isEqualTo(new io.rmq.core.TopicDefinition("orders.dlt", TopicType.FIXED_TIME, 4));
                    assertThat(topics.get("orders"))
                            .isEqualTo(new io.rmq.core.TopicDefinition("orders", TopicType.FIXED_TIME, 16));
                    assertThat(topics.get("audit.trail").type()).isEqualTo(TopicType.PRIORITY);
                    assertThat(topics.get("billing.dlt").type()).isEqualTo(TopicType.RANGE_MERGE);
                    assertThat(context.getBean(RmqListenerContainerFactory.class).configuredRateLimit("audit.trail"))
                            .isEqualTo(io.rmq.core.RateLimit.parse("5/s"));
                });
    }

    @Test
    void defaultBeansAreCreatedOnTheApplicationsRedis() {
        runner.withPropertyValues("rmq.topics.orders.type=FIXED_TIME", "rmq.topics.orders.slot-amount=8")
                .run(context -> {
                    assertThat(context).hasSingleBean(Rmq.class);
                    assertThat(context).hasSingleBean(RmqTemplate.class);
                    assertThat(context).hasSingleBean(RmqListenerContainerFactory.class);
                    assertThat(context).hasSingleBean(RmqListenerEndpointRegistry.class);
                    assertThat(context).hasSingleBean(RmqListenerAnnotationBeanPostProcessor.class);
                    assertThat(context).hasSingleBean(io.rmq.spring.operations.RmqOperations.class);
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    assertThat(template.getRmq().topics().get("orders").slotAmount()).isEqualTo(8);
                    template.sendFixedTime("orders", "o-1", java.time.Instant.now().plusSeconds(60));
                    assertThat(template.admin().stats("orders").waiting()).isEqualTo(1);
                });
    }

    @Test
    void orderlyListenersCoordinateInRedisByDefaultAndThroughZooKeeperWhenConfigured() throws Exception {
        runner.run(context -> assertThat(context).doesNotHaveBean(io.rmq.coordination.SlotCoordinator.class));
        try (org.apache.curator.test.TestingServer zookeeper = new org.apache.curator.test.TestingServer(true)) {
            runner.withConfiguration(AutoConfigurations.of(RmqZooKeeperAutoConfiguration.class))
                    .withPropertyValues("rmq.coordination.zookeeper.connect-string=" + zookeeper.getConnectString(),
                            "rmq.coordination.zookeeper.root=/apps/rmq")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context).hasSingleBean(org.apache.curator.framework.CuratorFramework.class);
                        assertThat(context.getBean(io.rmq.coordination.SlotCoordinator.class))
                                .isInstanceOf(io.rmq.coordination.zookeeper.ZooKeeperSlotCoordinator.class);
                        var membership = context.getBean(io.rmq.coordination.SlotCoordinator.class)
                                .join("t", "only", 4, Duration.ofSeconds(5));
                        assertThat(membership.assignedSlots()).containsOnlyKeys(0, 1, 2, 3);
                        membership.close();
                    });
        }
    }

    @Test
    void aBadRateLimitFailsAtStartUpNamingTheValueAndTheRule() {
        runner.withPropertyValues("rmq.topics.orders.type=FIXED_TIME", "rmq.topics.orders.rate-limit=fast")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("'fast'")
                            .hasMessageContaining("500/s");
                });
    }

    @Test
    void deadLetterRetentionDefaultsTo10000And30DaysAndATopicEntryOverridesIt() {
        runner.withPropertyValues("rmq.consumer.dead-letter-max-age=7d", "rmq.topics.orders.dlt.type=FIXED_TIME",
                "rmq.topics.orders.dlt.dead-letter-max-count=0", "rmq.topics[audit].type=PRIORITY",
                "rmq.topics[audit].dead-letter-max-age=1h").run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqListenerContainerFactory factory = context.getBean(RmqListenerContainerFactory.class);
                    assertThat(factory.getDefaultSettings().retry().deadLetters())
                            .isEqualTo(new io.rmq.core.DeadLetterRetention(10_000, Duration.ofDays(7)));
                    assertThat(factory.deadLetters("orders.dlt"))
                            .isEqualTo(new io.rmq.core.DeadLetterRetention(0, Duration.ofDays(7)));
                    assertThat(factory.deadLetters("audit"))
                            .isEqualTo(new io.rmq.core.DeadLetterRetention(10_000, Duration.ofHours(1)));
                    assertThat(factory.deadLetters("elsewhere")).isEqualTo(factory.getDefaultSettings().retry()
                            .deadLetters());
                    assertThat(factory.withDefaultConcurrency(2).deadLetters("audit"))
                            .isEqualTo(factory.deadLetters("audit"));
                });
        runner.run(context -> assertThat(context.getBean(RmqListenerContainerFactory.class).getDefaultSettings()
                .retry().deadLetters()).isEqualTo(io.rmq.core.DeadLetterRetention.DEFAULT));
    }

    @Test
    void aTopicsExpireAfterIsTheTemplatesDefaultExpiryAndKeepExpiredSendsExpiredMessagesToDead() {
        runner.withPropertyValues("rmq.topics.quotes.type=FIXED_TIME", "rmq.topics.quotes.slot-amount=1",
                "rmq.topics.quotes.expire-after=10m", "rmq.topics.quotes.dead-letter-keep-expired=true",
                "rmq.topics.plain.type=FIXED_TIME", "rmq.topics.plain.slot-amount=1").run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqListenerContainerFactory factory = context.getBean(RmqListenerContainerFactory.class);
                    assertThat(factory.deadLetters("quotes").keepExpired()).isTrue();
                    assertThat(factory.deadLetters("plain").keepExpired()).isFalse();
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    var keys = RmqInternals.redis(context.getBean(Rmq.class)).keys();
                    var redis = context.getBean(org.springframework.data.redis.core.StringRedisTemplate.class);
                    String quotesExpiry = new String(keys.slot("quotes", 0).expiry(),
                            java.nio.charset.StandardCharsets.UTF_8);
                    long before = System.currentTimeMillis();
                    template.sendFixedTime("quotes", "q1", java.time.Instant.now());
                    assertThat(redis.opsForZSet().score(quotesExpiry, "q1")).as("10 minutes after Redis stored it")
                            .isNotNull()
                            .isBetween(before + 600_000 - 5_000.0, System.currentTimeMillis() + 600_000 + 5_000.0);
                    // a message's own expiry wins; other topics' messages do not expire
                    template.send(io.rmq.producer.OutgoingMessage.fixedTime("quotes", "q2", java.time.Instant.now())
                            .expiresAfter(Duration.ofHours(2)));
                    assertThat(redis.opsForZSet().score(quotesExpiry, "q2")).isGreaterThan(before + 7_000_000.0);
                    template.sendFixedTime("plain", "p", java.time.Instant.now());
                    assertThat(redis.hasKey(new String(keys.slot("plain", 0).expiry(),
                            java.nio.charset.StandardCharsets.UTF_8))).isFalse();
                });
        runner.withPropertyValues("rmq.topics.quotes.type=FIXED_TIME", "rmq.topics.quotes.expire-after=0s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(io.rmq.core.RmqInvalidArgumentException.class)
                            .hasMessageContaining("rmq.topics.quotes.expire-after").hasMessageContaining("PT0S")
                            .hasMessageContaining("must be between 1ms and 2^52 ms");
                });
    }

    @Test
    void aTopicsDedupeForIsTheTemplatesDefaultWindow() {
        runner.withPropertyValues("rmq.topics.reminders.type=PRIORITY", "rmq.topics.reminders.slot-amount=1",
                "rmq.topics.reminders.dedupe-for=10m", "rmq.topics.plain.type=PRIORITY",
                "rmq.topics.plain.slot-amount=1").run(context -> {
                    assertThat(context).hasNotFailed();
                    RmqTemplate template = context.getBean(RmqTemplate.class);
                    var keys = RmqInternals.redis(context.getBean(Rmq.class)).keys();
                    var redis = context.getBean(org.springframework.data.redis.core.StringRedisTemplate.class);
                    byte[] dedupe = keys.slot("reminders", 0).dedupe();
                    java.util.function.Function<String, Double> windowOf = id -> redis.execute(
                            (org.springframework.data.redis.core.RedisCallback<Double>) c -> c.zSetCommands()
                                    .zScore(dedupe, io.rmq.redis.internal.EnvelopeKeys.idMember(id)));
                    template.send(io.rmq.producer.OutgoingMessage.priority("reminders", "r", 1).withId("o-1"));
                    assertThat(windowOf.apply("o-1")).as("pending: minus 10 minutes").isEqualTo(-600_000.0);
                    // a message's own window wins; other topics' messages have none
                    template.send(io.rmq.producer.OutgoingMessage.priority("reminders", "r", 1).withId("o-2")
                            .dedupeFor(Duration.ofSeconds(30)));
                    assertThat(windowOf.apply("o-2")).isEqualTo(-30_000.0);
                    template.send(io.rmq.producer.OutgoingMessage.priority("plain", "p", 1).withId("o-3"));
                    assertThat(redis.hasKey(new String(keys.slot("plain", 0).dedupe(),
                            java.nio.charset.StandardCharsets.UTF_8))).isFalse();
                });
        runner.withPropertyValues("rmq.topics.reminders.type=PRIORITY", "rmq.topics.reminders.dedupe-for=400d")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(io.rmq.core.RmqInvalidArgumentException.class)
                            .hasMessageContaining("rmq.topics.reminders.dedupe-for").hasMessageContaining("PT9600H")
                            .hasMessageContaining("must be between 1ms and 366d");
                });
    }

    @Test
    void aNegativeDeadLetterBoundFailsAtStartUpNamingThePropertyValueAndRule() {
        runner.withPropertyValues("rmq.consumer.dead-letter-max-count=-5").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(io.rmq.core.RmqInvalidArgumentException.class)
                    .hasMessageContaining("rmq.consumer.dead-letter-max-count").hasMessageContaining("-5")
                    .hasMessageContaining("must be zero (keep every dead message) or positive");
        });
        runner.withPropertyValues("rmq.topics.orders.type=FIXED_TIME", "rmq.topics.orders.dead-letter-max-age=-1s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(io.rmq.core.RmqInvalidArgumentException.class)
                            .hasMessageContaining("rmq.topics.orders.dead-letter-max-age").hasMessageContaining("PT-1S")
                            .hasMessageContaining("must be zero (keep dead messages however old) or positive");
                });
    }

    @Test
    void aLookAheadOverOneSecondFailsAtStartUpNamingTheFieldValueAndRule() {
        runner.withPropertyValues("rmq.consumer.look-ahead=2s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(io.rmq.core.RmqInvalidArgumentException.class)
                    .hasMessageContaining("rmq.consumer.look-ahead").hasMessageContaining("PT2S").hasMessageContaining("at most 1 s");
        });
    }

    @Test
    void propertiesBind() {
        runner.withPropertyValues("rmq.key-prefix=myapp", "rmq.max-body-size=2KB",
                "rmq.topics.prices.type=RANGE_MERGE", "rmq.topics.prices.slot-amount=32",
                "rmq.consumer.concurrency=4", "rmq.consumer.batch-size=10", "rmq.consumer.lease=45s",
                "rmq.consumer.max-retries=3", "rmq.consumer.backoff.initial=250ms", "rmq.consumer.backoff.multiplier=3",
                "rmq.consumer.backoff.max=1m", "rmq.consumer.backoff.jitter=0", "rmq.consumer.max-idle=5s",
                "rmq.consumer.look-ahead=20ms", "rmq.shutdown-timeout=7s").run(context -> {
                    RmqProperties p = context.getBean(RmqProperties.class);
                    assertThat(p.keyPrefix()).isEqualTo("myapp");
                    assertThat(p.maxBodySize().toBytes()).isEqualTo(2048);
                    assertThat(p.topics().get("prices").type()).isEqualTo(TopicType.RANGE_MERGE);
                    assertThat(p.topics().get("prices").slotAmount()).isEqualTo(32);
                    assertThat(p.consumer().concurrency()).isEqualTo(4);
                    assertThat(p.consumer().maxIdle()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(p.shutdownTimeout()).isEqualTo(Duration.ofSeconds(7));
                    RmqListenerContainerFactory factory = context.getBean(RmqListenerContainerFactory.class);
                    assertThat(factory.getDefaultConcurrency()).isEqualTo(4);
                    assertThat(factory.getDefaultSettings().batchSize()).isEqualTo(10);
                    assertThat(factory.getDefaultSettings().lease()).isEqualTo(Duration.ofSeconds(45));
                    assertThat(factory.getDefaultSettings().lookAhead()).isEqualTo(Duration.ofMillis(20));
                    assertThat(factory.getDefaultSettings().retry().maxRetries()).isEqualTo(3);
                    assertThat(factory.getDefaultSettings().retry().backoff().initial()).isEqualTo(Duration.ofMillis(250));
                    assertThat(factory.getDefaultSettings().retry().backoff().multiplier()).isEqualTo(3.0);
                    Rmq rmq = context.getBean(Rmq.class);
                    assertThat(rmq.options().keyPrefix()).isEqualTo("myapp");
                    assertThat(rmq.options().maxBodyBytes()).isEqualTo(2048);
                    RmqInternals.redis(rmq).gateway(); // connected
                });
    }

    @Test
    void defaultsMatchTheDocumentedValues() {
        runner.run(context -> {
            RmqProperties p = context.getBean(RmqProperties.class);
            assertThat(p.enabled()).isTrue();
            assertThat(p.maxBodySize().toKilobytes()).isEqualTo(64);
            assertThat(p.consumer().concurrency()).isEqualTo(1);
            assertThat(p.consumer().batchSize()).isEqualTo(64);
            assertThat(p.consumer().lease()).isEqualTo(Duration.ofSeconds(30));
            assertThat(p.consumer().maxRetries()).isEqualTo(16);
            assertThat(p.consumer().backoff().initial()).isEqualTo(Duration.ofSeconds(1));
            assertThat(p.consumer().backoff().max()).isEqualTo(Duration.ofMinutes(10));
            assertThat(p.consumer().maxIdle()).isEqualTo(Duration.ofSeconds(30));
            assertThat(p.consumer().commandTimeout()).isEqualTo(Duration.ofSeconds(10));
            assertThat(p.consumer().lookAhead()).as("off by default").isZero();
            assertThat(p.shutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
            assertThat(p.redis().connection()).isEqualTo(RmqProperties.Connection.OWN);
            assertThat(p.redis().reconnectDelayMax()).isEqualTo(Duration.ofSeconds(1));
            assertThat(p.redis().connectTimeout()).isEqualTo(Duration.ofSeconds(5));
            assertThat(p.redis().commandTimeout()).isEqualTo(Duration.ofSeconds(10));
            assertThat(p.redis().topologyRefreshPeriod()).isEqualTo(Duration.ofSeconds(5));
            assertThat(p.redis().disconnectedBehavior())
                    .isEqualTo(io.lettuce.core.ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
            assertThat(p.redis().settings()).isEqualTo(io.rmq.redis.RedisClientSettings.DEFAULT);
            assertThat(p.dashboard()).isEqualTo(new RmqProperties.Dashboard(false, "/rmq", true, false));
        });
    }

    @Test
    void userBeansWin() {
        runner.withUserConfiguration(UserBeans.class).run(context -> {
            assertThat(context).hasSingleBean(RmqTemplate.class);
            assertThat(context.getBean(RmqTemplate.class)).isSameAs(context.getBean(UserBeans.class).template);
            assertThat(context).hasSingleBean(RmqListenerEndpointRegistry.class);
            assertThat(context.getBean(RmqListenerEndpointRegistry.class)).isInstanceOf(CustomRegistry.class);
        });
    }

    @Test
    void conflictingTopicDefinitionFailsStartUpNamingBoth() {
        String prefix = "conflict-" + UUID.randomUUID();
        runner.withPropertyValues("rmq.key-prefix=" + prefix, "rmq.topics.orders.type=FIXED_TIME").run(first -> {
            assertThat(first).hasNotFailed();
            runner.withPropertyValues("rmq.key-prefix=" + prefix, "rmq.topics.orders.type=PRIORITY").run(second -> {
                assertThat(second).hasFailed();
                assertThat(second.getStartupFailure()).rootCause().isInstanceOf(TopicConflictException.class)
                        .hasMessageContaining("type=FIXED_TIME slotAmount=16 (registered in Redis)")
                        .hasMessageContaining("type=PRIORITY slotAmount=16 (requested)");
            });
        });
    }

    @Test
    void invalidTopicPropertiesFailWithTheFieldNamed() {
        runner.withPropertyValues("rmq.topics.orders.type=FIXED_TIME", "rmq.topics.orders.slot-amount=12")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("Invalid rmq.topics.orders.slot-amount '12': must be a power of two"));
        runner.withPropertyValues("rmq.topics.orders.slot-amount=4")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("rmq.topics.orders.type"));
        runner.withPropertyValues("rmq.topics.[orders{eu}].type=PRIORITY")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("Invalid topic name in rmq.topics 'orders{eu}'"));
    }

    @Configuration(proxyBeanMethods = false)
    static class UserBeans {

        RmqTemplate template;

        @Bean
        RmqTemplate myTemplate(Rmq rmq) {
            template = new RmqTemplate(rmq);
            return template;
        }

        @Bean
        RmqListenerEndpointRegistry myRegistry() {
            return new CustomRegistry();
        }
    }

    static class CustomRegistry extends RmqListenerEndpointRegistry {
    }
}
