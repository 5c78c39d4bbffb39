package io.rmq.modulith;

import java.time.Duration;
import java.util.Map;

import io.rmq.Rmq;
import io.rmq.admin.MessageRef;
import io.rmq.modulith.ShopApp.Database;
import io.rmq.modulith.shop.Orders;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.LateRedisServer;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.modulith.events.IncompleteEventPublications;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis is down when the business transaction commits: the row and the publications are committed, the sends fail,
 * the publications stay incomplete in the registry; once Redis is up, Modulith's resubmission sends them, and the
 * message is delivered once. Subclasses pick the database.
 */
abstract class RedisDownAtCommitTests {

    abstract Database database();

    @Test
    void aSendThatFailsAtCommitLeavesThePublicationIncompleteAndItsResubmissionDeliversOnce() throws Exception {
        int port = LateRedisServer.freePort();
        Map<String, String> properties = ShopApp.properties(database(),
                Map.of("spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", Integer.toString(port)));
        // the outage is on purpose: RMQ's lines about it and Modulith's about the failed listener are asserted on
        try (LogCapture log = LogCapture.of("io.rmq", "org.springframework.modulith").expecting("not reachable",
                "is down", "Connection refused", "stays incomplete", "Leaving event publication uncompleted",
                "Unexpected error occurred in asynchronous listener", "connect");
                ConfigurableApplicationContext context = ShopApp.start(properties)) {
            Orders orders = context.getBean(Orders.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            Deliveries deliveries = context.getBean(Deliveries.class);

            orders.place("o-down", "acme", 4200);

            assertThat(jdbc.queryForObject("select count(*) from orders where id = 'o-down'", Long.class)).isOne();
            // both sends were tried and failed: Modulith marked the publications failed, not completed
            await().atMost(Duration.ofSeconds(30)).until(() -> failed(jdbc) == 2);
            assertThat(incomplete(jdbc)).isEqualTo(2);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(log.warnings()).anySatisfy(line ->
                    assertThat(line).contains("not sent to topic 'order-placed' (id o-down), its publication stays"
                            + " incomplete")));

            try (LateRedisServer redis = LateRedisServer.startOn(port)) {
                Rmq rmq = context.getBean(Rmq.class);
                await().atMost(Duration.ofSeconds(30)).until(rmq::isConnected);
                context.getBean(IncompleteEventPublications.class).resubmitIncompletePublications(publication -> true);

                await().atMost(Duration.ofSeconds(30)).until(() -> deliveries.count("o-down") == 1);
                await().atMost(Duration.ofSeconds(30)).until(() -> incomplete(jdbc) == 0);
                assertThat(context.getBean(RmqTemplate.class).admin()
                        .find(MessageRef.id("payment-timeout", "o-down")).isWaiting())
                        .isTrue();
                await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10))
                        .until(() -> deliveries.count("o-down") == 1);
                // close the application while its Redis is still up
                context.close();
            }
        }
    }

    private static long incomplete(JdbcTemplate jdbc) {
        return jdbc.queryForObject("select count(*) from event_publication where completion_date is null", Long.class);
    }

    private static long failed(JdbcTemplate jdbc) {
        return jdbc.queryForObject("select count(*) from event_publication where status = 'FAILED'", Long.class);
    }
}
