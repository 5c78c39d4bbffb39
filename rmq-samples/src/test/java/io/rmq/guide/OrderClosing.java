package io.rmq.guide;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.readme.OrderRef;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.annotation.RmqListener;
import jakarta.validation.Valid;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;

/** The listener guide's method with headers and a validated payload, compiled so it cannot rot. */
public class OrderClosing {

    final Orders orders = new Orders();

    // tag::listener-headers[]
    @RmqListener(topic = "order-timeout", type = "FIXED_TIME")
    void onTimeout(@Valid @Payload OrderRef order, @Header(RmqHeaders.ATTEMPT) int attempt,
            @Header(RmqHeaders.SCORE) long dueAt) {
        orders.closeIfUnpaid(order.id());
    }
    // end::listener-headers[]

    /** Stands for the order service: records the orders it was asked to close. */
    static class Orders {
        final List<String> closed = new CopyOnWriteArrayList<>();

        void closeIfUnpaid(String id) {
            closed.add(id);
        }
    }
}
