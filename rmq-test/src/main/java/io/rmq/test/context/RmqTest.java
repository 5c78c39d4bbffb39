package io.rmq.test.context;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a Spring test a real Redis for RMQ, as spring-kafka-test's {@code @EmbeddedKafka} gives one a broker: put it
 * beside {@code @SpringBootTest} and the test's application context gets {@code spring.data.redis.*} pointing at a
 * server (or a 3-master cluster) that this JVM started, plus an {@link RmqTestSupport} bean to await that a topic is
 * drained or a body handled and to read dead messages.
 * <p>
 * Where the Redis comes from, the first that works ({@link RmqTestRedis} logs the route it took):
 * <ol>
 *   <li>{@code RMQ_TEST_REDIS_URL} / {@code RMQ_TEST_REDIS_CLUSTER_NODES} in the environment: an existing server,
 *       used as it is;</li>
 *   <li>standalone only: Testcontainers' Redis module ({@code com.redis:testcontainers-redis}) when it is on the test
 *       class path and Docker is available;</li>
 *   <li>a {@code redis-server} on the PATH, started on a free loopback port;</li>
 *   <li>the {@code redis-server} binary bundled in the embedded-redis jar (a dependency of rmq-test).</li>
 * </ol>
 * The servers are shared by every {@code @RmqTest} class of the JVM (one standalone server, one cluster) and are
 * not flushed between tests. Each application context gets a key prefix of its own ({@code rmq.key-prefix}, see
 * {@link #keyPrefix()}), so two test contexts never see each other's topics, messages or listeners' slots; test
 * methods sharing one context share its topics: use bodies of the test's own, or {@link RmqTestSupport#purge}. At
 * the end of the JUnit run the contexts that use them are closed first, then the servers stopped.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RmqTestExtension.class)
public @interface RmqTest {

    /** One server, or a Redis Cluster of three masters ({@code spring.data.redis.cluster.nodes}). */
    Topology topology() default Topology.STANDALONE;

    /** Where the server may come from; {@link Source#AUTO} tries each route in the order above. */
    Source source() default Source.AUTO;

    /**
     * {@code rmq.key-prefix} of the test's context. Empty (the default): {@code rmq-test-} and a random part, new for
     * every application context, so contexts (of this or another test class, or left in Spring's context cache) stay
     * apart on the shared server; it overrides the prefix of the application's own configuration. A fixed value
     * shares the keys with every context that uses it.
     */
    String keyPrefix() default "";

    /** The Redis deployments {@link #topology()} chooses from. */
    enum Topology {
        STANDALONE,
        CLUSTER
    }

    /** Which routes to a server {@code @RmqTest} may take. */
    enum Source {
        /** The environment, then Testcontainers when Docker is available (standalone), then local processes. */
        AUTO,
        /** Testcontainers only: fails the context with the reason when Testcontainers or Docker is missing. */
        TESTCONTAINERS,
        /** Never Testcontainers: the environment, then {@code redis-server} from the PATH, then the bundled binary. */
        LOCAL
    }
}
