package io.rmq.spring.transactions;

// The example of docs/transactions.md, imports included, compiled so it cannot rot and run by
// TransactionalSendsIntegrationTests and SendFailureAfterCommitTest: an order, its payment timeout, and the stock it
// takes, all or nothing.
// tag::transactions-service[]
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.spring.RmqTemplate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class OrderPlacement {

    private final JdbcTemplate jdbc;
    private final RmqTemplate rmq;

    public OrderPlacement(JdbcTemplate jdbc, RmqTemplate rmq) {
        this.jdbc = jdbc;
        this.rmq = rmq;
    }

    @Transactional
    public void place(String orderId, String item) {
        // written at once: the attempt is recorded even if the order is not placed
        rmq.immediate().sendPriority("order-attempts", orderId, 0);

        // tag::transactions-tour[]
        jdbc.update("insert into orders (id, item, status) values (?, ?, 'NEW')", orderId, item);
        // held until the transaction commits; dropped if it rolls back
        rmq.sendFixedTime("order-timeout", orderId, Instant.now().plus(Duration.ofMinutes(30)));
        // end::transactions-tour[]

        if (jdbc.update("update stock set available = available - 1 where item = ? and available > 0", item) == 0) {
            // the transaction rolls back: no order row, no timeout message
            throw new IllegalStateException("out of stock: " + item);
        }
    }

    /** The future completes once the message is written after the commit. */
    @Transactional
    public CompletableFuture<SendResult> ship(String orderId) {
        jdbc.update("update orders set status = 'SHIPPED' where id = ?", orderId);
        return rmq.sendAsync(OutgoingMessage.priority("shipping-labels", orderId, 5));
    }
}
// end::transactions-service[]
