package io.rmq.samples;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.rmq.admin.MessageRef;
import io.rmq.admin.TopicStats;
import io.rmq.container.ListenerContainer;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.samples.ledger.Ledger;
import io.rmq.samples.ledger.LedgerEntry;
import io.rmq.samples.ledger.LedgerEntryHandler;
import io.rmq.samples.merchant.MerchantDirectory;
import io.rmq.samples.merchant.MerchantTask;
import io.rmq.samples.merchant.MerchantTaskWorker;
import io.rmq.samples.merchant.MerchantTaskWorker.HandledTask;
import io.rmq.samples.merchant.MerchantTier;
import io.rmq.admin.CancelResult;
import io.rmq.samples.order.CloseOrder;
import io.rmq.samples.order.CustomerNotifier;
import io.rmq.samples.order.OrderBook;
import io.rmq.samples.order.OrderPlacement;
import io.rmq.samples.order.OrderStats;
import io.rmq.samples.order.OrderTimeoutHandler;
import io.rmq.core.RmqTimeoutException;
import io.rmq.reply.RmqReplyFailureException;
import io.rmq.samples.quote.PaymentReminder;
import io.rmq.samples.quote.PriceQuote;
import io.rmq.samples.quote.QuoteDesk;
import io.rmq.samples.quote.QuoteRequest;
import io.rmq.samples.quote.ReminderMailer;
import io.rmq.samples.render.PictureRenderer;
import io.rmq.samples.render.PriceBoard;
import io.rmq.samples.render.RenderRequest;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Plays the three stories of the original RMQ design, one of ORDERLY consumption and one of request-reply and
 * deduplication windows, one after the other, and prints
 * what is sent, what merges and what the listeners do:
 * <ol>
 *   <li>RANGE_MERGE {@code picture-render}: bursts of price changes, one picture render per item and burst;</li>
 *   <li>PRIORITY {@code merchant-tasks}: a backlog of re-render tasks, key accounts served first;</li>
 *   <li>FIXED_TIME {@code order-timeout}: unpaid orders closed at their payment deadline, paid ones left alone; each
 *   order placed in a database transaction that holds its close until the commit, and one refused and rolled back,
 *   its close with it;</li>
 *   <li>FIXED_TIME {@code ledger}, consumed ORDERLY: per-account ledger entries applied in sequence, many accounts in
 *   parallel, without a lock; a failed entry holds back its account until its retry;</li>
 *   <li>PRIORITY {@code quote-requests} and {@code payment-reminders}: prices asked with {@code sendAndReceive} and
 *   answered by a listener's return value, a failure sent back, a request that expires while the desk is paused; and
 *   reminders asked for every round but mailed once per order within the topic's deduplication window.</li>
 * </ol>
 * Meanwhile the {@code order-stats} schedule ({@link OrderStats}, {@code @RmqScheduled}) logs the order table's counts
 * every 2 s. Then it waits until every queue is empty, checks that the schedule fired (each firing time once), prints
 * a summary and records the outcome in {@link ScenarioReport}. The
 * exit code ({@link ExitCodeGenerator}) is 0 when every story ended as expected.
 */
@Component
public class SampleDriver implements CommandLineRunner, ExitCodeGenerator {

    static final String RENDER_TOPIC = "picture-render";
    static final String MERCHANT_TOPIC = "merchant-tasks";
    static final String ORDER_TOPIC = "order-timeout";
    static final String LEDGER_TOPIC = "ledger";
    static final String QUOTE_TOPIC = "quote-requests";
    static final String REMINDER_TOPIC = "payment-reminders";
    static final List<String> TOPICS = List.of(RENDER_TOPIC, MERCHANT_TOPIC, ORDER_TOPIC, LEDGER_TOPIC, QUOTE_TOPIC,
            REMINDER_TOPIC);

    /** Story 5: how long a quote is waited for; the orders reminded, and how often the billing job asks. */
    static final Duration QUOTE_TIMEOUT = Duration.ofSeconds(5);
    static final List<String> REMINDED_ORDERS = List.of("B-2001", "B-2002", "B-2003");
    static final int REMINDER_ROUNDS = 3;

    /** Story 4: the accounts (AC-1009 and AC-1016 share a slot of the 16), entries per account, the entry that fails once. */
    static final List<String> LEDGER_ACCOUNTS = List.of("AC-1009", "AC-1010", "AC-1011", "AC-1012", "AC-1013",
            "AC-1014", "AC-1015", "AC-1016");
    static final int LEDGER_ENTRIES_PER_ACCOUNT = 25;
    static final String FAILING_ACCOUNT = "AC-1009";
    static final int FAILING_SEQUENCE = 10;

    /** Story 3: the item there is one of (A-1006 takes it), and the order refused for want of it. */
    static final String SIGNED_PRINT = "signed print";
    static final String REFUSED_ORDER = "A-1007";

    /** How long a render request waits for more changes of the same item. */
    static final Duration RENDER_TIME_RANGE = Duration.ofSeconds(2);

    private static final Logger log = LoggerFactory.getLogger(SampleDriver.class);
    private static final String RULE = "-".repeat(100);
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    private final RmqTemplate rmq;
    private final RmqListenerEndpointRegistry listeners;
    private final PriceBoard prices;
    private final PictureRenderer renderer;
    private final MerchantDirectory merchants;
    private final MerchantTaskWorker merchantWorker;
    private final OrderBook orders;
    private final OrderPlacement placement;
    private final OrderTimeoutHandler timeoutHandler;
    private final OrderStats orderStats;
    private final CustomerNotifier notifier;
    private final QuoteDesk quoteDesk;
    private final ReminderMailer reminderMailer;
    private final Ledger ledger;
    private final LedgerEntryHandler ledgerHandler;
    private final ScenarioReport report;
    private final SamplesProperties properties;
    private final LiveTraffic liveTraffic;
    private final Environment environment;

