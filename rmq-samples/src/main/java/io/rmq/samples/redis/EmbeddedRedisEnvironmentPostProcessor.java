package io.rmq.samples.redis;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.util.StringUtils;

/**
 * Gives the sample a Redis when none is configured: if none of {@code spring.data.redis.url}, {@code .host},
 * {@code .port}, {@code .cluster.nodes}, {@code .sentinel.nodes} (or {@code .masterreplica.nodes}) is set, an embedded
 * Redis (the {@code redis-server} bundled in {@code com.github.codemonstur:embedded-redis}) is started on a free
 * loopback port and {@code spring.data.redis.host}/{@code port} point at it. It stops when the application context
 * closes, after the RMQ listeners have stopped and handed back their messages and slots and the Redis connections are
 * closed; when the JVM exits without closing the context, Boot's shutdown handlers stop it, which also run only after
 * every context Boot's shutdown hook closes has closed. Nothing else stops it (see {@link EmbeddedRedisProcess}).
 * <p>
 * The decision is made lazily: this post-processor adds a property source of lowest precedence that decides — and
 * starts the server — the first time the Redis host or port is looked up, which is when the Redis auto-configuration
 * binds its properties. Deciding in the post-processor itself would be too early: property sources added later, such
 * as a test's {@code @DynamicPropertySource} or an {@code ApplicationContextInitializer}'s, are not there yet.
 * <p>
 * Registered in {@code META-INF/spring.factories}. Sample code only: the starter never starts servers.
 */
