package io.rmq.samples.order;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Component;

/**
 * Orders and their payment state: the {@code orders} table of the sample's H2 database ({@code schema.sql}). Stateless;
 * any thread (the driver, the deadline handler's threads, the stats schedule). A call made inside a transaction
 * ({@link OrderPlacement}) takes part in it: {@link JdbcTemplate} uses the transaction's connection. Each change is one
 * conditional {@code update}, so a payment and the deadline handler's close cannot both win.
 */
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
     * @param item      what was ordered (one of it)
     * @param deadline  payment deadline, epoch ms (moves when the customer gets more time)
     * @param closedAt  when the deadline handler closed it, epoch ms; 0 if it did not
     * @param checkedAt when the deadline handler last looked at it, epoch ms; 0 before
     */
    public record Order(String id, String item, long amountCents, long deadline, Status status, long paidAt,
            long closedAt, long checkedAt) {
    }

    /** What the deadline handler did with an order. */
    public enum Outcome {
        CLOSED, ALREADY_PAID, ALREADY_CLOSED, DEADLINE_MOVED, UNKNOWN
    }

    private static final String COLUMNS = "id, item, amount_cents, deadline, status, paid_at, closed_at, checked_at";

    private static final RowMapper<Order> ORDER = (row, n) -> new Order(row.getString("id"), row.getString("item"),
            row.getLong("amount_cents"), row.getLong("deadline"), Status.valueOf(row.getString("status")),
            row.getLong("paid_at"), row.getLong("closed_at"), row.getLong("checked_at"));

    private final JdbcTemplate jdbc;

    public OrderBook(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Inserts an unpaid order; a second order with the same id fails ({@code DuplicateKeyException}). */
    public Order place(String id, String item, long amountCents, long deadline) {
        jdbc.update("insert into orders (id, item, amount_cents, deadline, status) values (?, ?, ?, ?, 'UNPAID')", id,
                item, amountCents, deadline);
        return new Order(id, item, amountCents, deadline, Status.UNPAID, 0, 0, 0);
    }

    /** The customer pays; false when the order was closed (or paid) already. */
    public boolean pay(String id) {
        if (jdbc.update("update orders set status = 'PAID', paid_at = ? where id = ? and status = 'UNPAID'",
                System.currentTimeMillis(), id) == 1) {
            return true;
        }
        get(id); // an unknown order is an error, as before
        return false;
    }

    /** Gives the customer more time; returns the order with its new deadline. */
    public Order extendDeadline(String id, long newDeadline) {
        jdbc.update("update orders set deadline = ? where id = ?", newDeadline, id);
        return get(id);
    }

    /** The deadline handler's check-and-close: closes the order only if it is unpaid and its deadline has passed. */
    public Outcome closeIfUnpaid(String id, long now) {
        if (jdbc.update("update orders set status = 'CLOSED', closed_at = ?, checked_at = ? where id = ?"
                + " and status = 'UNPAID' and deadline <= ?", now, now, id, now) == 1) {
            return Outcome.CLOSED;
        }
        // not closed: the row (read after the update) says why; a payment in between reads as paid, as it should
        Optional<Order> order = find(id);
        if (order.isEmpty()) {
            return Outcome.UNKNOWN;
        }
        return switch (order.get().status()) {
            case PAID -> {
                jdbc.update("update orders set checked_at = ? where id = ?", now, id);
                yield Outcome.ALREADY_PAID;
            }
            case CLOSED -> Outcome.ALREADY_CLOSED; // a redelivery after the close: nothing to do
            case UNPAID -> Outcome.DEADLINE_MOVED; // a newer close message, due at the new deadline, is on its way
        };
    }

    public Order get(String id) {
        return find(id).orElseThrow(() -> new IllegalArgumentException("no order " + id));
    }

    public Optional<Order> find(String id) {
        return jdbc.query("select " + COLUMNS + " from orders where id = ?", ORDER, id).stream().findFirst();
    }

    /** Every order, in the order they were placed. */
    public List<Order> orders() {
        return jdbc.query("select " + COLUMNS + " from orders order by seq", ORDER);
    }

    /** How many orders there are of each status (every status, 0 included). */
    public Map<Status, Long> countByStatus() {
        Map<Status, Long> counts = new EnumMap<>(Status.class);
        for (Status status : Status.values()) {
            counts.put(status, 0L);
        }
        jdbc.query("select status, count(*) from orders group by status",
                row -> {
                    counts.put(Status.valueOf(row.getString(1)), row.getLong(2));
                });
        return counts;
    }
}
