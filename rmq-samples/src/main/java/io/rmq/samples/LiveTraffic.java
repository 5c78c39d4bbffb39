package io.rmq.samples;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.rmq.admin.MessageRef;
import io.rmq.core.RmqRedisFullException;
import io.rmq.samples.merchant.MerchantDirectory;
import io.rmq.samples.merchant.MerchantTask;
import io.rmq.samples.order.CloseOrder;
import io.rmq.samples.order.OrderBook;
import io.rmq.samples.order.OrderPlacement;
import io.rmq.samples.render.PriceBoard;
import io.rmq.spring.RmqTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.stereotype.Component;

/**
 * After the scenario, while the application keeps running ({@code samples.exit-when-done=false}), a little steady
 * traffic so that the dashboard, the metrics and the endpoint have something to show: price changes that merge, orders
 * closed at their deadline or paid in time, merchant tasks by tier, and now and then the close of an order another
 * shop placed, which the handler refuses as non-retryable, so that it lands in the dead queue with its reason (inspect
 * and requeue it from the dashboard). The handlers' per-message lines go quiet meanwhile (log level WARN).
 */
@Component
public class LiveTraffic implements DisposableBean {

    private static final Logger log = LoggerFactory.getLogger(LiveTraffic.class);

    private final RmqTemplate rmq;
    private final PriceBoard prices;
    private final OrderBook orders;
    private final OrderPlacement placement;
    private final MerchantDirectory merchants;
    private final LoggingSystem logging;
    private final Random random = new Random();
    private ScheduledExecutorService timer;
    /** Set before the timer shuts down: a task still running then fails because of the stop, not of Redis. */
    private volatile boolean stopping;
    private int orderNumber = 5000;

    public LiveTraffic(RmqTemplate rmq, PriceBoard prices, OrderBook orders, OrderPlacement placement,
            MerchantDirectory merchants, LoggingSystem logging) {
        this.rmq = rmq;
        this.prices = prices;
        this.orders = orders;
        this.placement = placement;
        this.merchants = merchants;
        this.logging = logging;
    }

    /** Starts the traffic (idempotent). */
    public synchronized void start() {
        if (timer != null) {
            return;
        }
        for (String handlers : List.of("io.rmq.samples.render", "io.rmq.samples.merchant", "io.rmq.samples.order",
                "io.rmq.samples.ledger")) {
            logging.setLogLevel(handlers, LogLevel.WARN);
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "live-traffic");
            thread.setDaemon(true);
            return thread;
        });
        timer.scheduleWithFixedDelay(guarded(this::priceChange), 0, 300, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(guarded(this::placeOrder), 100, 700, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(guarded(this::merchantTask), 200, 1_000, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(guarded(this::foreignOrderClose), 3_000, 30_000, TimeUnit.MILLISECONDS);
    }

    private Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            }
            catch (RmqRedisFullException ex) {
                // Redis is over maxmemory: this send stored nothing, while the listeners keep draining it
                log.warn("live traffic: Redis {} is full ({} of maxmemory {}, maxmemory-policy {}), so this send was"
                        + " NOT stored. What to do: keep the listeners running (they drain Redis, and sends succeed"
                        + " again once there is room), send again later or shed load meanwhile, and if it stays full"
                        + " raise maxmemory or look for what fills it (dead messages: the dashboard's dead queue)",
                        ex.node(), ex.usedMemory(), ex.maxMemory(), ex.policy());
            }
            catch (RuntimeException ex) {
                if (stopping) {
                    // the application is stopping: a follow-up the timer refuses or a send cut short is expected
                    log.debug("live traffic stopped mid-task: {}", ex.toString());
                    return;
                }
                // e.g. Redis went away while the sample keeps running: say so, keep going
                log.warn("live traffic: {}", ex.toString());
            }
        };
    }

    private void priceChange() {
        List<PriceBoard.Item> items = prices.items();
        if (items.isEmpty()) {
            return;
        }
        PriceBoard.Item item = items.get(random.nextInt(items.size()));
        long price = prices.price(item.id());
        long newPrice = Math.max(100, price + (random.nextInt(21) - 10) * 10);
        prices.changePrice(item.id(), newPrice);
        rmq.send(SampleDriver.renderRequest(item.id(), newPrice, "live"));
    }

    private void placeOrder() {
        String id = "L-" + (++orderNumber);
        long deadline = System.currentTimeMillis() + 2_000 + random.nextInt(3_000);
        // the row, its close and the stock in one transaction, as in the scenario
        placement.place(id, "gift card", 10_00 + random.nextInt(90_00), deadline);
        if (random.nextBoolean()) {
            timer.schedule(guarded(() -> {
                orders.pay(id);
                rmq.admin().cancel(MessageRef.body(SampleDriver.ORDER_TOPIC, new CloseOrder(id)));
            }), random.nextInt(1_500), TimeUnit.MILLISECONDS);
        }
    }

    private void merchantTask() {
        List<String> names = merchants.names();
        if (names.isEmpty()) {
            return;
        }
        String merchant = names.get(random.nextInt(names.size()));
        rmq.sendPriority(SampleDriver.MERCHANT_TOPIC, new MerchantTask(merchant, 4000 + random.nextInt(1000)),
                merchants.tier(merchant).priority());
    }

    /** The close of an order this shop never placed: refused by the handler as non-retryable → dead, with the reason. */
    private void foreignOrderClose() {
        String id = "X-" + (1000 + random.nextInt(9000));
        rmq.sendFixedTime(SampleDriver.ORDER_TOPIC, new CloseOrder(id), Instant.now().plus(Duration.ofMillis(200)));
    }

    @Override
    public synchronized void destroy() throws InterruptedException {
        stopping = true;
        if (timer != null) {
            timer.shutdownNow();
            // the listeners and Redis stop after this bean: let a task in flight end before they go
            timer.awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