    public SampleDriver(RmqTemplate rmq, RmqListenerEndpointRegistry listeners, PriceBoard prices,
            PictureRenderer renderer, MerchantDirectory merchants, MerchantTaskWorker merchantWorker, OrderBook orders,
            OrderPlacement placement, OrderTimeoutHandler timeoutHandler, OrderStats orderStats,
            CustomerNotifier notifier, QuoteDesk quoteDesk, ReminderMailer reminderMailer, Ledger ledger,
            LedgerEntryHandler ledgerHandler, ScenarioReport report,
            SamplesProperties properties, LiveTraffic liveTraffic, Environment environment) {
        this.placement = placement;
        this.timeoutHandler = timeoutHandler;
        this.orderStats = orderStats;
        this.notifier = notifier;
        this.quoteDesk = quoteDesk;
        this.reminderMailer = reminderMailer;
        this.liveTraffic = liveTraffic;
        this.environment = environment;
        this.rmq = rmq;
        this.listeners = listeners;
        this.prices = prices;
        this.renderer = renderer;
        this.merchants = merchants;
        this.merchantWorker = merchantWorker;
        this.orders = orders;
        this.ledger = ledger;
        this.ledgerHandler = ledgerHandler;
        this.report = report;
        this.properties = properties;
    }

    @Override
    public void run(String... args) throws InterruptedException {
        long started = System.nanoTime();
        try {
            rangeMergeStory();
            priorityStory();
            fixedTimeStory();
            orderlyStory();
            requestReplyStory();
            awaitEmptyQueues();
            orderStatsSchedule();
        }
        catch (StoryTimeout ex) {
            // recorded as a problem already; the summary tells
        }
        finally {
            report.finish(Duration.ofNanos(System.nanoTime() - started).toMillis());
        }
        summary();
        if (!properties.exitWhenDone()) {
            whereToLook();
            if (properties.liveTraffic()) {
                liveTraffic.start();
            }
        }
    }

    /** The addresses of the dashboard, the Actuator endpoints and the metrics of this running application. */
    private void whereToLook() {
        String port = environment.getProperty("local.server.port");
        if (port == null) {
            story("The listeners keep running (no web server, so no dashboard). Stop with Ctrl-C.");
            return;
        }
        String base = "http://localhost:" + port;
        String dashboard = environment.getProperty("rmq.dashboard.path", "/rmq");
        header("Where to look", new String[0]);
        story("Dashboard        %s%s   (topics, slots, dead messages, waiting messages, listeners)", base, dashboard);
        story("RMQ endpoint     %s/actuator/rmq   (JSON; POST to pause/resume listeners, requeue/purge dead)", base);
        story("Health           %s/actuator/health/rmq", base);
        story("Metrics          %s/actuator/metrics/rmq.handled.messages   (and messaging.*, rmq.* in /actuator/metrics)",
                base);
        story("%s", properties.liveTraffic() ? "A little traffic keeps flowing (every 30 s an order close that ends "
                + "in the dead queue). Stop with Ctrl-C." : "Stop with Ctrl-C.");
        story(RULE);
    }

    @Override
    public int getExitCode() {
        return report.succeeded() ? 0 : 1;
    }

    // ------------------------------------------------------------------ story 1: RANGE_MERGE

    private void rangeMergeStory() throws InterruptedException {
        header("Story 1/5 - RANGE_MERGE, topic '" + RENDER_TOPIC + "'",
                "Each price change asks for a re-render of the item's main picture (it shows the price). Rendering is",
                "expensive and prices change in bursts, so a request waits " + RENDER_TIME_RANGE.toSeconds()
                        + " s (timeRange) after the item's first change.",
                "A request carries the new price and the message id 'product-<item>': requests for the item sent",
                "meanwhile merge into it, and the render gets the latest one's price and its 'source' header.");
        prices.list(new PriceBoard.Item(1001, "Espresso machine"), 249_00);
        prices.list(new PriceBoard.Item(1002, "Trail shoes"), 129_00);
        prices.list(new PriceBoard.Item(1003, "Desk lamp"), 39_90);
        prices.list(new PriceBoard.Item(1004, "Headphones"), 299_00);

        // Burst 1: a competitor's price war; single sends, a few tens of ms apart. The CDN fails item 1003's first upload.
        story("Burst 1: a competitor starts a price war; 12 price changes within half a second, sent one by one");
        renderer.failNextUpload(1003);
        long[][] war = {{1001, 239_00}, {1002, 124_00}, {1001, 235_00}, {1003, 37_90}, {1004, 289_00},
                {1002, 119_00}, {1001, 229_00}, {1004, 279_00}, {1003, 35_90}, {1002, 117_50}, {1004, 275_00},
                {1001, 227_00}};
        long burstStart = System.currentTimeMillis();
        int merged = 0;
        // requests that found none of the item's waiting, per item: each is one render (on an idle machine the burst
        // fits in the time range and that is one per item; a machine too busy to send 12 messages in 2 s gets more)
        Map<Long, Integer> newRequests = new LinkedHashMap<>();
        for (long[] change : war) {
            long item = change[0];
            long old = prices.changePrice(item, change[1]);
            SendResult result = rmq.send(renderRequest(item, change[1], "price-war"));
            merged += result.merged() ? 1 : 0;
            newRequests.merge(item, result.merged() ? 0 : 1, Integer::sum);
            story("  -> item %d %-16s %7s -> %-7s render request %s", item, prices.item(item).name(),
                    PriceBoard.format(old), PriceBoard.format(change[1]),
                    result.merged() ? "MERGED into the waiting one" : "queued (new), slot " + result.slot());
            Thread.sleep(40);
        }
        story("  burst 1 sent: %d render requests for %d items, %d merged; each item renders ~%d s after its first change",
                war.length, distinctItems(war), merged, RENDER_TIME_RANGE.toSeconds());
        finishBurst("burst 1", false, burstStart, war.length, merged, newRequests, Map.of());

        // Burst 2: the flash sale, all prices in one batch (and two corrections), with one sendBatch call.
        story("");
        story("Burst 2: flash sale, everything 20%% off, then marketing corrects two prices; sent with ONE sendBatch");
        List<OutgoingMessage> batch = new ArrayList<>();
        burstStart = System.currentTimeMillis();
        for (PriceBoard.Item item : prices.items()) {
            long sale = prices.price(item.id()) * 80 / 100;
            prices.changePrice(item.id(), sale);
            batch.add(renderRequest(item.id(), sale, "flash-sale"));
            story("  -> item %d %-16s sale price %s", item.id(), item.name(), PriceBoard.format(sale));
        }
        for (long[] correction : new long[][] {{1002, 89_00}, {1004, 199_00}}) {
            prices.changePrice(correction[0], correction[1]);
            batch.add(renderRequest(correction[0], correction[1], "correction"));
            story("  -> item %d %-16s corrected to %s", correction[0], prices.item(correction[0]).name(),
                    PriceBoard.format(correction[1]));
        }
        BatchResult result = rmq.sendBatch(batch);
        story("  burst 2 sent: sendBatch of %d render requests -> %d new, %d merged", result.sent(), result.added(),
                result.merged());
        // nothing of burst 1 is waiting any more, and one call merges within itself: one new request per item
        Map<Long, Integer> onePerItem = new LinkedHashMap<>();
        prices.items().forEach(item -> onePerItem.put(item.id(), 1));
        check(result.added() == onePerItem.size(), "burst 2: expected " + onePerItem.size() + " new requests (one per"
                + " item), got " + result.added());
        finishBurst("burst 2", true, burstStart, result.sent(), result.merged(), onePerItem,
                Map.of(1002L, "correction", 1004L, "correction"));
    }

