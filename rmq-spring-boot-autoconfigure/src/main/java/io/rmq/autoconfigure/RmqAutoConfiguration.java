package io.rmq.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.resource.ClientResources;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.RateLimit;
import io.rmq.core.TopicDefinition;
import io.rmq.consumer.RmqErrorHandler;
import io.rmq.core.BodyCodec;
import io.rmq.internal.RmqInternals;
import io.rmq.observe.CompositeInstrumentation;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.RmqRedisClient;
import io.rmq.spring.RmqSendFailureHandler;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.listener.RmqListenerAnnotationBeanPostProcessor;
import io.rmq.spring.listener.RmqListenerContainerCustomizer;
import io.rmq.spring.listener.RmqListenerContainerFactory;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.operations.RmqOperations;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.jspecify.annotations.Nullable;

/**
 * Auto-configuration of RMQ on the application's Redis ({@code spring.data.redis.*}: standalone, Sentinel or Cluster,
 * SSL and credentials included; or whatever else fills Boot's Redis connection details) and JSON mapper. RMQ talks to
 * Redis through a Lettuce client of its own and leaves the application's client as the application configured it.
 * Every bean backs off when the application defines its own. Active when a {@link RedisConnectionFactory} exists and
 * {@code rmq.enabled} is not false.
 */
