package io.rmq.tour;

/** The tour's request-reply example: the price the pricing listener returns. */
public record PriceQuote(String sku, long cents) {
}