    /**
     * A render request for the item at its new price, merged by the item's message id, with what caused the change
     * as the {@code source} header.
     */
    static OutgoingMessage renderRequest(long item, long priceCents, String source) {
        return OutgoingMessage.rangeMerge(RENDER_TOPIC, new RenderRequest(item, priceCents), RENDER_TIME_RANGE)
                .withId(RenderRequest.messageId(item)).withHeader("source", source);
    }

    /**
     * Waits for the burst's renders and checks them: each item rendered once per request that found none of its
     * waiting ({@code newRequests}; the others merged), at its latest price, with the latest request's source
     * ({@code sources}: the items whose last request's source differs from the burst's).
     */
    private void finishBurst(String name, boolean batched, long burstStart, int sent, long merged,
            Map<Long, Integer> newRequests, Map<Long, String> sources) throws InterruptedException {
        String burstSource = batched ? "flash-sale" : "price-war";
        Set<Long> items = prices.items().stream().map(PriceBoard.Item::id).collect(Collectors.toCollection(LinkedHashSet::new));
        await(name + ": every item rendered", () -> rendersSince(burstStart).keySet().containsAll(items)
                && queueEmpty(RENDER_TOPIC));
        Map<Long, Integer> perItem = new LinkedHashMap<>();
        Map<Long, Long> rendered = new LinkedHashMap<>();
        Map<Long, Long> latest = new LinkedHashMap<>();
        Map<Long, String> renderedSources = new LinkedHashMap<>();
        Map<Long, String> latestSources = new LinkedHashMap<>();
        for (long item : items) {
            List<PictureRenderer.Render> renders = rendersSince(burstStart).getOrDefault(item, List.of());
            perItem.put(item, renders.size());
            rendered.put(item, renders.get(renders.size() - 1).priceCents());
            renderedSources.put(item, renders.get(renders.size() - 1).source());
            latest.put(item, prices.price(item));
            latestSources.put(item, sources.getOrDefault(item, burstSource));
        }
        report.addBurst(new ScenarioReport.Burst(name, batched, sent, merged, Map.copyOf(newRequests), perItem, latest,
                rendered, latestSources, renderedSources));
        boolean once = perItem.values().stream().allMatch(n -> n == 1);
        boolean current = rendered.equals(latest);
        story("  %s: %d requests -> %d renders (%s), every picture shows the latest price: %s", name, sent,
                perItem.values().stream().mapToInt(Integer::intValue).sum(),
                once ? "one per item" : "per item " + perItem + ", one per request that found none waiting (the"
                        + " burst outlasted the time range on this busy machine)",
                current ? "yes" : "NO " + rendered + " vs " + latest);
        check(perItem.equals(newRequests), name + ": expected one render per request that found none of its item"
                + " waiting " + newRequests + ", got " + perItem);
        check(current, name + ": rendered prices " + rendered + " differ from the latest prices " + latest);
        check(renderedSources.equals(latestSources), name + ": rendered sources " + renderedSources
                + " differ from the latest requests' " + latestSources);
    }

    private Map<Long, List<PictureRenderer.Render>> rendersSince(long since) {
        Map<Long, List<PictureRenderer.Render>> byItem = new LinkedHashMap<>();
        for (PictureRenderer.Render render : renderer.renders()) {
            if (render.renderedAt() >= since) {
                byItem.computeIfAbsent(render.itemId(), k -> new ArrayList<>()).add(render);
            }
        }
        return byItem;
    }

    private static long distinctItems(long[][] changes) {
        return java.util.Arrays.stream(changes).mapToLong(c -> c[0]).distinct().count();
    }

    // ------------------------------------------------------------------ story 2: PRIORITY

