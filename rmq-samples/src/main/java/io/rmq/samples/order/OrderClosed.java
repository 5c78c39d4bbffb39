package io.rmq.samples.order;

/**
 * An order was closed at its payment deadline: what {@link OrderTimeoutHandler} replies to the {@code order-closed}
 * topic ({@code @SendTo}), for {@link CustomerNotifier} to tell the customer.
 */
public record OrderClosed(String orderId, long amountCents, long closedAt) {
}
