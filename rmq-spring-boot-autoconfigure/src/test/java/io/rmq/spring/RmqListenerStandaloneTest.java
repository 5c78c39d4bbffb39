package io.rmq.spring;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link RmqListenerIntegrationTests} on the standalone test Redis. */
class RmqListenerStandaloneTest extends RmqListenerIntegrationTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.STANDALONE);
    }
}
