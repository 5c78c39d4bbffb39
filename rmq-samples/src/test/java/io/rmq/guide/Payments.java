package io.rmq.guide;

import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.annotation.RmqReply;
import org.springframework.messaging.handler.annotation.SendTo;

/** The listener guide's reply example: a settled payment gets a receipt, due a minute later. */
public class Payments {

    public record Payment(String id, boolean settled) {
    }

    public record Receipt(String paymentId) {
    }

    // tag::listener-reply[]
    @RmqListener(topic = "payments", type = "PRIORITY")
    @SendTo("receipts")
    @RmqReply(delay = "1m")            // receipts is FIXED_TIME: due a minute after the reply
    Receipt onPayment(Payment payment) {
        return payment.settled() ? new Receipt(payment.id()) : null;   // null: no receipt
    }
    // end::listener-reply[]
}
