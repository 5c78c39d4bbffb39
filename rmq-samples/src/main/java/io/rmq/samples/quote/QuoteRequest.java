package io.rmq.samples.quote;

/** Story 5: a request for the price of an item, sent with {@code sendAndReceive}. */
public record QuoteRequest(long itemId) {
}
