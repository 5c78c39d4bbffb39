package io.rmq.samples;

import io.rmq.test.RedisTopology;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The sample scenario on a 3-master Redis Cluster. */
class ClusterSampleScenarioTest extends SampleScenarioTestSupport {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redisProperties(registry, RedisTopology.CLUSTER);
    }
}
