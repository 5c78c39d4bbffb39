package io.rmq.samples.order;

/**
 * "Close this order if it is still unpaid": the body of an {@code order-timeout} message, due at the order's payment
 * deadline. Re-sending it with a later time (the customer got more time) merges and moves the due time.
 */
public record CloseOrder(String orderId) {
}
