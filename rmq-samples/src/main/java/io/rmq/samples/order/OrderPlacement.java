package io.rmq.samples.order;

import java.time.Instant;

import io.rmq.producer.SendResult;
import io.rmq.spring.RmqTemplate;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places an order in one transaction of the sample's H2 database: the order row, its close at the payment deadline
 * ({@code order-timeout}) and the item taken from stock, all or nothing. The close is sent inside the transaction, so
 * RMQ holds it until the commit (and writes it before {@link #place} returns); an order refused for want of stock
 * rolls back, and its close, sent before the refusal, never reaches Redis (see {@code docs/transactions.md}).
 * Stateless; any thread.
 */
@Service
public class OrderPlacement {

    /** The topic of the closes: FIXED_TIME, each due at its order's payment deadline. */
    public static final String TOPIC = "order-timeout";

    private final OrderBook orders;
    private final JdbcTemplate jdbc;
    private final RmqTemplate rmq;

    public OrderPlacement(OrderBook orders, JdbcTemplate jdbc, RmqTemplate rmq) {
        this.orders = orders;
        this.jdbc = jdbc;
        this.rmq = rmq;
    }

    /**
     * Inserts the order, sends its close (held: {@link SendResult#held()}) and takes one {@code item} from stock.
     *
     * @return the close's send: held until the commit, written by the time this returns
     * @throws OutOfStockException when none of the item is left: nothing of the order remains, in the database or in
     *                             Redis
     */
    @Transactional
    public SendResult place(String orderId, String item, long amountCents, long deadline) {
        orders.place(orderId, item, amountCents, deadline);
        // held until the transaction commits; dropped if it rolls back
        SendResult close = rmq.sendFixedTime(TOPIC, new CloseOrder(orderId), Instant.ofEpochMilli(deadline));
        if (jdbc.update("update stock set available = available - 1 where item = ? and available > 0", item) == 0) {
            // a RuntimeException: the transaction rolls back, taking the order row and the held close with it
            throw new OutOfStockException(orderId, item);
        }
        return close;
    }

    /** How many of the item are left. */
    public int available(String item) {
        Integer available = jdbc.queryForObject("select available from stock where item = ?", Integer.class, item);
        return available == null ? 0 : available;
    }

    /** An order refused because none of its item is left; its transaction rolls back. */
    public static final class OutOfStockException extends RuntimeException {

        OutOfStockException(String orderId, String item) {
            super("order " + orderId + " refused: '" + item + "' is out of stock");
        }
    }
}
