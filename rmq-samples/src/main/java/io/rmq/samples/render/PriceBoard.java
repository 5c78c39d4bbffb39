package io.rmq.samples.render;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.stereotype.Component;

/**
 * The shop's current prices (in cents), in memory; stands in for the product database. The render requests carry the
 * price; the board is what the story checks the rendered prices against. It also counts the price changes since an
 * item's last render, so the renderer can tell how many changes one render covered.
 */
@Component
public class PriceBoard {

    /** An item on sale. */
    public record Item(long id, String name) {
    }

    private final Map<Long, Item> items = new LinkedHashMap<>();
    private final Map<Long, Long> prices = new LinkedHashMap<>();
    private final Map<Long, Integer> changesSinceRender = new LinkedHashMap<>();

    public synchronized void list(Item item, long priceCents) {
        items.put(item.id(), item);
        prices.put(item.id(), priceCents);
        changesSinceRender.put(item.id(), 0);
    }

    public synchronized List<Item> items() {
        return List.copyOf(items.values());
    }

    public synchronized Item item(long id) {
        Item item = items.get(id);
        if (item == null) {
            throw new IllegalArgumentException("no item " + id);
        }
        return item;
    }

    /** Sets a new price; returns the previous one. */
    public synchronized long changePrice(long itemId, long priceCents) {
        item(itemId);
        changesSinceRender.merge(itemId, 1, Integer::sum);
        return prices.put(itemId, priceCents);
    }

    public synchronized long price(long itemId) {
        item(itemId);
        return prices.get(itemId);
    }

    /** The item, its price now and the number of changes since the previous render (then reset). */
    public synchronized Snapshot takeSnapshotForRender(long itemId) {
        int changes = changesSinceRender.getOrDefault(itemId, 0);
        changesSinceRender.put(itemId, 0);
        return new Snapshot(item(itemId), prices.get(itemId), changes);
    }

    /** An item's state as a render read it. */
    public record Snapshot(Item item, long priceCents, int changesSinceLastRender) {
    }

    public static String format(long cents) {
        return String.format("%d.%02d", cents / 100, cents % 100);
    }
}
