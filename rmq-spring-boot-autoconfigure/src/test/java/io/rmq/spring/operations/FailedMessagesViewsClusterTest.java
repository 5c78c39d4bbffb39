package io.rmq.spring.operations;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link FailedMessagesViewsTests} on the cluster test Redis. */
class FailedMessagesViewsClusterTest extends FailedMessagesViewsTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.CLUSTER);
    }

    @Override
    RedisTopology topology() {
        return RedisTopology.CLUSTER;
    }
}
