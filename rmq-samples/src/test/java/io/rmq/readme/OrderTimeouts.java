package io.rmq.readme;

// tag::quickstart-listener[]
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

@Component
public class OrderTimeouts {

    private static final Logger log = LoggerFactory.getLogger(OrderTimeouts.class);

    @RmqListener(topic = "order-timeout", concurrency = "4")
    public void close(OrderRef order) {   // the payload, converted from JSON; returning acknowledges it
        log.info("Closing unpaid order {}", order.id());   // throwing fails the attempt: it is retried later
    }
}
// end::quickstart-listener[]
