package io.rmq.modulith.shop;

// docs/outbox.md's example, imports included; compiled so it cannot rot
// tag::outbox-event[]
import org.springframework.modulith.events.Externalized;

/** Sent to topic order-placed with the order's id as the message id: a re-send merges with the first send. */
@Externalized("order-placed::#{orderId()}")
public record OrderPlaced(String orderId, String customer, long cents) {
}
// end::outbox-event[]
