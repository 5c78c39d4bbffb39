package io.rmq.samples.quote;

/** Story 5: a reminder to pay an order, at most one a minute per order (the topic's deduplication window). */
public record PaymentReminder(String orderId) {
}