public class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

    /** Name of the property source (and of the disposable that stops the server). */
    public static final String PROPERTY_SOURCE_NAME = "rmqSamplesEmbeddedRedis";

    /** Any of these (relaxed names included, e.g. {@code SPRING_DATA_REDIS_HOST}) means "a Redis is configured". */
    public static final List<String> CONNECTION_PROPERTIES = List.of("spring.data.redis.url", "spring.data.redis.host",
            "spring.data.redis.port", "spring.data.redis.cluster.nodes", "spring.data.redis.sentinel.nodes",
            "spring.data.redis.masterreplica.nodes");

    static final String HOST_PROPERTY = "spring.data.redis.host";
    static final String PORT_PROPERTY = "spring.data.redis.port";
    static final String LOOPBACK = "127.0.0.1";

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE; // after the config data (application.yml) has been loaded
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (environment.getPropertySources().contains(PROPERTY_SOURCE_NAME)) {
            return;
        }
        EmbeddedRedisPropertySource source = new EmbeddedRedisPropertySource(environment);
        environment.getPropertySources().addLast(source);
        application.addInitializers(new Attach(source));
    }

    /**
     * The port of the embedded Redis started for this environment's application, if one was started (and not yet
     * stopped).
     */
    public static OptionalInt embeddedRedisPort(Environment environment) {
        if (environment instanceof ConfigurableEnvironment configurable
                && configurable.getPropertySources().get(PROPERTY_SOURCE_NAME) instanceof EmbeddedRedisPropertySource source) {
            return source.runningPort();
        }
        return OptionalInt.empty();
    }

    /**
     * Points the property source at the context's environment (the one late property sources are added to) and has
     * the server stopped with the context: as a disposable registered before any bean, it is destroyed after all of
     * them, i.e. after the listeners have stopped (a lifecycle phase of the close, before any bean is destroyed)
     * and the Redis connections are closed.
     */
    private record Attach(EmbeddedRedisPropertySource source)
            implements ApplicationContextInitializer<ConfigurableApplicationContext> {

        @Override
        public void initialize(ConfigurableApplicationContext context) {
            source.attach(context.getEnvironment());
            // host and port both set elsewhere: the source is never asked, so say which Redis is used once refreshed
            context.addApplicationListener(event -> {
                if (event instanceof ContextRefreshedEvent) {
                    source.reportIfUndecided();
                }
            });
            // not on ContextClosedEvent: it is published before the lifecycle beans (the listeners) stop. A bean
            // factory of another kind (none of Boot's) leaves the stop to the shutdown handler.
            ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
            if (beanFactory instanceof DefaultSingletonBeanRegistry registry) {
                registry.registerDisposableBean(PROPERTY_SOURCE_NAME, source::stop);
            }
        }
    }

    /** Answers {@code spring.data.redis.host}/{@code port} with the embedded server's, when no Redis is configured. */
    static final class EmbeddedRedisPropertySource extends PropertySource<Object> {

        private static final Logger log = LoggerFactory.getLogger(EmbeddedRedisEnvironmentPostProcessor.class);
        private static final int START_ATTEMPTS = 3;

        private volatile ConfigurableEnvironment environment;
        private boolean decided;              // guarded by this
        private EmbeddedRedisProcess server;  // guarded by this
        private int port;                     // guarded by this

        EmbeddedRedisPropertySource(ConfigurableEnvironment environment) {
            super(PROPERTY_SOURCE_NAME);
            this.environment = environment;
        }

        void attach(ConfigurableEnvironment environment) {
            this.environment = environment;
        }

        @Override
        public Object getProperty(String name) {
            if (!HOST_PROPERTY.equals(name) && !PORT_PROPERTY.equals(name)) {
                return null;
            }
            synchronized (this) {
                decide();
                if (server == null) {
                    return null;
                }
                return HOST_PROPERTY.equals(name) ? LOOPBACK : Integer.toString(port);
            }
        }

        /** After the refresh: if nothing asked for the host or port, report the configured Redis (if any). */
        synchronized void reportIfUndecided() {
            if (decided) {
                return;
            }
            Map<String, String> configured = configuredConnectionProperties();
            if (!configured.isEmpty()) {
                decided = true;
                log.info("Redis: using the configured server ({})", describe(configured));
            }
        }

        synchronized OptionalInt runningPort() {
            return server != null && server.isAlive() ? OptionalInt.of(port) : OptionalInt.empty();
        }

        private void decide() {
            if (decided) {
                return;
            }
            decided = true;
            Map<String, String> configured = configuredConnectionProperties();
            if (!configured.isEmpty()) {
                log.info("Redis: using the configured server ({})", describe(configured));
                return;
            }
            server = start();
            SpringApplication.getShutdownHandlers().add(this::stop);
            log.info("Redis: no spring.data.redis.* connection configured; started an embedded Redis on {}:{}"
                    + " (it stops with the application)", LOOPBACK, port);
        }

        /** The connection properties set in every other property source, placeholders resolved. */
        private Map<String, String> configuredConnectionProperties() {
            List<PropertySource<?>> others = new ArrayList<>();
            for (PropertySource<?> candidate : environment.getPropertySources()) {
                if (candidate != this && !ConfigurationPropertySources.isAttachedConfigurationPropertySource(candidate)) {
                    others.add(candidate);
                }
            }
            Binder binder = new Binder(ConfigurationPropertySources.from(others),
                    new PropertySourcesPlaceholdersResolver(others));
            Map<String, String> configured = new LinkedHashMap<>();
            for (String property : CONNECTION_PROPERTIES) {
                List<String> values = binder.bind(property, Bindable.listOf(String.class))
                        .map(list -> list.stream().filter(StringUtils::hasText).toList())
                        .orElse(List.of());
                if (!values.isEmpty()) {
                    configured.put(property, String.join(",", values));
                }
            }
            return configured;
        }

        private static String describe(Map<String, String> configured) {
            List<String> parts = new ArrayList<>();
            configured.forEach((property, value) -> parts.add(property + "="
                    + (property.endsWith(".url") ? value.replaceAll("//[^/@]*@", "//***@") : value)));
            return String.join(", ", parts);
        }

        private EmbeddedRedisProcess start() {
            List<String> problems = new ArrayList<>();
            for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
                int candidate;
                EmbeddedRedisProcess started;
                try {
                    candidate = freeLoopbackPort();
                    started = EmbeddedRedisProcess.start(LOOPBACK, candidate);
                }
                catch (IOException | RuntimeException ex) {
                    problems.add(ex.getMessage()); // e.g. the port was taken between probing and binding: try another
                    continue;
                }
                port = candidate;
                return started;
            }
            throw new IllegalStateException("No Redis is configured (none of " + CONNECTION_PROPERTIES + " is set) and"
                    + " the embedded Redis did not start: " + problems + ". Point the sample at a Redis, e.g."
                    + " --spring.data.redis.host=localhost --spring.data.redis.port=6379");
        }

        private static int freeLoopbackPort() throws IOException {
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress(LOOPBACK, 0));
                return socket.getLocalPort();
            }
        }

        /** Idempotent: the context's close and Boot's shutdown handler may both call it. */
        synchronized void stop() {
            if (server == null) {
                return;
            }
            try {
                server.stop();
                log.info("Redis: stopped the embedded Redis on {}:{}", LOOPBACK, port);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                log.warn("Interrupted while stopping the embedded Redis on {}:{}", LOOPBACK, port);
            }
            finally {
                // the shutdown handler stays registered (Boot refuses removals while it shuts down): it finds nothing
                server = null;
            }
        }
    }
}
