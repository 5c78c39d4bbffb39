package io.rmq.tour;

import java.time.Duration;
import java.time.Instant;

import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageRef;
import io.rmq.admin.TopicStats;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.readme.OrderRef;
import io.rmq.spring.RmqTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sends and calls of the README's tour, one method per feature, each the region the README shows; {@link TourTest}
 * runs them against Redis on the Quick start's topics, so what their comments say is checked too.
 */
public class TourSends {

    private static final Logger log = LoggerFactory.getLogger(TourSends.class);

    private final RmqTemplate rmq;

    public TourSends(RmqTemplate rmq) {
        this.rmq = rmq;
    }

    /** Merging: the second send of a burst merges into the first. */
    SendResult priceChanged(String productId) {
        // tag::tour-merging[]
        // a burst of price changes of one product: one picture re-render, 5 s after the first change
        SendResult result = rmq.sendRangeMerge("picture-render", productId, Duration.ofSeconds(5));
        // result.merged(): an identical message was already waiting, this send merged into it
        // end::tour-merging[]
        return result;
    }

    /** Merging by id: price changes of one product merge, and the newest price is the one delivered. */
    SendResult newPrice(String productId, String price) {
        // tag::tour-merging-id[]
        // price changes of one product, merged by its id: one re-render 5 s after the first, with the newest price
        SendResult result = rmq.send(OutgoingMessage.rangeMerge("picture-render", new PriceChange(productId, price),
                Duration.ofSeconds(5)).withId(productId).withHeader("source", "pricing"));
        // end::tour-merging-id[]
        return result;
    }

    /** Deduplication window: at most one payment reminder per order every 10 minutes. */
    SendResult remindToPay(String orderId) {
        // tag::tour-dedupe[]
        // at most one payment reminder per order every 10 minutes, however often the order service asks for one
        SendResult result = rmq.send(OutgoingMessage.priority("mails", "pay-reminder:" + orderId, 0)
                .withId("pay-reminder:" + orderId).dedupeFor(Duration.ofMinutes(10)));
        // result.deduplicated(): one was handled less than 10 minutes ago, so this one was dropped
        // end::tour-dedupe[]
        return result;
    }

    /** Request-reply: the price the pricing listener returns. */
    PriceQuote quote(String sku) {
        // tag::tour-request-reply[]
        // waits up to 2 s for what the listener of quote-requests returns (RmqTimeoutException after that)
        PriceQuote quote = rmq.sendAndReceive("quote-requests", new QuoteRequest(sku, 3), PriceQuote.class,
                Duration.ofSeconds(2));
        // end::tour-request-reply[]
        return quote;
    }

    /** Priority: the payout waits before the re-index. */
    void merchantTasks(String merchantId) {
        // tag::tour-priority[]
        rmq.sendPriority("merchant-tasks", "reindex:" + merchantId, 1);
        rmq.sendPriority("merchant-tasks", "payout:" + merchantId, 100);   // taken before any lower one waiting
        // end::tour-priority[]
    }

    /** Delayed and exactly timed: due in 30 min, then moved to now, then withdrawn. */
    void deadline(OrderRef order) {
        // tag::tour-timing[]
        rmq.sendFixedTime("order-timeout", order, Instant.now().plus(Duration.ofMinutes(30)));   // due in 30 min
        MessageRef timeout = MessageRef.body("order-timeout", order);                            // names it by its body
        rmq.admin().reschedule(timeout, Instant.now());                                          // due now instead
        rmq.admin().cancel(timeout);                                             // or never: the order was paid
        // end::tour-timing[]
    }

    /** The dead queue: read it, then give every dead message a fresh start. */
    long retryTheDead() {
        // tag::tour-dead[]
        for (DeadMessage dead : rmq.admin().deadMessages("refunds", 0, 20)) {
            log.warn("{} died after {} attempts: {}", dead.bodyText(), dead.attempts(), dead.lastError());
        }
        long requeued = rmq.admin().requeueAllDead("refunds");   // the bug is fixed: all of them once more
        // end::tour-dead[]
        return requeued;
    }

    /** Ordered consumption: one account's entries share a slot. */
    void post(LedgerEntry entry) {
        // tag::tour-ordering-send[]
        rmq.send(OutgoingMessage.fixedTime("ledger", entry, Instant.now()).withGroup(entry.accountId()));
        // end::tour-ordering-send[]
    }

    /** Queue figures. */
    TopicStats figures() {
        // tag::tour-operations[]
        TopicStats stats = rmq.admin().stats("order-timeout"); // waiting, inFlight, retrying, dead, oldestDue, per slot
        // end::tour-operations[]
        return stats;
    }
}
