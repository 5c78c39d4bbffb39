package io.rmq.test.context;

import io.rmq.test.LogCapture;

/**
 * Without Docker, Testcontainers logs its failed search for it as errors; {@code @RmqTest} asks once per JVM. The
 * tests ask first, with the lines captured (they still reach target/test.log), so the build output stays readable.
 */
final class QuietTestcontainers {

    private QuietTestcontainers() {
    }

    static RmqTestRedis.Detection detect() {
        try (LogCapture ignored = LogCapture.of("org.testcontainers")) {
            return RmqTestRedis.testcontainers();
        }
    }
}