    private void priorityStory() throws InterruptedException {
        header("Story 2/5 - PRIORITY, topic '" + MERCHANT_TOPIC + "'",
                "The same re-render work, queued by merchant tier: key accounts (KA) priority 100, regular merchants 10,",
                "the long tail 1. The render farm is down for maintenance (listener not started) and a backlog builds up;",
                "when it comes back, KA work is handled first. One handler thread, so the order is plain to see.");
        merchants.register("Acme Electronics", MerchantTier.KA);
        merchants.register("MegaMart", MerchantTier.KA);
        merchants.register("Corner Books", MerchantTier.REGULAR);
        merchants.register("Sunny Shoes", MerchantTier.REGULAR);
        merchants.register("Pixel Toys", MerchantTier.REGULAR);
        merchants.register("Tiny Crafts", MerchantTier.LONG_TAIL);
        merchants.register("Bob's Bikes", MerchantTier.LONG_TAIL);
        merchants.register("Garden Gnomes", MerchantTier.LONG_TAIL);
        List<MerchantTask> backlog = List.of(new MerchantTask("Tiny Crafts", 3001), new MerchantTask("Corner Books", 3002),
                new MerchantTask("Acme Electronics", 3003), new MerchantTask("Bob's Bikes", 3004),
                new MerchantTask("Sunny Shoes", 3005), new MerchantTask("MegaMart", 3006),
                new MerchantTask("Garden Gnomes", 3007), new MerchantTask("Acme Electronics", 3008),
                new MerchantTask("Pixel Toys", 3009));
        for (MerchantTask task : backlog) {
            MerchantTier tier = merchants.tier(task.merchant());
            rmq.sendPriority(MERCHANT_TOPIC, task, tier.priority());
            story("  -> queued item %d of %-17s %-9s priority %3d", task.itemId(), task.merchant(), tier, tier.priority());
        }
        merchants.register("Corner Books", MerchantTier.KA);
        SendResult upgrade = rmq.sendPriority(MERCHANT_TOPIC, new MerchantTask("Corner Books", 3002),
                MerchantTier.KA.priority());
        story("  -> Corner Books signs a KA contract: its waiting task is sent again with priority %d -> %s",
                MerchantTier.KA.priority(), upgrade.merged() ? "MERGED, it now waits with the KA work" : "queued (new)");
        check(upgrade.merged(), "the upgraded Corner Books task did not merge into its waiting duplicate");
        report.backlog(backlog.size(), upgrade.merged());
        story("  backlog: %d tasks waiting (RmqTemplate.stats: waiting=%d)", backlog.size(),
                rmq.admin().stats(MERCHANT_TOPIC).waiting());

        story("  the render farm is back: starting listener '%s'", MerchantTaskWorker.LISTENER_ID);
        ListenerContainer container = listeners.getListenerContainer(MerchantTaskWorker.LISTENER_ID);
        container.start();
        await("the merchant backlog handled", () -> merchantWorker.handled().size() >= backlog.size()
                && queueEmpty(MERCHANT_TOPIC));
        List<HandledTask> handled = merchantWorker.handled();
        boolean ordered = true;
        for (int i = 1; i < handled.size(); i++) {
            ordered &= handled.get(i - 1).priority() >= handled.get(i).priority();
        }
        story("  handled in this order: %s", handled.stream().map(t -> t.tier().name()).collect(Collectors.joining(" > ")));
        check(handled.size() == backlog.size(), "expected " + backlog.size() + " merchant tasks, handled " + handled);
        check(ordered, "merchant tasks were not handled in priority order: " + handled);
    }

    // ------------------------------------------------------------------ story 3: FIXED_TIME

    private void fixedTimeStory() throws InterruptedException {
        header("Story 3/5 - FIXED_TIME, topic '" + ORDER_TOPIC + "'",
                "Every order must be paid by its deadline. When it is placed, a close is scheduled for exactly that time;",
                "when it is paid, its close is cancelled; at the deadline unpaid orders are closed. A customer who gets",
                "more time has the close re-sent with the new time: it merges and moves. An order is placed in one",
                "transaction of the shop's database (H2): its row, its close, one of its item taken from stock. RMQ",
                "holds the close until the commit; an order refused for want of stock rolls back, its close with it.");
        long now = System.currentTimeMillis();
        Object[][] placed = {{"A-1001", "coffee beans", 24_90L, 2000L}, {"A-1002", "mug", 59_00L, 2300L},
                {"A-1003", "tote bag", 12_50L, 2600L}, {"A-1004", "coffee beans", 89_99L, 2900L},
                {"A-1005", "mug", 45_00L, 3200L}, {"A-1006", SIGNED_PRINT, 19_90L, 3500L}};
        for (Object[] o : placed) {
            String id = (String) o[0];
            String item = (String) o[1];
            long deadline = now + (Long) o[3];
            SendResult sent = placement.place(id, item, (Long) o[2], deadline);
            // the commit has written the close: it waits in Redis now
            boolean waiting = rmq.admin().contains(MessageRef.body(ORDER_TOPIC, new CloseOrder(id)));
            boolean row = orders.find(id).isPresent();
            report.placement(new ScenarioReport.Placement(id, true, sent.held(), waiting, row));
            story("  -> order %s of %-12s over %6s placed, pay by %s: close %s, in Redis after the commit: %s"
                    + " (slot %d)", id, item, PriceBoard.format((Long) o[2]), clock(deadline),
                    sent.held() ? "held by the transaction" : "WRITTEN AT ONCE", waiting ? "yes" : "NO", sent.slot());
            check(sent.held(), "the close of " + id + " was written at once, not held by its transaction");
            check(waiting && row, "order " + id + " committed, yet its row (" + row + ") or its close in Redis ("
                    + waiting + ") is missing");
        }
        refusedPlacement(now + 3300);
        Thread.sleep(1000);
        for (String id : List.of("A-1002", "A-1004")) {
            payAndCancelClose(id);
        }
        OrderBook.Order extended = orders.extendDeadline("A-1006", orders.get("A-1006").deadline() + 1000);
        SendResult moved = rmq.sendFixedTime(ORDER_TOPIC, new CloseOrder("A-1006"), Instant.ofEpochMilli(extended.deadline()));
        report.orderExtensionMerged(moved.merged());
        story("  -> order A-1006 gets one more second, pay by %s: close re-sent -> %s", clock(extended.deadline()),
                moved.merged() ? "MERGED, its time moved" : "queued (new)");
        check(moved.merged(), "the moved close of A-1006 did not merge into the waiting one");
        Thread.sleep(500);
        payAndCancelClose("A-1005");

        await("every order's deadline handled", () -> orders.orders().stream()
                .allMatch(o -> o.status() != OrderBook.Status.UNPAID) && queueEmpty(ORDER_TOPIC));
        List<String> lateness = new ArrayList<>();
        for (OrderBook.Order order : orders.orders()) {
            switch (order.status()) {
                case CLOSED -> {
                    lateness.add(order.id() + " +" + (order.closedAt() - order.deadline()) + " ms");
                    check(order.closedAt() >= order.deadline(), "order " + order.id() + " was closed "
                            + (order.deadline() - order.closedAt()) + " ms BEFORE its deadline");
                }
                case PAID -> check(order.checkedAt() == 0 || order.checkedAt() >= order.deadline(), "paid order "
                        + order.id() + " was checked before its deadline");
                case UNPAID -> check(false, "order " + order.id() + " is still open after its deadline");
            }
        }
        story("  closed at their deadlines: %s; paid orders, their closes cancelled: %s", String.join(", ", lateness),
                orders.orders().stream().filter(o -> o.status() == OrderBook.Status.PAID).map(OrderBook.Order::id)
                        .collect(Collectors.joining(", ")));
        // each close was replied (@SendTo) to order-closed, where a batch listener mails the customers
        List<String> closed = orders.orders().stream().filter(o -> o.status() == OrderBook.Status.CLOSED)
                .map(OrderBook.Order::id).toList();
        await("every closed order's customer told", () -> notifier.notified().containsAll(closed)
                && queueEmpty(CustomerNotifier.TOPIC));
        story("  customers told (replies to '%s', handled by a batch listener): %s in %d mail-out(s)",
                CustomerNotifier.TOPIC, String.join(", ", closed), notifier.mailOuts().size());
        // the refused order's deadline has passed and the topic is empty: had its close been written, it would have
        // been handed to the deadline handler (and refused: no such order)
        boolean delivered = timeoutHandler.handled().contains(REFUSED_ORDER);
        report.refusedCloseDelivered(delivered);
        story("  order %s, rolled back: close delivered %s, order row %s; '%s' left in stock: %d", REFUSED_ORDER,
                delivered ? "YES" : "never", orders.find(REFUSED_ORDER).isPresent() ? "PRESENT" : "none", SIGNED_PRINT,
                placement.available(SIGNED_PRINT));
        check(!delivered, "the close of the rolled-back order " + REFUSED_ORDER + " was delivered");
        check(orders.find(REFUSED_ORDER).isEmpty(), "the rolled-back order " + REFUSED_ORDER + " has a row");
    }

