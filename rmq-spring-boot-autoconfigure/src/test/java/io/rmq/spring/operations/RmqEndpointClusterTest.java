package io.rmq.spring.operations;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link RmqEndpointIntegrationTests} on the cluster test Redis. */
class RmqEndpointClusterTest extends RmqEndpointIntegrationTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.CLUSTER);
    }
}
