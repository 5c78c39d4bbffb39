package io.rmq.tour;

import io.rmq.spring.annotation.RmqListener;

/** The tour's pricing listener: it answers requests by returning the price. */
public class Quotes {

    // tag::tour-request-reply-listener[]
    @RmqListener(topic = "quote-requests", type = "PRIORITY")
    PriceQuote price(QuoteRequest request) {                    // returned to whoever asked, on whichever instance
        return new PriceQuote(request.sku(), request.quantity() * 1999L);
    }
    // end::tour-request-reply-listener[]
}
