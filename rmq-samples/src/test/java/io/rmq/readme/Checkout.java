package io.rmq.readme;

// tag::quickstart-sender[]
import java.time.Instant;

import io.rmq.spring.RmqTemplate;
import org.springframework.stereotype.Service;

@Service
public class Checkout {

    private final RmqTemplate rmq;

    public Checkout(RmqTemplate rmq) {
        this.rmq = rmq;
    }

    public void placed(String orderId, Instant paymentDeadline) {
        // delivered to OrderTimeouts.close at the deadline (Redis's clock); a deadline already past: at once
        rmq.sendFixedTime("order-timeout", new OrderRef(orderId), paymentDeadline);
    }
}
// end::quickstart-sender[]
