package io.rmq.samples;

import io.rmq.test.RedisTopology;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The sample scenario on a standalone Redis. */
class StandaloneSampleScenarioTest extends SampleScenarioTestSupport {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redisProperties(registry, RedisTopology.STANDALONE);
    }
}
