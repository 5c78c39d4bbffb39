package io.rmq.tour;

/** The tour's merge-by-id example: a product's new price. */
public record PriceChange(String productId, String price) {
}
