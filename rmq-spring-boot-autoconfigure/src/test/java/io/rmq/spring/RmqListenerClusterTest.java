package io.rmq.spring;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link RmqListenerIntegrationTests} on the cluster test Redis. */
class RmqListenerClusterTest extends RmqListenerIntegrationTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.CLUSTER);
    }
}