    /**
     * The second order of the one signed print: its placement inserts the row and sends the close, then finds the
     * stock empty and throws. The transaction rolls back: no row, and the held close is dropped, never written.
     */
    private void refusedPlacement(long deadline) {
        String refusal;
        try {
            placement.place(REFUSED_ORDER, SIGNED_PRINT, 34_00L, deadline);
            refusal = null;
        }
        catch (OrderPlacement.OutOfStockException ex) {
            refusal = ex.getMessage();
        }
        // checked in Redis and in the database once the transaction has ended
        boolean waiting = rmq.admin().contains(MessageRef.body(ORDER_TOPIC, new CloseOrder(REFUSED_ORDER)));
        boolean row = orders.find(REFUSED_ORDER).isPresent();
        report.placement(new ScenarioReport.Placement(REFUSED_ORDER, refusal == null, false, waiting, row));
        story("  -> order %s of %-12s over %6s, pay by %s: %s; rolled back: order row %s, close in Redis %s",
                REFUSED_ORDER, SIGNED_PRINT, PriceBoard.format(34_00L), clock(deadline),
                refusal == null ? "PLACED" : "REFUSED (" + refusal + ")", row ? "PRESENT" : "none", waiting ? "YES" : "none");
        check(refusal != null, "order " + REFUSED_ORDER + " was placed, though its item was sold out");
        check(!waiting, "the close of the rolled-back order " + REFUSED_ORDER + " is in Redis");
        check(!row, "the rolled-back order " + REFUSED_ORDER + " has a row");
    }

    /**
     * The customer pays: the order's close is cancelled. Should the close be in flight at that moment, the cancel says
     * so and the handler finds the order paid (and the close is not delivered again).
     */
    private void payAndCancelClose(String id) {
        orders.pay(id);
        CancelResult cancel = rmq.admin().cancel(MessageRef.body(ORDER_TOPIC, new CloseOrder(id)));
        report.closeCancelled(id, cancel);
        story("  $  order %s paid: its close %s", id, cancel.cancelled() ? "is CANCELLED"
                : cancel.inFlight() ? "is being handled right now; the handler will find the order paid"
                : "was not found");
    }

    // ------------------------------------------------------------------ story 4: FIXED_TIME, consumed ORDERLY

