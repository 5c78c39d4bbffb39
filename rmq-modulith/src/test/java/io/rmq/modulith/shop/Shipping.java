package io.rmq.modulith.shop;

// docs/outbox.md's example, imports included; compiled so it cannot rot
// tag::outbox-listener[]
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.stereotype.Component;

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
