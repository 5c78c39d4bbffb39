package io.rmq.readme;

// docs/testing.md's Testcontainers example, imports included, compiled so its API cannot rot; never run (excluded in
// the pom: the build has no Docker). ShopTest is the run example.
// tag::testing-service-connection[]
import com.redis.testcontainers.RedisContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;

@SpringBootTest
@Testcontainers
class ShopContainerTest {

    @Container
    @ServiceConnection
    static RedisContainer redis = new RedisContainer(RedisContainer.DEFAULT_IMAGE_NAME.withTag(RedisContainer.DEFAULT_TAG));
    // RmqTemplate, @RmqListener and the admin operations all use this container
}
// end::testing-service-connection[]
