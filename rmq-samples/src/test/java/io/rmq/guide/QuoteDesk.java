package io.rmq.guide;

// docs/listeners.md's request-reply example, imports included; compiled so it cannot rot
// tag::listeners-request-reply[]
import java.time.Duration;

import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.stereotype.Service;

/** Asks for a price on one instance; whichever instance takes the request prices it. */
@Service
public class QuoteDesk {

    private final RmqTemplate rmq;

    public QuoteDesk(RmqTemplate rmq) {
        this.rmq = rmq;
    }

    /** Waits up to 2 s for the price: RmqTimeoutException after that (and no instance prices it any more). */
    public PriceQuote quote(String sku, int quantity) {
        return rmq.sendAndReceive("quote-requests", new QuoteRequest(sku, quantity), PriceQuote.class,
                Duration.ofSeconds(2));
    }

    /** The pricing side: an ordinary listener; what it returns goes back to whoever asked. */
    @RmqListener(topic = "quote-requests", type = "PRIORITY")
    PriceQuote price(QuoteRequest request) {
        return new PriceQuote(request.sku(), request.quantity() * 1999L);
    }

    public record QuoteRequest(String sku, int quantity) {
    }

    public record PriceQuote(String sku, long cents) {
    }
}
// end::listeners-request-reply[]
