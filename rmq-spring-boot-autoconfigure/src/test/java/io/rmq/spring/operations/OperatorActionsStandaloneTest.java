package io.rmq.spring.operations;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link OperatorActionsTests} on the standalone test Redis. */
class OperatorActionsStandaloneTest extends OperatorActionsTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.STANDALONE);
    }

    @Override
    RedisTopology topology() {
        return RedisTopology.STANDALONE;
    }
}
