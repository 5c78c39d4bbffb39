package io.rmq.samples.quote;

import java.util.ArrayList;
import java.util.List;

import io.rmq.samples.render.PriceBoard;
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Story 5, request-reply: prices an item for whoever asks ({@code RmqTemplate.sendAndReceive}); what the method
 * returns goes back to the requester, on whichever instance it waits. An item not for sale fails the request.
 */
@Component
public class QuoteDesk {

    /** The listener's container id (the driver pauses it to show a request that expires unanswered). */
    public static final String LISTENER_ID = "quote-desk";

    private static final Logger log = LoggerFactory.getLogger(QuoteDesk.class);

    private final PriceBoard prices;
    private final List<Long> priced = new ArrayList<>();

    public QuoteDesk(PriceBoard prices) {
        this.prices = prices;
    }

    @RmqListener(topic = "quote-requests", id = LISTENER_ID, concurrency = "1")
    public PriceQuote quote(QuoteRequest request) {
        synchronized (this) {
            priced.add(request.itemId());
        }
        PriceBoard.Item item;
        try {
            item = prices.item(request.itemId());
        }
        catch (IllegalArgumentException unknown) {
            throw new IllegalArgumentException("item " + request.itemId() + " is not for sale", unknown);
        }
        long price = prices.price(item.id());
        log.info("  <- quote desk: item {} {} costs {}", item.id(), item.name(), PriceBoard.format(price));
        return new PriceQuote(item.id(), item.name(), price);
    }

    /** The items the desk was asked to price, in order. */
    public synchronized List<Long> priced() {
        return List.copyOf(priced);
    }
}
