package io.rmq.samples.order;

import java.util.ArrayList;
import java.util.List;

import io.rmq.samples.render.PriceBoard;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.stereotype.Component;

/**
 * Tells customers their unpaid order was closed. A batch listener: the mail provider takes one request for many mails,
 * so the method gets what one pop took from a slot of {@code order-closed} (up to {@code batchSize}) and returning
 * acknowledges them all; an exception would retry them all.
 */
@Component
public class CustomerNotifier {

    /** The topic {@link OrderTimeoutHandler} replies to. */
    public static final String TOPIC = "order-closed";

    private static final Logger log = LoggerFactory.getLogger(CustomerNotifier.class);

    private final List<List<String>> mailOuts = new ArrayList<>();

    @RmqListener(topic = TOPIC, id = "customer-notifier", batch = "true", batchSize = "50")
    public void notifyCustomers(List<OrderClosed> closed, @Header(RmqHeaders.SLOT) int slot) {
        List<String> ids = closed.stream().map(OrderClosed::orderId).toList();
        synchronized (this) {
            mailOuts.add(ids);
        }
        log.info("  <- one mail-out for {} closed order(s) from slot {}: {}", ids.size(), slot,
                closed.stream().map(c -> c.orderId() + " (" + PriceBoard.format(c.amountCents()) + ")").toList());
    }

    /** The order ids of each mail-out, in the order they were sent. */
    public synchronized List<List<String>> mailOuts() {
        return mailOuts.stream().map(List::copyOf).toList();
    }

    /** Every order id customers were told about, mail-out after mail-out. */
    public synchronized List<String> notified() {
        return mailOuts.stream().flatMap(List::stream).toList();
    }
}