    private void orderlyStory() throws InterruptedException {
        header("Story 4/5 - FIXED_TIME consumed ORDERLY, topic '" + LEDGER_TOPIC + "'",
                "Ledger entries (deposits, withdrawals) must be applied to each account in its sequence: entry n+1 only",
                "after entry n, yet many accounts at once. Each entry is sent with group = its account, so an",
                "account's entries share a slot, due at once in sequence order. The listener is ORDERLY (4 threads): a",
                "slot is owned by one instance, each account run by one thread at a time, accounts in parallel. No lock,",
                "yet per-account order. The core-banking call fails once for one entry: its account waits for the retry",
                "(200 ms), nothing overtakes it, the other accounts go on.");
        int accounts = LEDGER_ACCOUNTS.size();
        int total = accounts * LEDGER_ENTRIES_PER_ACCOUNT;
        // the entries, round by round (#1 of every account, then #2, ...), as they would come in
        Random random = new Random(4711);
        Map<String, Long> expected = new TreeMap<>();
        List<LedgerEntry> entries = new ArrayList<>();
        for (int sequence = 1; sequence <= LEDGER_ENTRIES_PER_ACCOUNT; sequence++) {
            for (String account : LEDGER_ACCOUNTS) {
                long balance = expected.getOrDefault(account, 0L);
                long amount;
                if (sequence == 1) {
                    amount = (500 + random.nextInt(1500)) * 100L; // opening deposit
                }
                else if (random.nextInt(10) < 6 || balance < 100) {
                    amount = 1 + random.nextInt(30_000);
                }
                else {
                    amount = -(1 + random.nextInt((int) Math.min(balance, 25_000))); // never below zero, in sequence
                }
                expected.put(account, balance + amount);
                entries.add(new LedgerEntry(account, sequence, amount));
            }
        }
        ledgerHandler.failOnce(FAILING_ACCOUNT, FAILING_SEQUENCE);
        story("  core banking will time out once, on %s #%d", FAILING_ACCOUNT, FAILING_SEQUENCE);

        // due in the recent past, 1 ms apart in sending order: due at once, each account's entries in sequence order
        long firstDue = System.currentTimeMillis() - 1000;
        Map<String, Integer> slotByAccount = new TreeMap<>();
        long merged = 0;
        long sendStart = System.nanoTime();
        for (int i = 0; i < entries.size(); i++) {
            LedgerEntry entry = entries.get(i);
            SendResult sent = rmq.send(OutgoingMessage.fixedTime(LEDGER_TOPIC, entry, Instant.ofEpochMilli(firstDue + i))
                    .withGroup(entry.accountId()));
            merged += sent.merged() ? 1 : 0;
            slotByAccount.put(entry.accountId(), sent.slot());
            if (entry.sequence() == 1) {
                story("  -> %s #1 opening deposit %9s  (group %s -> slot %d)", entry.accountId(),
                        Ledger.signed(entry.amountCents()), entry.accountId(), sent.slot());
            }
        }
        long sendMillis = Duration.ofNanos(System.nanoTime() - sendStart).toMillis();
        report.ledgerRun(new ScenarioReport.LedgerRun(total, Map.copyOf(expected), Map.copyOf(slotByAccount), merged));
        story("  -> ... then #2..#%d of every account, round by round: %d entries sent one by one in %d ms, %d merged",
                LEDGER_ENTRIES_PER_ACCOUNT, total, sendMillis, merged);
        story("  %d accounts on %d slots: %s", accounts, new TreeSet<>(slotByAccount.values()).size(),
                sharedSlots(slotByAccount));
        check(merged == 0, merged + " ledger entries merged; every entry is distinct");

        await("every ledger entry applied", () -> ledger.appliedCount() >= total && queueEmpty(LEDGER_TOPIC));
        List<Ledger.Applied> applied = ledger.applied();
        Map<String, Long> balances = ledger.balances();
        for (String account : LEDGER_ACCOUNTS) {
            List<Ledger.Applied> ofAccount = applied.stream().filter(a -> a.accountId().equals(account)).toList();
            List<Integer> sequences = ofAccount.stream().map(Ledger.Applied::sequence).toList();
            boolean inSequence = sequences.equals(IntStream.rangeClosed(1, LEDGER_ENTRIES_PER_ACCOUNT)
                    .boxed().toList());
            long balance = balances.getOrDefault(account, 0L);
            story("  %s slot %2d: %d entries applied %s, balance %9s (expected %9s), threads %s", account,
                    slotByAccount.get(account), ofAccount.size(), inSequence ? "in sequence" : "OUT OF SEQUENCE",
                    Ledger.signed(balance), Ledger.signed(expected.get(account)),
                    ofAccount.stream().map(a -> a.thread().substring(a.thread().lastIndexOf('-') + 1)).distinct().sorted()
                            .collect(Collectors.joining(",")));
            check(inSequence, "ledger entries of " + account + " were applied as " + sequences);
            check(balance == expected.get(account), "balance of " + account + " is " + Ledger.signed(balance)
                    + ", expected " + Ledger.signed(expected.get(account)));
        }
        check(applied.size() == total, "expected " + total + " applied ledger entries, got " + applied.size());
        check(ledger.outOfOrder().isEmpty(), "ledger entries applied out of sequence: " + ledger.outOfOrder());
        check(ledgerHandler.accountOverlaps() == 0, ledgerHandler.accountOverlaps()
                + " times two threads ran one account at once");

        // the failed entry: retried after its backoff; nothing of its account was applied in between
        List<LedgerEntryHandler.FailedAttempt> failures = ledgerHandler.failures();
        check(failures.size() == 1, "expected one failed ledger attempt, got " + failures);
        if (!failures.isEmpty()) {
            LedgerEntryHandler.FailedAttempt failure = failures.get(0);
            int retryAt = -1;
            for (int i = 0; i < applied.size(); i++) {
                if (applied.get(i).accountId().equals(failure.accountId())
                        && applied.get(i).sequence() == failure.sequence()) {
                    retryAt = i;
                }
            }
            check(retryAt >= 0, failure.accountId() + " #" + failure.sequence() + " was never applied after its failure");
            if (retryAt >= 0) {
                Ledger.Applied retry = applied.get(retryAt);
                List<Ledger.Applied> meanwhile = applied.subList(Math.min(failure.appliedBefore(), retryAt), retryAt);
                List<Ledger.Applied> overtook = meanwhile.stream()
                        .filter(a -> a.accountId().equals(failure.accountId())).toList();
                long slotMatesMeanwhile = meanwhile.stream().filter(a -> a.slot() == failure.slot()).count();
                int finalRetryAt = retryAt;
                boolean successorsAfter = IntStream.range(0, applied.size())
                        .filter(i -> applied.get(i).accountId().equals(failure.accountId())
                                && applied.get(i).sequence() > failure.sequence())
                        .allMatch(i -> i > finalRetryAt);
                List<String> slotMates = slotByAccount.entrySet().stream()
                        .filter(e -> e.getValue() == failure.slot() && !e.getKey().equals(failure.accountId()))
                        .map(Map.Entry::getKey).toList();
                story("  %s #%d failed once, applied at attempt %d %d ms later; meanwhile only %s waited (slot %d, shared"
                        + " with %s):", failure.accountId(), failure.sequence(), retry.attempt(),
                        retry.appliedAt() - failure.failedAt(), failure.accountId(), failure.slot(),
                        slotMates.isEmpty() ? "no other account" : String.join(" and ", slotMates));
                story("    %d entries of %s overtook it, #%d..#%d applied after it: %s; the other accounts went on (%d"
                        + " entries, %d of them of its slot)", overtook.size(), failure.accountId(),
                        failure.sequence() + 1, LEDGER_ENTRIES_PER_ACCOUNT, successorsAfter ? "yes" : "NO",
                        meanwhile.size(), slotMatesMeanwhile);
                check(retry.attempt() == 2, failure.accountId() + " #" + failure.sequence() + " applied at attempt "
                        + retry.attempt() + ", expected 2");
                check(overtook.isEmpty(), "entries overtook the failed " + failure.accountId() + " #"
                        + failure.sequence() + " in its account: " + overtook);
                check(successorsAfter, "entries of " + failure.accountId() + " after #" + failure.sequence()
                        + " were applied before its retry");
            }
        }
        Set<Integer> slots = applied.stream().map(Ledger.Applied::slot).collect(Collectors.toCollection(TreeSet::new));
        Set<String> threads = applied.stream().map(Ledger.Applied::thread).collect(Collectors.toCollection(TreeSet::new));
        story("  %d entries applied, %d out of sequence, %d of %d balances as expected; %d slots on %d threads (%s-orderly-N),"
                        + " two threads on one account at once: %d", applied.size(), ledger.outOfOrder().size(),
                LEDGER_ACCOUNTS.stream().filter(a -> expected.get(a).equals(balances.get(a))).count(), accounts,
                slots.size(), threads.size(), LedgerEntryHandler.LISTENER_ID, ledgerHandler.accountOverlaps());
    }

