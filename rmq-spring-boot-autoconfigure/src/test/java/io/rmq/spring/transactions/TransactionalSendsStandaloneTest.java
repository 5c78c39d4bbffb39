package io.rmq.spring.transactions;

import io.rmq.test.RedisTopology;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link TransactionalSendsIntegrationTests} on the standalone test Redis. */
class TransactionalSendsStandaloneTest extends TransactionalSendsIntegrationTests {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, RedisTopology.STANDALONE);
    }
}
