package io.rmq.guide;

// docs/messages.md's expiry example, imports included: sends that are worthless late; compiled so it cannot rot
// tag::messages-expiry[]
import java.time.Duration;
import java.time.Instant;

import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.RmqProducer;
import io.rmq.producer.SendResult;

/** Sends that are worthless late: each carries an expiry, after which no consumer hands it to a handler. */
class ExpiringSends {

    private final RmqProducer producer;   // Rmq.producer(); RmqTemplate.send(OutgoingMessage) takes the same messages

    ExpiringSends(RmqProducer producer) {
        this.producer = producer;
    }

    /** A sign-in code, of no use 5 minutes after Redis stored it: no handler gets it once they have passed. */
    SendResult signInCode(String phone, String code) {
        return producer.send(OutgoingMessage.priority("sms", new Sms(phone, "Your code: " + code), 100)
                .expiresAfter(Duration.ofMinutes(5)));
    }

    /** A reminder due at remindAt of an offer that ends at offerEnds: no handler gets it after the end. */
    SendResult offerReminder(String customerId, Instant remindAt, Instant offerEnds) {
        return producer.send(OutgoingMessage.fixedTime("offer-reminders", customerId, remindAt)
                .withId("offer-reminder:" + customerId).expiresAt(offerEnds));
    }
}

/** An SMS to send. */
record Sms(String phone, String text) {
}
// end::messages-expiry[]