    private static String sharedSlots(Map<String, Integer> slotByAccount) {
        Map<Integer, List<String>> bySlot = new TreeMap<>();
        slotByAccount.forEach((account, slot) -> bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(account));
        List<String> shared = bySlot.entrySet().stream().filter(e -> e.getValue().size() > 1)
                .map(e -> String.join(" and ", e.getValue()) + " share slot " + e.getKey()).toList();
        return shared.isEmpty() ? "one slot each" : String.join("; ", shared) + ", the others have one of their own";
    }

    // ------------------------------------------------------------------ the schedule

    /**
     * The {@code order-stats} schedule has logged the order counts every 2 s since the start: it fired, and each
     * firing time ran once (one instance here; with several, still once across them).
     */
    private void orderStatsSchedule() throws InterruptedException {
        await("the " + OrderStats.SCHEDULE + " schedule fired", () -> !orderStats.firings().isEmpty());
        List<OrderStats.Firing> firings = orderStats.firings();
        Set<Instant> times = firings.stream().map(OrderStats.Firing::firing).collect(Collectors.toSet());
        report.scheduleFirings(firings.size(), times.size());
        check(times.size() == firings.size(), "a firing time of " + OrderStats.SCHEDULE + " ran more than once: "
                + firings.stream().map(OrderStats.Firing::firing).toList());
    }

    // ------------------------------------------------------------------ story 5: request-reply, expiry, dedupe window

    private void requestReplyStory() throws InterruptedException {
        header("Story 5/5 - request-reply and a deduplication window, topics '" + QUOTE_TOPIC + "' and '"
                        + REMINDER_TOPIC + "'",
                "The shop asks the quote desk for prices with sendAndReceive: a request that waits for what the",
                "desk's @RmqListener method returns, on whichever instance it runs. A request expires with its",
                "timeout (" + QUOTE_TIMEOUT.toSeconds() + " s), so a desk that comes back later never prices it. Then the"
                        + " billing job asks for payment",
                "reminders every round; the topic's dedupe-for (1m) mails each order's reminder once a minute.");
        int answered = 0;
        for (long itemId : new long[] {1001, 1002, 1004}) {
            PriceQuote quote = rmq.sendAndReceive(QUOTE_TOPIC, new QuoteRequest(itemId), PriceQuote.class,
                    QUOTE_TIMEOUT);
            boolean right = quote != null && quote.itemId() == itemId && quote.priceCents() == prices.price(itemId);
            answered += right ? 1 : 0;
            story("  -> quote for item %d: %s", itemId, quote == null ? "none"
                    : quote.item() + " " + PriceBoard.format(quote.priceCents()));
            check(right, "the quote for item " + itemId + " was " + quote + ", the board says "
                    + PriceBoard.format(prices.price(itemId)));
        }
        // an item the desk does not sell: the request asks for failures back, so the desk's exception comes back
        boolean failureBack = false;
        try {
            rmq.sendAndReceive(OutgoingMessage.priority(QUOTE_TOPIC, new QuoteRequest(9999), 0), PriceQuote.class,
                    QUOTE_TIMEOUT, true);
        }
        catch (RmqReplyFailureException failed) {
            failureBack = failed.getFailure().contains("item 9999 is not for sale");
            story("  -> quote for item 9999: failed at the desk, sent back: %s", failed.getFailure());
        }
        check(failureBack, "the desk's failure for item 9999 did not come back");
        // the desk is paused (maintenance): a request waits 1 s for nothing, and expires with its timeout
        listeners.pause(QuoteDesk.LISTENER_ID);
        boolean timedOut = false;
        try {
            rmq.sendAndReceive(QUOTE_TOPIC, new QuoteRequest(1003), PriceQuote.class, Duration.ofSeconds(1));
        }
        catch (RmqTimeoutException timeout) {
            timedOut = true;
            story("  -> quote for item 1003 while the desk is paused: no reply within 1 s (%s)",
                    timeout.getClass().getSimpleName());
        }
        listeners.resume(QuoteDesk.LISTENER_ID);
        await("the expired quote request is gone", () -> queueEmpty(QUOTE_TOPIC));
        boolean expired = timedOut && !quoteDesk.priced().contains(1003L);
        story("  -> the desk is back: the expired request for item 1003 was %s", expired ? "never priced"
                : "PRICED after its requester gave up");
        check(expired, "the request for item 1003 was priced after it expired, or did not time out");
        report.quotes(answered, failureBack, expired);

        int asked = 0;
        int deduplicated = 0;
        for (int round = 1; round <= REMINDER_ROUNDS; round++) {
            List<String> outcomes = new ArrayList<>();
            for (String order : REMINDED_ORDERS) {
                SendResult sent = rmq.send(OutgoingMessage.priority(REMINDER_TOPIC, new PaymentReminder(order), 0)
                        .withId("reminder:" + order));
                asked++;
                deduplicated += sent.deduplicated() ? 1 : 0;
                outcomes.add(order + (sent.deduplicated() ? " dropped (reminded <1 min ago)" : " queued"));
            }
            story("  -> billing job round %d: %s", round, String.join(", ", outcomes));
            await("reminders of round " + round + " mailed", () -> queueEmpty(REMINDER_TOPIC));
        }
        report.reminders(asked, deduplicated);
        // each order once, in any order (the orders' reminders are in different slots)
        check(reminderMailer.mailed().size() == REMINDED_ORDERS.size()
                && new TreeSet<>(reminderMailer.mailed()).equals(new TreeSet<>(REMINDED_ORDERS)), "reminders mailed "
                + reminderMailer.mailed() + ", expected one per order " + REMINDED_ORDERS);
        check(deduplicated == (REMINDER_ROUNDS - 1) * REMINDED_ORDERS.size(), deduplicated
                + " reminders dropped by the window; expected every one after the first round");
    }

