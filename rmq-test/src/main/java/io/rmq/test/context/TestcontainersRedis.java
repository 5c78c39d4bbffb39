package io.rmq.test.context;

import com.redis.testcontainers.RedisContainer;
import org.testcontainers.DockerClientFactory;

/**
 * The Testcontainers route. Testcontainers is an optional dependency: this class is only loaded once
 * {@link RmqTestRedis#detectTestcontainers} has found both Testcontainers and its Redis module on the class path.
 */
final class TestcontainersRedis {

    private TestcontainersRedis() {
    }

    /** Whether Testcontainers finds a Docker environment (it logs why not, once per JVM, when it finds none). */
    static boolean dockerAvailable() {
        return DockerClientFactory.instance().isDockerAvailable();
    }

    /** Starts a container of the module's default Redis image; the caller stops it with {@link AutoCloseable#close}. */
    static Started start() {
        RedisContainer container = new RedisContainer(RedisContainer.DEFAULT_IMAGE_NAME.withTag(RedisContainer.DEFAULT_TAG));
        container.start();
        return new Started(container.getRedisHost(), container.getRedisPort(), container.getDockerImageName(),
                container::stop);
    }

    record Started(String host, int port, String image, AutoCloseable stopper) {
    }
}
