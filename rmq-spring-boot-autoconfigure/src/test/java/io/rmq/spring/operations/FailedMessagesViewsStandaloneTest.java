package io.rmq.spring.operations;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link FailedMessagesViewsTests} on the standalone test Redis. */
class FailedMessagesViewsStandaloneTest extends FailedMessagesViewsTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.STANDALONE);
    }

    @Override
    RedisTopology topology() {
        return RedisTopology.STANDALONE;
    }
}
