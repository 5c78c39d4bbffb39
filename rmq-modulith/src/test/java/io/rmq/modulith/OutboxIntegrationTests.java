package io.rmq.modulith;

import java.time.Duration;
import java.time.Instant;

import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.modulith.ShopApp.Database;
import io.rmq.modulith.shop.OrderPlaced;
import io.rmq.modulith.shop.Orders;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The outbox end to end: a {@code @Transactional} service saves a row and publishes {@code @Externalized} events;
 * Modulith's JDBC registry records them in the same transaction and RMQ gets them after the commit. Subclasses pick
 * the database and the Redis topology (top-level classes, since Surefire skips nested ones).
 */
@ExtendWith(RedisServersExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OutboxIntegrationTests {

    private ConfigurableApplicationContext context;
    private Orders orders;
    private Deliveries deliveries;
    private RmqTemplate template;
    private JdbcTemplate jdbc;

    abstract Database database();

    abstract RedisTopology topology();

    @BeforeAll
    void start() {
        context = ShopApp.start(ShopApp.properties(database(), topology()));
        orders = context.getBean(Orders.class);
        deliveries = context.getBean(Deliveries.class);
        template = context.getBean(RmqTemplate.class);
        jdbc = context.getBean(JdbcTemplate.class);
    }

    @AfterAll
    void stop() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void aCommittedEventReachesRmqWithItsTopicIdHeadersAndTimingAndItsPublicationCompletes() {
        Instant before = Instant.now();
        orders.place("o-1", "acme", 1999);
        Instant after = Instant.now();

        await().atMost(Duration.ofSeconds(30)).until(() -> deliveries.count("o-1") == 1);
        RmqMessage<OrderPlaced> message = deliveries.messages.stream().filter(m -> "o-1".equals(m.id())).findFirst()
                .orElseThrow();
        assertThat(message.topic()).isEqualTo("order-placed");
        assertThat(message.payload()).isEqualTo(new OrderPlaced("o-1", "acme", 1999));
        assertThat(message.headers()).containsEntry("customer", "acme");

        // the RANGE_MERGE event waits its 30 minutes, under the order's id
        MessageStatus timeout = template.admin().find(MessageRef.id("payment-timeout", "o-1"));
        assertThat(timeout.isWaiting()).isTrue();
        assertThat(timeout.bodyAsString()).isEqualTo("{\"orderId\":\"o-1\"}");
        // due 30 min after the send, by Redis's clock (same host here; a few seconds of slack for a busy machine)
        assertThat(timeout.waitingScore().longValue()).isBetween(
                before.plus(Duration.ofMinutes(30)).minusSeconds(5).toEpochMilli(),
                after.plus(Duration.ofMinutes(30)).plusSeconds(30).toEpochMilli());

        await().atMost(Duration.ofSeconds(30)).until(() -> incompletePublications("o-1") == 0);
        assertThat(completedPublications("o-1")).as("OrderPlaced and PaymentDue").isEqualTo(2);
        // delivered once, and it stays once
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> deliveries.count("o-1") == 1);
    }

    @Test
    void aRolledBackTransactionLeavesNoPublicationAndNothingInRedis() {
        long publications = allPublications();
        TransactionTemplate transaction = context.getBean(TransactionTemplate.class);
        transaction.executeWithoutResult(status -> {
            orders.place("o-2", "globex", 500);
            status.setRollbackOnly();
        });

        assertThat(jdbc.queryForObject("select count(*) from orders where id = 'o-2'", Long.class)).isZero();
        assertThat(allPublications()).as("publications").isEqualTo(publications);
        // nothing was sent, and nothing is on its way: a rollback runs no after-commit listener
        assertThat(template.admin().find(MessageRef.id("order-placed", "o-2")).exists()).isFalse();
        assertThat(template.admin().find(MessageRef.id("payment-timeout", "o-2")).exists()).isFalse();
    }

    @Test
    void aSecondSendOfAnEventMergesWithTheFirstByItsId() {
        orders.place("o-3", "initech", 700);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> template.admin().find(MessageRef.id("payment-timeout", "o-3")).isWaiting());
        double firstDue = template.admin().find(MessageRef.id("payment-timeout", "o-3")).waitingScore();
        long waiting = template.admin().stats("payment-timeout").waiting();

        // the same events again (a re-send after a crash looks like this to Redis): one message per id
        TransactionTemplate transaction = context.getBean(TransactionTemplate.class);
        transaction.executeWithoutResult(status -> {
            jdbc.update("delete from orders where id = 'o-3'");
            orders.place("o-3", "initech", 700);
        });
        await().atMost(Duration.ofSeconds(30)).until(() -> incompletePublications("o-3") == 0);

        assertThat(completedPublications("o-3")).isEqualTo(4);
        assertThat(template.admin().stats("payment-timeout").waiting()).as("no second message").isEqualTo(waiting);
        assertThat(template.admin().find(MessageRef.id("payment-timeout", "o-3")).waitingScore())
                .as("RANGE_MERGE: a merged send does not move the due time").isEqualTo(firstDue);
    }

    /** The order's publications (its id is in each serialized event) not yet completed. */
    private long incompletePublications(String orderId) {
        return jdbc.queryForObject("select count(*) from event_publication where completion_date is null"
                + " and serialized_event like ?", Long.class, "%\"" + orderId + "\"%");
    }

    private long completedPublications(String orderId) {
        return jdbc.queryForObject("select count(*) from event_publication where completion_date is not null"
                + " and serialized_event like ?", Long.class, "%\"" + orderId + "\"%");
    }

    private long allPublications() {
        return jdbc.queryForObject("select count(*) from event_publication", Long.class);
    }
}
