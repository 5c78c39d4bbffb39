package io.rmq.readme;

import com.redis.testcontainers.RedisContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;

/**
 * docs/testing.md's Testcontainers example, compiled so its API cannot rot; never run (excluded in the pom: the
 * build has no Docker). {@link ShopTest} is the run example.
 */
// tag::testing-service-connection[]
@SpringBootTest
@Testcontainers
class ShopContainerTest {

    @Container
    @ServiceConnection
    static RedisContainer redis = new RedisContainer(RedisContainer.DEFAULT_IMAGE_NAME.withTag(RedisContainer.DEFAULT_TAG));
    // RmqTemplate, @RmqListener and the admin operations all use this container
}
// end::testing-service-connection[]
