package io.rmq.samples.order;

import java.util.ArrayList;
import java.util.List;

import io.rmq.consumer.RmqNonRetryableException;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.stereotype.Component;

/**
 * Story 3, FIXED_TIME: every unpaid order has a close scheduled at its payment deadline. When it falls due, orders
 * that were paid in the meantime are left alone; unpaid ones are closed, right at the deadline.
 */
@Component
public class OrderTimeoutHandler {

    private static final Logger log = LoggerFactory.getLogger(OrderTimeoutHandler.class);

    private final OrderBook orders;
    /** The order ids of every close handed to this handler, in the order they came; guarded by this object. */
    private final List<String> handled = new ArrayList<>();

    public OrderTimeoutHandler(OrderBook orders) {
        this.orders = orders;
    }

    /**
     * {@code dueAt}: the time the close message fell due (its FIXED_TIME score), the deadline it was sent for. An order
     * closed here is replied to {@code order-closed} ({@code @SendTo}: sent as the handler returns, due at once), where
     * {@link CustomerNotifier} tells the customer; null (every other outcome) sends nothing.
     */
    @RmqListener(topic = "order-timeout", id = "order-timeout", concurrency = "2")
    @SendTo(CustomerNotifier.TOPIC)
    public OrderClosed onPaymentDeadline(CloseOrder close, @Header(RmqHeaders.SCORE) long dueAt) {
        String id = close.orderId();
        synchronized (this) {
            handled.add(id);
        }
        long now = System.currentTimeMillis();
        OrderBook.Outcome outcome = orders.closeIfUnpaid(id, now);
        switch (outcome) {
            case CLOSED -> {
                log.info("  <- order {} unpaid at its deadline: CLOSED, {} ms after the deadline", id, now - dueAt);
                return new OrderClosed(id, orders.get(id).amountCents(), now);
            }
            case ALREADY_PAID -> log.info("  <- order {} was paid in time: nothing to close, skipped", id);
            case ALREADY_CLOSED -> log.info("  <- order {} is closed already: skipped", id);
            case DEADLINE_MOVED -> log.info("  <- order {}: its deadline moved; the newer close message will handle it",
                    id);
            // not ours (another shop's close on our topic): retrying cannot help, so it goes to the dead queue with
            // this reason, for someone to inspect (the dashboard shows it)
            case UNKNOWN -> throw new RmqNonRetryableException("order " + id + " does not exist in this shop");
        }
        return null;
    }

    /** The order ids of the closes this handler was handed so far (a redelivered close counts again). */
    public synchronized List<String> handled() {
        return List.copyOf(handled);
    }
}
