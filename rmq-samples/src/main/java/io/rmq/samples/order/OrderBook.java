package io.rmq.samples.order;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.stereotype.Component;

/** Orders and their payment state, in memory; stands in for the order database. */
@Component
public class OrderBook {

    public enum Status {
        /** Waiting for payment. */
        UNPAID,
        /** Paid in time; the deadline handler must leave it alone. */
        PAID,
        /** Closed by the deadline handler because it was not paid in time. */
        CLOSED
    }

    /**
     * One order.
     *
     * @param deadline  payment deadline, epoch ms (moves when the customer gets more time)
     * @param closedAt  when the deadline handler closed it, epoch ms; 0 if it did not
     * @param checkedAt when the deadline handler last looked at it, epoch ms; 0 before
     */
    public record Order(String id, long amountCents, long deadline, Status status, long paidAt, long closedAt,
            long checkedAt) {
    }

    /** What the deadline handler did with an order. */
    public enum Outcome {
        CLOSED, ALREADY_PAID, ALREADY_CLOSED, DEADLINE_MOVED, UNKNOWN
    }

    private final Map<String, Order> orders = new LinkedHashMap<>();

    public synchronized Order place(String id, long amountCents, long deadline) {
        Order order = new Order(id, amountCents, deadline, Status.UNPAID, 0, 0, 0);
        orders.put(id, order);
        return order;
    }

    /** The customer pays; false when the order was closed already. */
    public synchronized boolean pay(String id) {
        Order order = get(id);
        if (order.status() != Status.UNPAID) {
            return false;
        }
        orders.put(id, new Order(id, order.amountCents(), order.deadline(), Status.PAID, System.currentTimeMillis(), 0,
                order.checkedAt()));
        return true;
    }

    /** Gives the customer more time; returns the order with its new deadline. */
    public synchronized Order extendDeadline(String id, long newDeadline) {
        Order order = get(id);
        Order extended = new Order(id, order.amountCents(), newDeadline, order.status(), order.paidAt(),
                order.closedAt(), order.checkedAt());
        orders.put(id, extended);
        return extended;
    }

    /** The deadline handler's check-and-close, atomic against {@link #pay}. */
    public synchronized Outcome closeIfUnpaid(String id, long now) {
        Order order = orders.get(id);
        if (order == null) {
            return Outcome.UNKNOWN;
        }
        if (order.status() == Status.PAID) {
            orders.put(id, new Order(id, order.amountCents(), order.deadline(), order.status(), order.paidAt(),
                    order.closedAt(), now));
            return Outcome.ALREADY_PAID;
        }
        if (order.status() == Status.CLOSED) {
            return Outcome.ALREADY_CLOSED; // a redelivery after the close: nothing to do
        }
        if (now < order.deadline()) {
            return Outcome.DEADLINE_MOVED; // a newer close message, due at the new deadline, is on its way
        }
        orders.put(id, new Order(id, order.amountCents(), order.deadline(), Status.CLOSED, 0, now, now));
        return Outcome.CLOSED;
    }

    public synchronized Order get(String id) {
        Order order = orders.get(id);
        if (order == null) {
            throw new IllegalArgumentException("no order " + id);
        }
        return order;
    }

    public synchronized List<Order> orders() {
        return List.copyOf(orders.values());
    }
}
