package io.rmq.spring.operations;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link OperatorActionsTests} on the cluster test Redis. */
class OperatorActionsClusterTest extends OperatorActionsTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.CLUSTER);
    }

    @Override
    RedisTopology topology() {
        return RedisTopology.CLUSTER;
    }
}
