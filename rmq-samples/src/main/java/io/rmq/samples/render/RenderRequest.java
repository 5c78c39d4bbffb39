package io.rmq.samples.render;

/**
 * "Re-render the main picture of this item": the body of a {@code picture-render} message. It carries only the item
 * id, never the price, so every request for one item is the same body and identical requests merge; the renderer
 * reads the latest price when it finally runs.
 */
public record RenderRequest(long itemId) {
}
