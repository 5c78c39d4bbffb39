package io.rmq.tour;

/** The tour's request-reply example: a request for the price of some units of a product. */
public record QuoteRequest(String sku, int quantity) {
}
