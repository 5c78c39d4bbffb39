package io.rmq.samples.render;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.consumer.Delivery;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Component;

/**
 * Story 1, RANGE_MERGE: renders the main picture of an item, showing its price. Rendering is expensive, so price
 * changes do not render at once: each sends a {@link RenderRequest} with the new price and the item's message id, with
 * a time range of about two seconds; requests for one item merge while they wait, and the render, once per burst of
 * changes, gets the latest request's price and its {@code source} header (what caused the change).
 * <p>
 * The picture CDN can fail (see {@link #failNextUpload(long)}): the handler then throws, and RMQ retries the message
 * after a backoff ({@code attempt} counts the deliveries).
 */
@Component
public class PictureRenderer {

    private static final Logger log = LoggerFactory.getLogger(PictureRenderer.class);

    /** Simulated cost of one render. */
    private static final long RENDER_MILLIS = 60;

    /** One finished render. */
    public record Render(long itemId, long priceCents, String source, int changesCovered, int attempt, long renderedAt) {
    }

    /** One failed attempt. */
    public record FailedAttempt(long itemId, int attempt, String error, long failedAt) {
    }

    private final PriceBoard prices;
    private final List<Render> renders = new ArrayList<>();
    private final List<FailedAttempt> failures = new ArrayList<>();
    private final Set<Long> failNextUpload = ConcurrentHashMap.newKeySet();

    public PictureRenderer(PriceBoard prices) {
        this.prices = prices;
    }

    @RmqListener(topic = "picture-render", id = "picture-render", concurrency = "2",
            maxRetries = "3", backoffInitial = "500ms", backoffMultiplier = "2", backoffJitter = "0")
    public void render(RmqMessage<RenderRequest> message, Delivery delivery) throws InterruptedException {
        long itemId = message.payload().itemId();
        // the message's own headers (RMQ's delivery details are RmqMessage's; this one the sender set)
        String source = delivery.headers().getOrDefault("source", "unknown");
        if (failNextUpload.remove(itemId)) {
            String error = "picture CDN upload timed out";
            synchronized (this) {
                failures.add(new FailedAttempt(itemId, message.attempt(), error, System.currentTimeMillis()));
            }
            log.info("  <- item {}: render attempt {} FAILED ({}); RMQ retries it after its backoff",
                    itemId, message.attempt(), error);
            throw new IllegalStateException(error);
        }
        PriceBoard.Snapshot snapshot = prices.takeSnapshotForRender(itemId);
        Thread.sleep(RENDER_MILLIS); // the expensive part
        long price = message.payload().priceCents();
        Render render = new Render(itemId, price, source, snapshot.changesSinceLastRender(), message.attempt(),
                System.currentTimeMillis());
        synchronized (this) {
            renders.add(render);
        }
        log.info("  <- rendered item {} {} at {} ({}): one render for {} price change(s){}", itemId,
                quoted(snapshot.item().name()), PriceBoard.format(price), source, snapshot.changesSinceLastRender(),
                message.attempt() > 1 ? " (attempt " + message.attempt() + ")" : "");
    }

    /** Makes the next render of the item fail once (a flaky CDN). */
    public void failNextUpload(long itemId) {
        failNextUpload.add(itemId);
    }

    public synchronized List<Render> renders() {
        return List.copyOf(renders);
    }

    public synchronized List<FailedAttempt> failures() {
        return List.copyOf(failures);
    }

    private static String quoted(String name) {
        return String.format("%-18s", "'" + name + "'");
    }
}
