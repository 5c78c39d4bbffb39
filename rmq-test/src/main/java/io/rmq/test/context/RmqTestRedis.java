package io.rmq.test.context;

import java.util.LinkedHashMap;
import java.util.Map;

import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import io.rmq.test.context.RmqTest.Source;
import io.rmq.test.context.RmqTest.Topology;
import org.jspecify.annotations.Nullable;

/**
 * The Redis an {@link RmqTest} context is wired to: one per topology and JVM, started on first use.
 * <p>
 * The local routes (the environment, {@code redis-server} on the PATH, the embedded-redis binary, and forming the
 * 3-master cluster) are rmq-core's test harness, {@link TestRedisServers}, used as it is; this class adds the
 * Testcontainers route in front of it for a standalone server. Testcontainers is optional: its classes are looked for
 * by name, and Docker is asked for only once they are there; the answer is kept for the JVM.
 */
public final class RmqTestRedis {

    static final String ENV_STANDALONE_URL = "RMQ_TEST_REDIS_URL";
    static final String ENV_CLUSTER_NODES = "RMQ_TEST_REDIS_CLUSTER_NODES";
    static final String DOCKER_FACTORY = "org.testcontainers.DockerClientFactory";
    static final String REDIS_CONTAINER = "com.redis.testcontainers.RedisContainer";

    private static final String LOG_PREFIX = "[rmq-test-redis] ";
    private static final Object LOCK = new Object();

    private static @Nullable Detection detection;             // LOCK
    private static TestcontainersRedis.@Nullable Started container;      // LOCK

    private RmqTestRedis() {
    }

    /**
     * Where a context's Redis came from and the properties that point at it.
     *
     * @param route            {@code testcontainers (<image>)}, or {@code local} (the environment, PATH or bundled binary:
     *                         the harness logs which)
     * @param springProperties {@code spring.data.redis.host}/{@code port} (and credentials from the environment), or
     *                         {@code spring.data.redis.cluster.nodes}
     */
    public record Connection(Topology topology, String route, Map<String, String> springProperties) {
    }

    /** Whether the Testcontainers route can be taken here, and why not. */
    public record Detection(boolean available, String reason) {
    }

    /** The Redis for {@code topology} from the routes {@code source} allows, started if need be. */
    public static Connection connection(Topology topology, Source source) {
        if (topology == Topology.CLUSTER) {
            if (source == Source.TESTCONTAINERS) {
                throw new IllegalStateException("@RmqTest(topology = CLUSTER, source = TESTCONTAINERS): the cluster is "
                        + "always formed from local redis-server processes (a containerised cluster announces addresses "
                        + "the test cannot reach); use source = AUTO or LOCAL");
            }
            return local(RedisTopology.CLUSTER, topology);
        }
        if (source == Source.LOCAL || (source == Source.AUTO && env(ENV_STANDALONE_URL) != null)) {
            return local(RedisTopology.STANDALONE, topology);
        }
        Detection testcontainers = testcontainers();
        if (testcontainers.available()) {
            return containerConnection(topology);
        }
        if (source == Source.TESTCONTAINERS) {
            throw new IllegalStateException("@RmqTest(source = TESTCONTAINERS): " + testcontainers.reason());
        }
        return local(RedisTopology.STANDALONE, topology);
    }

    /** The Testcontainers route on this JVM's class path, decided once. */
    public static Detection testcontainers() {
        synchronized (LOCK) {
            if (detection == null) {
                detection = detect(RmqTestRedis.class.getClassLoader());
                log("testcontainers: " + (detection.available() ? "available, Docker found"
                        : "not used: " + detection.reason() + "; falling back to local redis-server processes"));
            }
            return detection;
        }
    }

    /** Looks for Testcontainers and its Redis module through {@code loader}; then, if both are there, for Docker. */
    static Detection detect(ClassLoader loader) {
        if (!present(DOCKER_FACTORY, loader)) {
            return new Detection(false, "Testcontainers (org.testcontainers:testcontainers) is not on the class path");
        }
        if (!present(REDIS_CONTAINER, loader)) {
            return new Detection(false, "Testcontainers' Redis module (com.redis:testcontainers-redis) is not on the "
                    + "class path");
        }
        try {
            return TestcontainersRedis.dockerAvailable() ? new Detection(true, "Docker found")
                    : new Detection(false, "Testcontainers found no Docker environment");
        } catch (RuntimeException | LinkageError e) {
            return new Detection(false, "Testcontainers could not look for Docker: " + e);
        }
    }

    /**
     * Stops what this JVM started for {@code @RmqTest}: the container, then the local servers (external servers named
     * by the environment are left alone).
     */
    static void stopAll() {
        synchronized (LOCK) {
            if (container != null) {
                try {
                    container.stopper().close();
                } catch (Exception e) {
                    log("testcontainers: stopping " + container.image() + " failed: " + e);
                }
                container = null;
            }
        }
        TestRedisServers.stopAll();
    }

    private static Connection containerConnection(Topology topology) {
        synchronized (LOCK) {
            if (container == null) {
                long started = System.nanoTime();
                container = TestcontainersRedis.start();
                log("standalone: testcontainers " + container.image() + " on " + container.host() + ":"
                        + container.port() + ", ready in " + (System.nanoTime() - started) / 1_000_000 + " ms");
            }
            Map<String, String> props = new LinkedHashMap<>();
            props.put("spring.data.redis.host", container.host());
            props.put("spring.data.redis.port", Integer.toString(container.port()));
            return new Connection(topology, "testcontainers (" + container.image() + ")", Map.copyOf(props));
        }
    }

    private static Connection local(RedisTopology harness, Topology topology) {
        return new Connection(topology, "local", harness.springProperties());
    }

    private static boolean present(String className, ClassLoader loader) {
        try {
            Class.forName(className, false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value;
    }

    private static void log(String line) {
        System.err.println(LOG_PREFIX + line);
    }
}