@AutoConfiguration(after = {DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class})
@ConditionalOnClass({LettuceConnectionFactory.class, Rmq.class})
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "rmq.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RmqProperties.class)
public class RmqAutoConfiguration {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqAutoConfiguration.class);

    /** How much of a body log lines show with {@code rmq.log-bodies=true}. */
    static final int LOGGED_BODY_CHARS = 200;

    /** Refuses keys under {@code rmq.} that RMQ does not take, before any RMQ bean exists. */
    public RmqAutoConfiguration(Environment environment) {
        UnknownRmqProperties.check(environment);
    }

    /**
     * RMQ's own Lettuce client ({@code rmq.redis.connection=own}, the default), built from the application's Redis
     * connection details ({@code spring.data.redis.*}, SSL bundles, Sentinel, Cluster, service connections) and
     * sharing the application's {@link ClientResources}, with RMQ's timeouts, reconnect, disconnected behaviour and
     * topology refresh ({@code rmq.redis.*}). The application's own client is left exactly as it configured it.
     * Creating it does not connect.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnProperty(name = "rmq.redis.connection", havingValue = "own", matchIfMissing = true)
    public RmqRedisClient rmqRedisClient(ObjectProvider<DataRedisConnectionDetails> connectionDetails,
            ObjectProvider<DataRedisProperties> redisProperties, ObjectProvider<ClientResources> clientResources,
            RmqProperties properties) {
        DataRedisConnectionDetails details = connectionDetails.getIfAvailable();
        if (details == null) {
            throw new IllegalStateException("RMQ builds its own Redis client from Spring Boot's Redis connection"
                    + " details (spring.data.redis.*), but there are none: define a DataRedisConnectionDetails bean, or"
                    + " set rmq.redis.connection=application to use the application's RedisConnectionFactory");
        }
        DataRedisProperties redis = redisProperties.getIfAvailable();
        boolean urlSsl = redis != null && redis.getUrl() != null && redis.getUrl().startsWith("rediss://");
        return RmqRedisClientFactory.create(details, urlSsl, clientResources.getIfUnique(),
                properties.redis().settings());
    }

    /**
     * The engine, on RMQ's own client (or, with {@code rmq.redis.connection=application}, on the application's
     * Lettuce client as the application configured it); defines {@code rmq.topics}. The properties are checked
     * before anything connects. When Redis cannot be reached: with {@code rmq.startup.fail-fast} start-up fails
     * ({@link RedisUnreachableException}); without, the engine connects in the background
     * ({@link Rmq#connectLazily}) and the application starts.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Rmq rmq(ObjectProvider<RmqRedisClient> rmqRedisClient, ObjectProvider<RedisConnectionFactory> connectionFactory,
            ObjectProvider<DataRedisConnectionDetails> connectionDetails, RmqProperties properties,
            ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<RmqInstrumentation> instrumentations,
            Environment environment) {
        List<TopicDefinition> topics = TopicEntries.definitions(environment, properties);
        RmqRedisClient own = rmqRedisClient.getIfAvailable();
        AbstractRedisClient client;
        String address;
        if (own != null) {
            client = own.client();
            address = own.address();
            checkSameRedis(own, connectionFactory.getIfAvailable(), connectionDetails.getIfAvailable());
        }
        else {
            LettuceConnectionFactory lettuce = applicationLettuce(connectionFactory.getIfAvailable());
            client = lettuce.getNativeClient();
            if (client == null) {
                lettuce.start();
                client = lettuce.getRequiredNativeClient();
            }
            address = address(lettuce);
            log.info("RMQ uses the application's Redis client as configured (rmq.redis.connection=application): {}",
                    address);
        }
        BodyCodec codec = new BodyCodec(jsonMapper.getIfAvailable(() -> JsonMapper.builder().findAndAddModules().build()),
                properties.consumer().payloadMapping());
        RmqOptions options = new RmqOptions(properties.keyPrefix(), (int) properties.maxBodySize().toBytes(), codec,
                properties.logBodies() ? LOGGED_BODY_CHARS : 0)
                // every RmqInstrumentation bean (meters, observations, the application's own), in @Order order
                .withInstrumentation(CompositeInstrumentation.of(instrumentations.orderedStream().toList()))
                .withPropagateContext(properties.observation().enabled()
                        && properties.observation().propagateContext())
                .withLimits(properties.messageLimits())
                .withHistoryFlushInterval(properties.history().engineInterval());
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
                throw new RedisUnreachableException(address, RedisGateway.describe(ex), ex);
            }
            // the engine logs the outage itself, once
            rmq = Rmq.connectLazily(client, options);
        }
        try {
            topics.forEach(rmq::defineTopic);
            if (properties.instances().enabled()) {
                // before any listener is made: their consumers report busy handlers to the registry
                rmq.instances().start(new io.rmq.instances.InstanceSettings(
                        environment.getProperty("spring.application.name"), properties.instances().heartbeat()));
            }
        }
        catch (RuntimeException ex) {
            rmq.close();
            throw ex;
        }
        return rmq;
    }

    private static LettuceConnectionFactory applicationLettuce(@Nullable RedisConnectionFactory connectionFactory) {
        if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
            throw new IllegalStateException("rmq.redis.connection=application needs Lettuce as the application's Redis"
                    + " client (spring.data.redis.client-type=lettuce), but the RedisConnectionFactory is "
                    + (connectionFactory == null ? "missing" : "a " + connectionFactory.getClass().getName())
                    + "; rmq.redis.connection=own (the default) works with any");
        }
        return lettuce;
    }

    /**
     * RMQ's own client follows the connection details; an application that built its Lettuce connection factory by
     * hand may point it elsewhere. Said once, at start-up, rather than found out from messages in another Redis.
     */
    private static void checkSameRedis(RmqRedisClient own, @Nullable RedisConnectionFactory factory,
            @Nullable DataRedisConnectionDetails details) {
        if (factory instanceof LettuceConnectionFactory lettuce && details != null) {
            String application = address(lettuce);
            String rmq = RmqRedisClientFactory.address(details);
            if (!application.equals(rmq)) {
                log.warn("RMQ connects to Redis at {} (its own client, from the Redis connection details), but the"
                        + " application's connection factory points at {}. Define a DataRedisConnectionDetails bean"
                        + " for the Redis you mean, or set rmq.redis.connection=application", rmq, application);
                return;
            }
        }
        log.debug("RMQ connects to Redis at {} with a client of its own", own.address());
    }

    /**
     * Redis cannot serve RMQ yet: no connection at all (a cluster client wraps it in "Cannot retrieve initial cluster
     * partitions"), no reply in time, or a server that answers but is not ready — loading its data after a restart
     * (LOADING), a cluster still forming or without a master for some slots (CLUSTERDOWN, MASTERDOWN, TRYAGAIN). A
     * restart of Redis and of its applications at once meets all of these; each passes, so start-up treats them as
     * an outage (lazy start, or fail-fast), not as a configuration error.
     */
    static boolean unreachable(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RedisConnectionException || t instanceof io.lettuce.core.RedisLoadingException
                    || t instanceof io.lettuce.core.RedisCommandTimeoutException) {
                return true;
            }
            String message = String.valueOf(t.getMessage());
            if (t instanceof io.lettuce.core.RedisException && (message.startsWith("LOADING")
                    || message.startsWith("CLUSTERDOWN") || message.startsWith("MASTERDOWN")
                    || message.startsWith("TRYAGAIN"))) {
                return true;
            }
        }
        return false;
    }

    /** Where the connection factory looks for Redis, for messages (same form as {@link RmqRedisClientFactory#address}). */
    static String address(LettuceConnectionFactory lettuce) {
        if (lettuce.getSentinelConfiguration() != null) {
            return "master '" + lettuce.getSentinelConfiguration().getMaster().getName() + "'";
        }
        if (lettuce.getClusterConfiguration() != null) {
            return "cluster " + lettuce.getClusterConfiguration().getClusterNodes().stream()
                    .map(n -> n.getHost() + ":" + n.getPort()).sorted().toList();
        }
        return lettuce.getHostName() + ":" + lettuce.getPort();
    }

    /**
     * Sends follow Spring transactions ({@code rmq.template.transaction-mode}, after-commit by default); a send that
     * fails after its transaction committed goes to the {@link RmqSendFailureHandler}. Messages to a topic with
     * {@code rmq.topics.<name>.expire-after} expire that long after they are stored, unless they set an expiry; those
     * to a topic with {@code rmq.topics.<name>.dedupe-for} have that deduplication window, unless they set one.
     */
    @Bean
    @ConditionalOnMissingBean
    public RmqTemplate rmqTemplate(Rmq rmq, RmqProperties properties,
            ObjectProvider<RmqSendFailureHandler> failureHandler, Environment environment) {
        // rmq.topics.<name>.expire-after: the template's default expiry per topic
        Map<String, java.time.Duration> expireAfter = new java.util.HashMap<>();
        // rmq.topics.<name>.dedupe-for: the template's default deduplication window per topic
        Map<String, java.time.Duration> dedupeFor = new java.util.HashMap<>();
        TopicEntries.read(environment, properties).forEach((name, topic) -> {
            if (topic.expireAfter() != null) {
                expireAfter.put(name, topic.expireAfter());
            }
            if (topic.dedupeFor() != null) {
                dedupeFor.put(name, topic.dedupeFor());
            }
        });
        return new RmqTemplate(rmq, properties.producer().typeHeader(), properties.template().transactionMode(),
                failureHandler.getIfUnique(RmqSendFailureHandler::logging), Map.copyOf(expireAfter),
                Map.copyOf(dedupeFor));
    }

    /** Logs each message held until its transaction committed whose write then failed (topic and id, no contents). */
    @Bean
    @ConditionalOnMissingBean
    public RmqSendFailureHandler rmqSendFailureHandler() {
        return RmqSendFailureHandler.logging();
    }

    /**
     * Containers use virtual threads when {@code spring.threads.virtual.enabled=true} on Java 21+. Backs off only for a
     * bean of this name (as Boot's {@code kafkaListenerContainerFactory}): other factory beans are for listeners that
     * name them in {@code @RmqListener(containerFactory)}.
     */
    @Bean
    @ConditionalOnMissingBean(name = RmqListenerAnnotationBeanPostProcessor.DEFAULT_CONTAINER_FACTORY)
    public RmqListenerContainerFactory rmqListenerContainerFactory(Rmq rmq, RmqProperties properties,
            Environment environment, ObjectProvider<SlotCoordinator> coordinator,
            ObjectProvider<RmqErrorHandler> errorHandler, ObjectProvider<RmqListenerContainerCustomizer> customizers) {
        RmqProperties.Consumer consumer = properties.consumer();
        Map<String, RmqProperties.Topic> topics = TopicEntries.read(environment, properties);
        ThreadFactory threads = Threading.VIRTUAL.isActive(environment)
                ? new VirtualThreadTaskExecutor("rmq-").getVirtualThreadFactory()
                : new CustomizableThreadFactory("rmq-");
        RmqListenerContainerFactory factory = new RmqListenerContainerFactory(rmq,
                consumer.settings(),
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
        factory.setContainerCustomizers(customizers.orderedStream().toList());
        factory.setDeadLettersByTopic(topic -> {
            RmqProperties.Topic definition = topics.get(topic);
            return definition == null ? null : definition.deadLetters(consumer.deadLetters());
        });
        return factory;
    }

    @Bean
    @ConditionalOnMissingBean
    public RmqListenerEndpointRegistry rmqListenerEndpointRegistry(ObjectProvider<Rmq> rmq,
            ObjectProvider<RmqRedisClient> rmqRedisClient) {
        RmqListenerEndpointRegistry registry = new RmqListenerEndpointRegistry();
        registry.setEngineDescription(() -> describeEngine(rmq.getIfAvailable(), rmqRedisClient.getIfAvailable()));
        return registry;
    }

    /** For the INFO line at start: Redis mode and address(es), key prefix, topics. Reaches nothing remote. */
    static String describeEngine(@Nullable Rmq rmq, @Nullable RmqRedisClient own) {
        if (rmq == null) {
            return "no engine";
        }
        String redis;
        if (own != null) {
            // address(): "cluster [seeds]", "master 'm' of sentinels [...]" or host:port
            String mode = own.isCluster() ? "" : own.address().startsWith("master '") ? "sentinel " : "standalone ";
            redis = "Redis " + mode + own.address() + " (RMQ's own client)";
        }
        else {
            redis = "Redis " + (RmqInternals.redis(rmq).gateway().isCluster() ? "cluster" : "standalone")
                    + " (the application's client)";
        }
        StringBuilder topics = new StringBuilder();
        new java.util.TreeMap<>(rmq.topics().all()).values().forEach(t -> topics.append(topics.isEmpty() ? "" : ", ")
                .append(t.name()).append(" (").append(t.type()).append(", ").append(t.slotAmount())
                .append(t.slotAmount() == 1 ? " slot" : " slots").append(t.mode() == null ? "" : ", " + t.mode())
                .append(')'));
        return redis + ", key prefix '" + rmq.options().keyPrefix() + "', " + rmq.topics().all().size()
                + " topic(s) [" + topics + "]";
    }

    /** What the {@code rmq} Actuator endpoint and the dashboard show and do (no threads, no connection of its own). */
    @Bean
    @ConditionalOnMissingBean
    public RmqOperations rmqOperations(Rmq rmq, RmqListenerEndpointRegistry registry, RmqProperties properties) {
        RmqOperations operations = new RmqOperations(rmq, registry);
        operations.setShowBodies(properties.dashboard().showBodies());
        return operations;
    }

    @Bean
    @ConditionalOnMissingBean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static RmqListenerAnnotationBeanPostProcessor rmqListenerAnnotationBeanPostProcessor() {
        return new RmqListenerAnnotationBeanPostProcessor();
    }
}
