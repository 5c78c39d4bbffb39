package io.rmq.autoconfigure;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;

import io.lettuce.core.AbstractRedisClient;
import io.rmq.Rmq;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.RateLimit;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.RmqErrorHandler;
import io.rmq.core.BodyCodec;
import io.rmq.core.TopicDefinition;
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

    /** The engine on its own connection from the application's Lettuce client; defines {@code rmq.topics}. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Rmq rmq(RedisConnectionFactory connectionFactory, RmqProperties properties,
            ObjectProvider<JsonMapper> jsonMapper) {
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
        long maxBody = properties.maxBodySize().toBytes();
        if (maxBody < 1 || maxBody > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("Invalid rmq.max-body-size '" + properties.maxBodySize()
                    + "': must be between 1B and 512MB");
        }
        Rmq rmq = Rmq.create(client, new Rmq.Options(properties.keyPrefix(), (int) maxBody, codec,
                properties.logBodies() ? LOGGED_BODY_CHARS : 0));
        try {
            properties.topics().forEach((name, topic) -> {
                if (topic.type() == null) {
                    throw new IllegalArgumentException("Invalid rmq.topics." + name + ".type 'null': must be one of"
                            + " RANGE_MERGE, PRIORITY, FIXED_TIME");
                }
                rmq.defineTopic(new TopicDefinition(name, topic.type(), topic.slotAmount()));
            });
        }
        catch (RuntimeException ex) {
            rmq.close();
            throw ex;
        }
        return rmq;
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
                    RmqProperties.Topic definition = properties.topics().get(topic);
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
