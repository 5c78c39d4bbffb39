package io.rmq.samples.render;

/**
 * "Re-render the main picture of this item, at this price": the payload of a {@code picture-render} message. It is
 * sent with the message id {@code product-<itemId>} ({@link #messageId}), so every request for one item is one message:
 * a request sent while the item's previous one waits merges into it, and the render gets the latest request's price.
 */
public record RenderRequest(long itemId, long priceCents) {

    /** The merge identity of an item's render requests. */
    public static String messageId(long itemId) {
        return "product-" + itemId;
    }
}
