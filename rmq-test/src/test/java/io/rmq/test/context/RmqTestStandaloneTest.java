package io.rmq.test.context;

import java.time.Instant;

import io.rmq.admin.DeadMessage;
import io.rmq.admin.TopicStats;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.LogCapture;
import io.rmq.test.context.ShopApplication.OrderListener;
import io.rmq.test.context.ShopApplication.OrderPlaced;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Boot application with an {@code @RmqListener}, tested as its users would: {@code @SpringBootTest} + {@code @RmqTest}.
 * The application's own configuration names another Redis (as an {@code application.yml} for production would); the
 * test Redis wins.
 */
@SpringBootTest(classes = ShopApplication.class,
        properties = {"spring.data.redis.host=redis.production.invalid", "spring.data.redis.port=6390"})
@RmqTest
class RmqTestStandaloneTest {

    @Autowired
    RmqTemplate template;

    @Autowired
    RmqTestSupport rmqTest;

    @Autowired
    OrderListener listener;

    @Autowired
    Environment environment;

    @BeforeAll
    static void askForDockerQuietly() {
        QuietTestcontainers.detect();
    }

    @Test
    void theContextIsWiredToTheTestRedisOfTheRouteThatWorkedHere() {
        RmqTestRedis.Detection testcontainers = RmqTestRedis.testcontainers();
        RmqTestRedis.Connection connection = RmqTestRedis.connection(RmqTest.Topology.STANDALONE, RmqTest.Source.AUTO);
        // No Docker on the machine this was written on: the Testcontainers route is detected as unusable and the
        // context gets a local redis-server (PATH or the embedded binary) instead.
        if (testcontainers.available()) {
            assertThat(connection.route()).startsWith("testcontainers");
        } else {
            assertThat(connection.route()).isEqualTo("local");
        }
        assertThat(environment.getProperty("spring.data.redis.host"))
                .isEqualTo(connection.springProperties().get("spring.data.redis.host"));
        assertThat(environment.getProperty("spring.data.redis.port"))
                .isEqualTo(connection.springProperties().get("spring.data.redis.port"));
        assertThat(environment.getProperty("spring.data.redis.cluster.nodes")).isNull();
        // the context's own key prefix, not the application's default: contexts stay apart on the shared server
        assertThat(environment.getProperty("rmq.key-prefix")).startsWith("rmq-test-");
    }

    @Test
    void ordersAreShippedAndTheTopicDrains() {
        for (long id = 1; id <= 20; id++) {
            template.sendFixedTime("shop-orders", new OrderPlaced(id, "sku-" + id), Instant.now());
        }

        RmqTestSupport.Handled handled = rmqTest.awaitHandled("shop-orders", new OrderPlaced(7, "sku-7"));
        TopicStats stats = rmqTest.awaitDrained("shop-orders");

        assertThat(handled.listenerId()).isNotBlank();
        assertThat(handled.attempt()).isEqualTo(1);
        assertThat(stats.pending()).isZero();
        assertThat(listener.shipped).contains(new OrderPlaced(1, "sku-1"), new OrderPlaced(20, "sku-20"));
    }

    @Test
    void anOrderOfAnUnknownSkuIsDeadWithItsReason() {
        OrderPlaced poison = new OrderPlaced(666, "unknown");
        try (LogCapture log = LogCapture.rmq().expecting("no such sku")) {
            template.sendFixedTime("shop-orders", poison, Instant.now());

            DeadMessage dead = rmqTest.awaitDead("shop-orders", poison);

            assertThat(dead.lastError()).contains("no such sku in the catalogue: order 666");
            assertThat(rmqTest.deadMessages("shop-orders")).extracting(DeadMessage::bodyAsString)
                    .contains("{\"orderId\":666,\"sku\":\"unknown\"}");
            assertThat(rmqTest.handled("shop-orders")).anySatisfy(h -> {
                assertThat(h.bodyAsString()).contains("666");
                assertThat(h.outcome()).hasToString("DEAD");
            });
            assertThat(log.messages()).isNotEmpty();
        }
        assertThat(listener.shipped).doesNotContain(poison);
    }
}
