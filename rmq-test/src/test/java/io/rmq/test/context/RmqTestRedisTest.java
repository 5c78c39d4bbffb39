package io.rmq.test.context;

import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How {@code @RmqTest} chooses its Redis. There is no Docker where this was written, so the Testcontainers route is
 * proved here for its detection (missing classes, missing Docker) and its fallback, not for starting a container.
 */
class RmqTestRedisTest {

    @Test
    void withoutTestcontainersOnTheClassPathTheRouteIsNotTaken() {
        ClassLoader bootOnly = new ClassLoader(null) {
        };

        RmqTestRedis.Detection detection = RmqTestRedis.detect(bootOnly);

        assertThat(detection.available()).isFalse();
        assertThat(detection.reason()).isEqualTo("Testcontainers (org.testcontainers:testcontainers) is not on the class path");
    }

    @Test
    void withTestcontainersButWithoutItsRedisModuleTheRouteIsNotTaken() {
        ClassLoader withoutRedisModule = new ClassLoader(RmqTestRedisTest.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith("com.redis.testcontainers.")) {
                    throw new ClassNotFoundException(name);
                }
                return super.loadClass(name, resolve);
            }
        };

        RmqTestRedis.Detection detection = RmqTestRedis.detect(withoutRedisModule);

        assertThat(detection.available()).isFalse();
        assertThat(detection.reason()).contains("com.redis:testcontainers-redis");
    }

    @Test
    void withTestcontainersAndNoDockerTheRouteIsNotTakenAndLocalServersAreUsed() {
        RmqTestRedis.Detection detection = QuietTestcontainers.detect();
        if (detection.available()) {
            return; // a machine with Docker: the container route is the one taken (not the case where this was written)
        }
        assertThat(detection.reason()).isEqualTo("Testcontainers found no Docker environment");

        assertThat(RmqTestRedis.connection(RmqTest.Topology.STANDALONE, RmqTest.Source.AUTO).route()).isEqualTo("local");
        assertThatThrownBy(() -> RmqTestRedis.connection(RmqTest.Topology.STANDALONE, RmqTest.Source.TESTCONTAINERS))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("@RmqTest(source = TESTCONTAINERS): Testcontainers found no Docker environment");
    }

    @Test
    void aClusterIsAlwaysFormedFromLocalServers() {
        assertThatThrownBy(() -> RmqTestRedis.connection(RmqTest.Topology.CLUSTER, RmqTest.Source.TESTCONTAINERS))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("use source = AUTO or LOCAL");
    }

    @Test
    void theTestcontainersSearchForDockerStaysOutOfTheBuildOutput() {
        try (LogCapture log = LogCapture.of("org.testcontainers")) {
            RmqTestRedis.testcontainers();
            assertThat(log.messages()).as("asked once per JVM, before this test").isEmpty();
        }
    }
}
