package io.rmq.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisConnectionException;
import io.rmq.Rmq;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.RateLimit;
import io.rmq.core.TopicDefinition;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.RmqErrorHandler;
import io.rmq.core.BodyCodec;
import io.rmq.redis.RedisGateway;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.listener.RmqListenerAnnotationBeanPostProcessor;
import io.rmq.spring.listener.RmqListenerContainerFactory;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Auto-configuration of RMQ on the application's Redis connection ({@code spring.data.redis.*}: standalone, Sentinel
 * or Cluster, SSL and credentials included) and JSON mapper. Every bean backs off when the application defines its
 * own. Active when a {@link RedisConnectionFactory} exists and {@code rmq.enabled} is not false.
 */
@AutoConfiguration(after = {DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class})
@ConditionalOnClass({LettuceConnectionFactory.class, Rmq.class})
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "rmq.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RmqProperties.class)
public class RmqAutoConfiguration {

    /** How much of a body log lines show with {@code rmq.log-bodies=true}. */
    static final int LOGGED_BODY_CHARS = 200;

    /**
     * The engine on its own connection from the application's Lettuce client; defines {@code rmq.topics}. The
     * properties are checked before anything connects. When Redis cannot be reached: with
     * {@code rmq.startup.fail-fast} start-up fails ({@link RedisUnreachableException}); without, the engine connects
     * in the background ({@link Rmq#connectLazily}) and the application starts.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Rmq rmq(RedisConnectionFactory connectionFactory, RmqProperties properties,
            ObjectProvider<JsonMapper> jsonMapper, Environment environment) {
        List<TopicDefinition> topics = TopicEntries.definitions(environment, properties);
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalStateException("RMQ needs Lettuce as the Redis client (spring.data.redis.client-type="
                    + "lettuce), but the RedisConnectionFactory is a " + connectionFactory.getClass().getName());
        }
        AbstractRedisClient client = lettuce.getNativeClient();
        if (client == null) {
            lettuce.start();
            client = lettuce.getRequiredNativeClient();
        }
        BodyCodec codec = new BodyCodec(jsonMapper.getIfAvailable(() -> JsonMapper.builder().findAndAddModules().build()));
        Rmq.Options options = new Rmq.Options(properties.keyPrefix(), (int) properties.maxBodySize().toBytes(), codec,
                properties.logBodies() ? LOGGED_BODY_CHARS : 0);
        Rmq rmq;
        try {
            // Redis reachable: connect now, so that a conflict with Redis's topic registry fails start-up
            rmq = Rmq.create(client, options);
        }
        catch (RuntimeException ex) {
            if (!unreachable(ex)) {
                throw ex;
            }
            if (properties.startup().failFast()) {
                throw new RedisUnreachableException(address(lettuce), RedisGateway.describe(ex), ex);
            }
            // the engine logs the outage itself, once
            rmq = Rmq.connectLazily(client, options);
        }
        try {
            topics.forEach(rmq::defineTopic);
        }
        catch (RuntimeException ex) {
            rmq.close();
            throw ex;
        }
        return rmq;
    }

    /** A failure to connect at all (a cluster client wraps it in "Cannot retrieve initial cluster partitions"). */
    private static boolean unreachable(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RedisConnectionException) {
                return true;
            }
        }
        return false;
    }

    /** Where the connection factory looks for Redis, for messages. */
    static String address(LettuceConnectionFactory lettuce) {
        if (lettuce.getClusterConfiguration() != null) {
            return "cluster " + lettuce.getClusterConfiguration().getClusterNodes();
        }
        if (lettuce.getSentinelConfiguration() != null) {
            return "master '" + lettuce.getSentinelConfiguration().getMaster() + "' of sentinels "
                    + lettuce.getSentinelConfiguration().getSentinels();
        }
        return lettuce.getHostName() + ":" + lettuce.getPort();
    }

    /**
     * Reconnects Boot's Lettuce client quickly after Redis comes back ({@code rmq.redis.reconnect-delay-max}). Applies
     * only to the {@code ClientResources} Boot creates; an application that defines its own keeps them as they are.
     */
    @Bean
    public ClientResourcesBuilderCustomizer rmqReconnectDelayCustomizer(RmqProperties properties) {
        Duration max = properties.redis().reconnectDelayMax();
        return builder -> {
            if (max != null && max.toMillis() > 0) {
                builder.reconnectDelay(RedisGateway.reconnectDelay(max));
            }
        };
    }

    @Bean
    @ConditionalOnMissingBean
    public RmqTemplate rmqTemplate(Rmq rmq) {
        return new RmqTemplate(rmq);
    }

    /** Containers use virtual threads when {@code spring.threads.virtual.enabled=true} on Java 21+. */
    @Bean
    @ConditionalOnMissingBean
    public RmqListenerContainerFactory rmqListenerContainerFactory(Rmq rmq, RmqProperties properties,
            Environment environment, ObjectProvider<SlotCoordinator> coordinator,
            ObjectProvider<RmqErrorHandler> errorHandler) {
        RmqProperties.Consumer consumer = properties.consumer();
        Map<String, RmqProperties.Topic> topics = TopicEntries.read(environment, properties);
        ThreadFactory threads = Threading.VIRTUAL.isActive(environment)
                ? new VirtualThreadTaskExecutor("rmq-").getVirtualThreadFactory()
                : new CustomizableThreadFactory("rmq-");
        RmqListenerContainerFactory factory = new RmqListenerContainerFactory(rmq,
                new ConsumerSettings(consumer.batchSize(), consumer.lease(), consumer.retryPolicy()),
                consumer.concurrency(), threads, consumer.maxIdle(), properties.shutdownTimeout(),
                consumer.commandTimeout(), coordinator.getIfAvailable(rmq::slotCoordinator),
                properties.coordination().ownershipTimeout(), id -> {
                    RmqProperties.Listener listener = properties.listeners().get(id);
                    return listener == null ? null : listener.mode();
                }, topic -> {
                    RmqProperties.Topic definition = topics.get(topic);
                    return definition == null ? null : RateLimit.parse(definition.rateLimit());
                });
        factory.setDefaultErrorHandler(errorHandler.getIfUnique());
        return factory;
    }

    @Bean
    @ConditionalOnMissingBean
    public RmqListenerEndpointRegistry rmqListenerEndpointRegistry() {
        return new RmqListenerEndpointRegistry();
    }

    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static RmqListenerAnnotationBeanPostProcessor rmqListenerAnnotationBeanPostProcessor() {
        return new RmqListenerAnnotationBeanPostProcessor();
    }
}
