package io.rmq.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.TopicType;
import io.rmq.internal.RmqInternals;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RMQ talks to Redis through a Lettuce client of its own, built from Boot's Redis connection details and sharing
 * Boot's {@code ClientResources}; the application's client stays exactly as the application configured it (issue 19,
 * defect 3: RMQ used to cap the reconnect delay of every Redis user of the application and switch on topology refresh
 * on the application's client).
 */
@ExtendWith(RedisServersExtension.class)
class RmqRedisClientAutoConfigurationTest {

    private static ApplicationContextRunner runner(RedisTopology topology, boolean withRmq) {
        AutoConfigurations configurations = withRmq
                ? AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                        RmqAutoConfiguration.class)
                : AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class);
        return new ApplicationContextRunner().withConfiguration(configurations)
                .withPropertyValues(topology.propertyValues("cl-" + UUID.randomUUID()));
    }

    /** What the application's Lettuce client is configured with, as far as RMQ used to change it. */
    private static Map<String, Object> applicationClient(ApplicationContext context) {
        LettuceConnectionFactory factory = context.getBean(LettuceConnectionFactory.class);
        ClientOptions options = factory.getClientConfiguration().getClientOptions().orElseThrow();
        AbstractRedisClient nativeClient = factory.getNativeClient();
        ClientOptions live = nativeClient == null ? options : nativeClient.getOptions();
        ClusterTopologyRefreshOptions refresh = live instanceof ClusterClientOptions cluster
                ? cluster.getTopologyRefreshOptions() : null;
        ClientResources resources = context.getBean(ClientResources.class);
        return Map.of("reconnect delay at attempt 20", resources.reconnectDelay().createDelay(20),
                "disconnected behaviour", live.getDisconnectedBehavior(),
                "periodic refresh", refresh == null ? "-" : refresh.isPeriodicRefreshEnabled() + " " + refresh.getRefreshPeriod(),
                "adaptive triggers", refresh == null ? "-" : refresh.getAdaptiveRefreshTriggers().toString(),
                "adaptive timeout", refresh == null ? "-" : refresh.getAdaptiveRefreshTimeout().toString(),
                "node filter is Lettuce's", !(live instanceof ClusterClientOptions cluster)
                        || cluster.getNodeFilter() == ClusterClientOptions.DEFAULT_NODE_FILTER);
    }

    @Test
    void theApplicationsLettuceClientIsLeftAsBootConfiguredItWithAndWithoutRmq() {
        for (RedisTopology topology : RedisTopology.values()) {
            Map<String, Object>[] withoutRmq = new Map[1];
            runner(topology, false).run(context -> {
                // the application uses its client before RMQ would get to it
                context.getBean(StringRedisTemplate.class).opsForValue().set("app-key", "v");
                withoutRmq[0] = applicationClient(context);
            });
            runner(topology, true).run(context -> {
                assertThat(context).hasNotFailed();
                context.getBean(StringRedisTemplate.class).opsForValue().set("app-key", "v");
                assertThat(applicationClient(context)).as(topology.name()).isEqualTo(withoutRmq[0]);
                // Lettuce's own reconnect cap, as Boot leaves it
                assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(20))
                        .isEqualTo(Duration.ofSeconds(30));
            });
        }
    }

    @Test
    void whatTheApplicationSetOnItsClientStaysSo() {
        runner(RedisTopology.CLUSTER, true).withPropertyValues("spring.data.redis.lettuce.cluster.refresh.period=42s",
                "spring.data.redis.lettuce.cluster.refresh.adaptive=false").run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(StringRedisTemplate.class).opsForValue().set("app-key", "v");
                    Map<String, Object> client = applicationClient(context);
                    assertThat(client.get("periodic refresh")).isEqualTo("true PT42S");
                    assertThat(context.getBean(RmqRedisClient.class).client().getOptions())
                            .isNotSameAs(context.getBean(LettuceConnectionFactory.class).getNativeClient().getOptions());
                });
    }

    @Test
    void rmqSendsAndConsumesThroughItsOwnClientWhileTheApplicationsTemplateWorksOnItsOwn() {
        for (RedisTopology topology : RedisTopology.values()) {
            runner(topology, true).withPropertyValues("rmq.topics.orders.type=FIXED_TIME").run(context -> {
                assertThat(context).hasNotFailed();
                RmqRedisClient own = context.getBean(RmqRedisClient.class);
                LettuceConnectionFactory factory = context.getBean(LettuceConnectionFactory.class);
                Rmq rmq = context.getBean(Rmq.class);
                assertThat(RmqInternals.redis(rmq).gateway().client()).isSameAs(own.client())
                        .isNotSameAs(factory.getNativeClient());
                assertThat(own.isCluster()).isEqualTo(topology == RedisTopology.CLUSTER);
                // one set of threads: RMQ's client shares the application's event loops and timer
                ClientResources shared = context.getBean(ClientResources.class);
                assertThat(own.client().getResources().eventLoopGroupProvider())
                        .isSameAs(shared.eventLoopGroupProvider());
                assertThat(own.client().getResources().timer()).isSameAs(shared.timer());

                context.getBean(RmqTemplate.class).sendFixedTime("orders", "o-1", Instant.now());
                RmqConsumer consumer = rmq.consumer("orders", ConsumerSettings.DEFAULT);
                List<Delivery> polled = consumer.poll().deliveries();
                assertThat(polled).hasSize(1);
                assertThat(consumer.ack(polled.get(0))).isTrue();

                StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
                template.opsForValue().set("app-key-" + topology, "app-value");
                assertThat(template.opsForValue().get("app-key-" + topology)).isEqualTo("app-value");
            });
        }
    }

    @Test
    void rmqsOwnClientTakesTheRmqRedisSettings() {
        runner(RedisTopology.CLUSTER, true).run(context -> {
            AbstractRedisClient client = context.getBean(RmqRedisClient.class).client();
            ClusterClientOptions options = (ClusterClientOptions) client.getOptions();
            assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
            assertThat(options.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofSeconds(5));
            assertThat(options.getTopologyRefreshOptions().getRefreshPeriod()).isEqualTo(Duration.ofSeconds(5));
            assertThat(options.getNodeFilter()).isNotSameAs(ClusterClientOptions.DEFAULT_NODE_FILTER);
            assertThat(client.getResources().reconnectDelay().createDelay(20)).isEqualTo(Duration.ofSeconds(1));
            assertThat(client.getResources().reconnectDelay().createDelay(1)).isLessThanOrEqualTo(Duration.ofMillis(100));
        });
        runner(RedisTopology.STANDALONE, true).withPropertyValues("rmq.redis.reconnect-delay-max=250ms",
                "rmq.redis.connect-timeout=2s", "rmq.redis.command-timeout=3s",
                "rmq.redis.disconnected-behavior=accept-commands").run(context -> {
                    AbstractRedisClient client = context.getBean(RmqRedisClient.class).client();
                    assertThat(client.getResources().reconnectDelay().createDelay(20))
                            .isEqualTo(Duration.ofMillis(250));
                    assertThat(client.getOptions().getSocketOptions().getConnectTimeout())
                            .isEqualTo(Duration.ofSeconds(2));
                    assertThat(client.getOptions().getDisconnectedBehavior())
                            .isEqualTo(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS);
                    RmqProperties.Redis redis = context.getBean(RmqProperties.class).redis();
                    assertThat(redis.commandTimeout()).isEqualTo(Duration.ofSeconds(3));
                });
        runner(RedisTopology.STANDALONE, true).withPropertyValues("rmq.redis.reconnect-delay-max=0").run(context ->
                assertThat(context.getBean(RmqRedisClient.class).client().getResources().reconnectDelay()
                        .createDelay(20)).isEqualTo(Duration.ofSeconds(30)));
        try (LogCapture spring = LogCapture.of("org.springframework")) {
            runner(RedisTopology.STANDALONE, true).withPropertyValues("rmq.redis.command-timeout=0").run(context ->
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("rmq.redis.command-timeout").hasMessageContaining("must be positive"));
            assertThat(spring.messages()).anyMatch(m -> m.contains("Could not bind properties to 'RmqProperties'"));
        }
    }

    @Test
    void anApplicationCanPutRmqOnItsOwnConnectionFactoryAsConfigured() {
        runner(RedisTopology.STANDALONE, true).withPropertyValues("rmq.redis.connection=application",
                "rmq.topics.orders.type=FIXED_TIME").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(RmqRedisClient.class);
                    LettuceConnectionFactory factory = context.getBean(LettuceConnectionFactory.class);
                    assertThat(RmqInternals.redis(context.getBean(Rmq.class)).gateway().client())
                            .isSameAs(factory.getNativeClient());
                    context.getBean(RmqTemplate.class).sendFixedTime("orders", "o-1", Instant.now());
                    assertThat(context.getBean(RmqTemplate.class).admin().stats("orders").waiting()).isEqualTo(1);
                    assertThat(context.getBean(ClientResources.class).reconnectDelay().createDelay(20))
                            .isEqualTo(Duration.ofSeconds(30));
                });
    }

    @Test
    void anRmqRedisClientBeanOfTheApplicationsWins() {
        runner(RedisTopology.STANDALONE, true).withBean("myRmqClient", RmqRedisClient.class,
                () -> RmqRedisClient.standalone(RedisURI.create(RedisTopology.STANDALONE.springProperties()
                        .get("spring.data.redis.host"), Integer.parseInt(RedisTopology.STANDALONE.springProperties()
                        .get("spring.data.redis.port"))), null, null, RedisClientSettings.DEFAULT
                        .withReconnectDelayMax(Duration.ofMillis(300)))).run(context -> {
                            assertThat(context).hasSingleBean(RmqRedisClient.class);
                            RmqRedisClient mine = context.getBean(RmqRedisClient.class);
                            assertThat(RmqInternals.redis(context.getBean(Rmq.class)).gateway().client())
                                    .isSameAs(mine.client());
                            assertThat(mine.client().getResources().reconnectDelay().createDelay(20))
                                    .isEqualTo(Duration.ofMillis(300));
                        });
    }

    @Test
    void aConnectionDetailsBeanAsTestcontainersServiceConnectionsDefineItIsWhereRmqConnects() {
        String host = RedisTopology.STANDALONE.springProperties().get("spring.data.redis.host");
        int port = Integer.parseInt(RedisTopology.STANDALONE.springProperties().get("spring.data.redis.port"));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                // the properties point nowhere: the details bean wins, for Boot's client and RMQ's alike
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=1",
                        "rmq.key-prefix=cd-" + UUID.randomUUID(), "rmq.topics.orders.type=FIXED_TIME",
                        "rmq.startup.fail-fast=true")
                .withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
                    @Override
                    public Standalone getStandalone() {
                        return Standalone.of(host, port);
                    }
                }).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(RmqRedisClient.class).address()).isEqualTo(host + ":" + port);
                    context.getBean(RmqTemplate.class).sendFixedTime("orders", "o-1", Instant.now());
                    assertThat(context.getBean(RmqTemplate.class).admin().stats("orders").waiting()).isEqualTo(1);
                    assertThat(context.getBean(StringRedisTemplate.class).hasKey("no-such-key")).isFalse();
                });
    }

    @Test
    void sentinelClusterCredentialsAndSslComeFromTheConnectionDetails() {
        SslBundle bundle = SslBundle.systemDefault();
        DataRedisConnectionDetails sentinel = new DataRedisConnectionDetails() {
            @Override
            public String getPassword() {
                return "secret";
            }

            @Override
            public SslBundle getSslBundle() {
                return bundle;
            }

            @Override
            public Sentinel getSentinel() {
                return new Sentinel() {
                    @Override
                    public int getDatabase() {
                        return 3;
                    }

                    @Override
                    public String getMaster() {
                        return "mymaster";
                    }

                    @Override
                    public List<Node> getNodes() {
                        return List.of(new Node("s1", 26379), new Node("s2", 26380));
                    }

                    @Override
                    public String getUsername() {
                        return null;
                    }

                    @Override
                    public String getPassword() {
                        return "sentinel-secret";
                    }
                };
            }
        };
        ClientResources shared = DefaultClientResources.create();
        try (RmqRedisClient client = RmqRedisClientFactory.create(sentinel, false, shared,
                RedisClientSettings.DEFAULT)) {
            assertThat(client.address()).isEqualTo("master 'mymaster' of sentinels [s1:26379, s2:26380]");
            assertThat(client.client().getOptions().getSslOptions()).isNotNull();
            assertThat(client.isCluster()).isFalse();
        }
        catch (RuntimeException ex) {
            shared.shutdown();
            throw ex;
        }
        DataRedisConnectionDetails cluster = new DataRedisConnectionDetails() {
            @Override
            public Cluster getCluster() {
                return () -> List.of(new Node("n1", 7000), new Node("n2", 7001));
            }
        };
        try (RmqRedisClient client = RmqRedisClientFactory.create(cluster, true, shared,
                RedisClientSettings.DEFAULT)) {
            assertThat(client.isCluster()).isTrue();
            assertThat(client.address()).isEqualTo("cluster [n1:7000, n2:7001]");
        }
        finally {
            shared.shutdown();
        }
    }
}
