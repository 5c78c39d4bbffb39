package io.rmq.spring.metrics;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link RmqMetricsIntegrationTests} on the standalone test Redis. */
class RmqMetricsStandaloneTest extends RmqMetricsIntegrationTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.STANDALONE);
    }
}
