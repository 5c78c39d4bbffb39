package io.rmq.samples.quote;

/** Story 5: the price the quote desk returns to whoever asked. */
public record PriceQuote(long itemId, String item, long priceCents) {
}
