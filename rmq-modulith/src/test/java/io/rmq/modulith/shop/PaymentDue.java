package io.rmq.modulith.shop;

// docs/outbox.md's example, imports included; compiled so it cannot rot
// tag::outbox-timing[]
import io.rmq.modulith.RmqExternalized;
import org.springframework.modulith.events.Externalized;

/** A RANGE_MERGE topic: delivered 30 minutes after the first send of the order's id; later sends merge into it. */
@Externalized("payment-timeout::#{orderId()}")
@RmqExternalized(delay = "PT30M")
public record PaymentDue(String orderId) {
}
// end::outbox-timing[]
