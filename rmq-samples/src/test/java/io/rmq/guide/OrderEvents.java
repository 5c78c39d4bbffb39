package io.rmq.guide;

// tag::class-level-listener[]
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqHandler;
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.stereotype.Component;

@Component
@RmqListener(topic = "order-events", type = "FIXED_TIME")
public class OrderEvents {

    private static final Logger log = LoggerFactory.getLogger(OrderEvents.class);

    public record OrderCreated(String id, long amountCents) {
    }

    public record OrderCancelled(String id, String reason) {
    }

    @RmqHandler
    void created(OrderCreated created) {                     // {"amountCents":500,"id":"1"}
        log.info("Order {} created", created.id());
    }

    @RmqHandler
    @SendTo("refunds")                                       // refunds: a FIXED_TIME topic; due at once
    String cancelled(RmqMessage<OrderCancelled> message) {   // {"id":"2","reason":"late"}
        return message.payload().id();
    }

    @RmqHandler(isDefault = true)
    void unknown(String body) {                              // anything else
        log.warn("Unknown order event {}", body);
    }
}
// end::class-level-listener[]
