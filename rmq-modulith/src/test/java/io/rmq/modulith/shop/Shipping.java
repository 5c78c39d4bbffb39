package io.rmq.modulith.shop;

import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.stereotype.Component;

// tag::outbox-listener[]
@Component
public class Shipping {

    @RmqListener(topic = "order-placed")
    void ship(RmqMessage<OrderPlaced> message) {
        // message.id() is the order's id; message.header("customer") comes from the externalization configuration
        OrderPlaced order = message.payload();
        // ... ship it (idempotently: a message can come again after a crash, see "What is guaranteed")
    }
}
// end::outbox-listener[]
