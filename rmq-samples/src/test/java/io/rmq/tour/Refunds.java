package io.rmq.tour;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.readme.OrderRef;
import io.rmq.spring.annotation.RmqListener;

/** The tour's listener with its own retry policy: refunds that fail on bad input die at once. */
public class Refunds {

    final Payments payments = new Payments();

    // tag::tour-retries[]
    @RmqListener(topic = "refunds", type = "FIXED_TIME", maxRetries = "5", backoffMax = "1m",
            noRetryFor = IllegalArgumentException.class)
    void refund(OrderRef order) {
        payments.refund(order.id());   // throws: retried after 1 s, 2 s, 4 s …; the 6th failure or a bad id: dead
    }
    // end::tour-retries[]

    /** Stands for a payment provider: it refuses a blank order id. */
    static class Payments {
        final List<String> refunded = new CopyOnWriteArrayList<>();

        void refund(String orderId) {
            if (orderId.isBlank()) {
                throw new IllegalArgumentException("Invalid order id '" + orderId + "': must not be blank");
            }
            refunded.add(orderId);
        }
    }
}
