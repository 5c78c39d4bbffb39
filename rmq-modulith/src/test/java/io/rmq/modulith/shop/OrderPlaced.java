package io.rmq.modulith.shop;

import org.springframework.modulith.events.Externalized;

// tag::outbox-event[]
/** Sent to topic order-placed with the order's id as the message id: a re-send merges with the first send. */
@Externalized("order-placed::#{orderId()}")
public record OrderPlaced(String orderId, String customer, long cents) {
}
// end::outbox-event[]
