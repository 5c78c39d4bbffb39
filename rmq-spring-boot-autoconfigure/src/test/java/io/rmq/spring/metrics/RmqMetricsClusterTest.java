package io.rmq.spring.metrics;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link RmqMetricsIntegrationTests} on the cluster test Redis. */
class RmqMetricsClusterTest extends RmqMetricsIntegrationTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.CLUSTER);
    }
}
