package io.rmq.samples.order;

import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.rmq.spring.annotation.RmqScheduled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Component;

/**
 * A periodic job: every {@value #RATE} the order table's counts by status, read from the database and logged. Declared
 * with {@code @RmqScheduled}, so with several instances of the sample each firing would still run once, on one of them
 * (see {@code docs/scheduling.md}). Its firings come on the schedule's listener thread ({@code rmq-schedule-N}); the
 * list of firings is guarded by this object.
 */
@Component
public class OrderStats {

    /** The schedule's name: its topic is {@code rmq-schedule.order-stats}. */
    public static final String SCHEDULE = "order-stats";

    /** Every two seconds, on the even seconds (firings fall on multiples of the rate since the epoch). */
    public static final String RATE = "2s";

    private static final Logger log = LoggerFactory.getLogger(OrderStats.class);
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    /**
     * One run of the job.
     *
     * @param firing the firing time it ran for (the schedule's, the same on every instance)
     * @param ranAt  when it ran, epoch ms (this JVM's clock)
     * @param counts the orders of each status it found
     */
    public record Firing(Instant firing, long ranAt, Map<OrderBook.Status, Long> counts) {
    }

    private final OrderBook orders;
    private final List<Firing> firings = new ArrayList<>();

    public OrderStats(OrderBook orders) {
        this.orders = orders;
    }

    @RmqScheduled(name = SCHEDULE, fixedRate = RATE)
    void report(Instant firing) {
        Map<OrderBook.Status, Long> counts = orders.countByStatus();
        synchronized (this) {
            firings.add(new Firing(firing, System.currentTimeMillis(), Map.copyOf(counts)));
        }
        log.info("  [{} at {}] orders in the database: {} unpaid, {} paid, {} closed", SCHEDULE,
                LocalTime.ofInstant(firing, ZoneId.systemDefault()).format(CLOCK), counts.get(OrderBook.Status.UNPAID),
                counts.get(OrderBook.Status.PAID), counts.get(OrderBook.Status.CLOSED));
    }

    /** The runs so far, in the order they ran. */
    public synchronized List<Firing> firings() {
        return List.copyOf(firings);
    }
}