    // ------------------------------------------------------------------ end

    private void awaitEmptyQueues() throws InterruptedException {
        await("all queues empty", () -> TOPICS.stream().allMatch(this::queueEmpty));
    }

    private void summary() {
        header("Summary", new String[0]);
        List<ScenarioReport.Burst> bursts = report.bursts();
        int sent = bursts.stream().mapToInt(ScenarioReport.Burst::requestsSent).sum();
        long merged = bursts.stream().mapToLong(ScenarioReport.Burst::merged).sum();
        int renders = bursts.stream().flatMap(b -> b.rendersPerItem().values().stream()).mapToInt(Integer::intValue).sum();
        story("RANGE_MERGE  %-15s %d price changes in %d bursts -> %d merged, %d renders; %d failed attempt(s) retried",
                RENDER_TOPIC, sent, bursts.size(), merged, renders, renderer.failures().size());
        List<HandledTask> handled = merchantWorker.handled();
        story("PRIORITY     %-15s backlog of %d tasks handled as %s", MERCHANT_TOPIC, handled.size(),
                tierRuns(handled));
        List<OrderBook.Order> all = orders.orders();
        story("FIXED_TIME   %-15s %d orders: %d paid in time (skipped), %d closed at their deadline; each placed in a"
                        + " transaction that held its close until the commit; %d refused and rolled back, its close never"
                        + " written", ORDER_TOPIC, all.size(),
                all.stream().filter(o -> o.status() == OrderBook.Status.PAID).count(),
                all.stream().filter(o -> o.status() == OrderBook.Status.CLOSED).count(),
                report.placements().stream().filter(p -> !p.committed()).count());
        List<Ledger.Applied> applied = ledger.applied();
        story("ORDERLY      %-15s %d ledger entries of %d accounts applied, %d out of sequence; %d failed attempt(s) "
                        + "retried before their successors; %d slots, %d threads", LEDGER_TOPIC, applied.size(),
                applied.stream().map(Ledger.Applied::accountId).distinct().count(), ledger.outOfOrder().size(),
                ledgerHandler.failures().size(), applied.stream().map(Ledger.Applied::slot).distinct().count(),
                applied.stream().map(Ledger.Applied::thread).distinct().count());
        story("REPLIES      %-15s %d quotes answered, a failure sent back: %s, a request expired unanswered: %s;"
                        + " %s %d reminders asked for, %d mailed, %d dropped by the window", QUOTE_TOPIC,
                report.quotesAnswered(), report.quoteFailureBack() ? "yes" : "NO",
                report.quoteExpired() ? "yes" : "NO", REMINDER_TOPIC, report.remindersAsked(),
                reminderMailer.mailed().size(), report.remindersDeduplicated());
        story("SCHEDULE     %-15s fired %d times (every %s), each firing time once: %s", OrderStats.SCHEDULE,
                report.scheduleFirings(), OrderStats.RATE, report.scheduleFirings() == report.distinctFiringTimes() ? "yes" : "NO");
        for (String topic : TOPICS) {
            TopicStats stats = rmq.admin().stats(topic);
            story("queue %-15s waiting=%d in-flight=%d retrying=%d dead=%d", topic, stats.waiting(), stats.inFlight(),
                    stats.retrying(), stats.dead());
        }
        if (report.succeeded()) {
            story("All five stories ended as expected, in %.1f s.", report.elapsedMillis() / 1000.0);
        }
        else {
            report.problems().forEach(p -> log.warn("problem: {}", p));
            log.warn("{} problem(s) after {} ms", report.problems().size(), report.elapsedMillis());
        }
        story(RULE);
    }

    private static String tierRuns(List<HandledTask> handled) {
        List<String> parts = new ArrayList<>();
        MerchantTier current = null;
        int count = 0;
        for (HandledTask task : handled) {
            if (task.tier() != current) {
                if (current != null) {
                    parts.add(count + " " + current);
                }
                current = task.tier();
                count = 0;
            }
            count++;
        }
        if (current != null) {
            parts.add(count + " " + current);
        }
        return String.join(", then ", parts);
    }

    // ------------------------------------------------------------------ helpers

    private boolean queueEmpty(String topic) {
        TopicStats stats = rmq.admin().stats(topic);
        return stats.pending() == 0;
    }

    private void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + properties.waitTimeout().toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                String problem = "timed out after " + properties.waitTimeout().toMillis() + " ms waiting for: " + what;
                report.problem(problem);
                log.warn(problem);
                throw new StoryTimeout();
            }
            Thread.sleep(25);
        }
    }

    private void check(boolean ok, String problem) {
        if (!ok) {
            report.problem(problem);
            log.warn("problem: {}", problem);
        }
    }

    private static void header(String title, String... lines) {
        story("");
        story(RULE);
        story(title);
        for (String line : lines) {
            story("  " + line);
        }
        story(RULE);
    }

    private static void story(String format, Object... args) {
        log.info(args.length == 0 ? format.replace("%%", "%") : String.format(format, args));
    }

    private static String clock(long epochMillis) {
        return LocalTime.ofInstant(Instant.ofEpochMilli(epochMillis), ZoneId.systemDefault()).format(CLOCK);
    }

    /** A step did not finish within {@code samples.wait-timeout}; already recorded as a problem. */
    private static final class StoryTimeout extends RuntimeException {
        StoryTimeout() {
            super(null, null, false, false);
        }
    }
}
