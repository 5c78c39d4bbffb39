package io.rmq.guide;

// docs/messages.md's deduplication-window example, imports included; compiled so it cannot rot
// tag::messages-dedupe[]
import java.time.Duration;

import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.RmqProducer;

/** At most one payment reminder per order every 10 minutes, however often the order service asks for one. */
class PaymentReminders {

    private final RmqProducer producer;   // Rmq.producer(); RmqTemplate.send(OutgoingMessage) takes the same messages

    PaymentReminders(RmqProducer producer) {
        this.producer = producer;
    }

    /** False when a reminder for this order was handled less than 10 minutes ago: this one was dropped. */
    boolean remind(String orderId) {
        return !producer.send(OutgoingMessage.priority("payment-reminders", orderId, 0)
                .withId("payment-reminder:" + orderId).dedupeFor(Duration.ofMinutes(10))).deduplicated();
    }
}
// end::messages-dedupe[]
