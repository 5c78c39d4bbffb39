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
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import io.rmq.admin.TopicStats;
import io.rmq.container.ListenerContainer;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.samples.merchant.MerchantDirectory;
import io.rmq.samples.merchant.MerchantTask;
import io.rmq.samples.merchant.MerchantTaskWorker;
import io.rmq.samples.merchant.MerchantTaskWorker.HandledTask;
import io.rmq.samples.merchant.MerchantTier;
import io.rmq.samples.order.CloseOrder;
import io.rmq.samples.order.OrderBook;
import io.rmq.samples.render.PictureRenderer;
import io.rmq.samples.render.PriceBoard;
import io.rmq.samples.render.RenderRequest;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.stereotype.Component;

/**
 * Plays the three stories of the original RMQ design, one after the other, and prints what is sent, what merges and
 * what the listeners do:
 * <ol>
 *   <li>RANGE_MERGE {@code picture-render}: bursts of price changes, one picture render per item and burst;</li>
 *   <li>PRIORITY {@code merchant-tasks}: a backlog of re-render tasks, key accounts served first;</li>
 *   <li>FIXED_TIME {@code order-timeout}: unpaid orders closed at their payment deadline, paid ones left alone.</li>
 * </ol>
 * Then it waits until every queue is empty, prints a summary and records the outcome in {@link ScenarioReport}. The
 * exit code ({@link ExitCodeGenerator}) is 0 when every story ended as expected.
 */
@Component
public class SampleDriver implements CommandLineRunner, ExitCodeGenerator {

    static final String RENDER_TOPIC = "picture-render";
    static final String MERCHANT_TOPIC = "merchant-tasks";
    static final String ORDER_TOPIC = "order-timeout";

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
    private final ScenarioReport report;
    private final SamplesProperties properties;

    public SampleDriver(RmqTemplate rmq, RmqListenerEndpointRegistry listeners, PriceBoard prices,
            PictureRenderer renderer, MerchantDirectory merchants, MerchantTaskWorker merchantWorker, OrderBook orders,
            ScenarioReport report, SamplesProperties properties) {
        this.rmq = rmq;
        this.listeners = listeners;
        this.prices = prices;
        this.renderer = renderer;
        this.merchants = merchants;
        this.merchantWorker = merchantWorker;
        this.orders = orders;
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
            awaitEmptyQueues();
        }
        catch (StoryTimeout ex) {
            // recorded as a problem already; the summary tells
        }
        finally {
            report.finish(Duration.ofNanos(System.nanoTime() - started).toMillis());
        }
        summary();
    }

    @Override
    public int getExitCode() {
        return report.succeeded() ? 0 : 1;
    }

    // ------------------------------------------------------------------ story 1: RANGE_MERGE

    private void rangeMergeStory() throws InterruptedException {
        header("Story 1/3 - RANGE_MERGE, topic '" + RENDER_TOPIC + "'",
                "Each price change asks for a re-render of the item's main picture (it shows the price). Rendering is",
                "expensive and prices change in bursts, so a request waits " + RENDER_TIME_RANGE.toSeconds()
                        + " s (timeRange) after the item's first change;",
                "identical requests sent meanwhile merge into it, and the renderer reads the latest price when it runs.");
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
        for (long[] change : war) {
            long item = change[0];
            long old = prices.changePrice(item, change[1]);
            SendResult result = rmq.sendRangeMerge(RENDER_TOPIC, new RenderRequest(item), RENDER_TIME_RANGE);
            merged += result.merged() ? 1 : 0;
            story("  -> item %d %-16s %7s -> %-7s render request %s", item, prices.item(item).name(),
                    PriceBoard.format(old), PriceBoard.format(change[1]),
                    result.merged() ? "MERGED into the waiting one" : "queued (new), slot " + result.slot());
            Thread.sleep(40);
        }
        story("  burst 1 sent: %d render requests for %d items, %d merged; each item renders ~%d s after its first change",
                war.length, distinctItems(war), merged, RENDER_TIME_RANGE.toSeconds());
        finishBurst("burst 1", false, burstStart, war.length, merged);

        // Burst 2: the flash sale, all prices in one batch (and two corrections), with one sendBatch call.
        story("");
        story("Burst 2: flash sale, everything 20%% off, then marketing corrects two prices; sent with ONE sendBatch");
        List<OutgoingMessage> batch = new ArrayList<>();
        burstStart = System.currentTimeMillis();
        for (PriceBoard.Item item : prices.items()) {
            long sale = prices.price(item.id()) * 80 / 100;
            prices.changePrice(item.id(), sale);
            batch.add(OutgoingMessage.rangeMerge(RENDER_TOPIC, new RenderRequest(item.id()), RENDER_TIME_RANGE));
            story("  -> item %d %-16s sale price %s", item.id(), item.name(), PriceBoard.format(sale));
        }
        for (long[] correction : new long[][] {{1002, 89_00}, {1004, 199_00}}) {
            prices.changePrice(correction[0], correction[1]);
            batch.add(OutgoingMessage.rangeMerge(RENDER_TOPIC, new RenderRequest(correction[0]), RENDER_TIME_RANGE));
            story("  -> item %d %-16s corrected to %s", correction[0], prices.item(correction[0]).name(),
                    PriceBoard.format(correction[1]));
        }
        BatchResult result = rmq.sendBatch(batch);
        story("  burst 2 sent: sendBatch of %d render requests -> %d new, %d merged", result.sent(), result.added(),
                result.merged());
        finishBurst("burst 2", true, burstStart, result.sent(), result.merged());
    }

    private void finishBurst(String name, boolean batched, long burstStart, int sent, long merged)
            throws InterruptedException {
        Set<Long> items = prices.items().stream().map(PriceBoard.Item::id).collect(Collectors.toCollection(LinkedHashSet::new));
        await(name + ": every item rendered", () -> rendersSince(burstStart).keySet().containsAll(items)
                && queueEmpty(RENDER_TOPIC));
        Map<Long, Integer> perItem = new LinkedHashMap<>();
        Map<Long, Long> rendered = new LinkedHashMap<>();
        Map<Long, Long> latest = new LinkedHashMap<>();
        for (long item : items) {
            List<PictureRenderer.Render> renders = rendersSince(burstStart).getOrDefault(item, List.of());
            perItem.put(item, renders.size());
            rendered.put(item, renders.get(renders.size() - 1).priceCents());
            latest.put(item, prices.price(item));
        }
        report.addBurst(new ScenarioReport.Burst(name, batched, sent, merged, perItem, latest, rendered));
        boolean once = perItem.values().stream().allMatch(n -> n == 1);
        boolean current = rendered.equals(latest);
        story("  %s: %d requests -> %d renders (%s), every picture shows the latest price: %s", name, sent,
                perItem.values().stream().mapToInt(Integer::intValue).sum(),
                once ? "one per item" : "per item " + perItem, current ? "yes" : "NO " + rendered + " vs " + latest);
        check(once, name + ": expected one render per item, got " + perItem);
        check(current, name + ": rendered prices " + rendered + " differ from the latest prices " + latest);
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
        header("Story 2/3 - PRIORITY, topic '" + MERCHANT_TOPIC + "'",
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
                rmq.stats(MERCHANT_TOPIC).waiting());

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
        header("Story 3/3 - FIXED_TIME, topic '" + ORDER_TOPIC + "'",
                "Every order must be paid by its deadline. When it is placed, a close is scheduled for exactly that time;",
                "at the deadline, orders that were paid are left alone and unpaid ones are closed. A customer who gets",
                "more time has the close re-sent with the new time: it merges and moves.");
        long now = System.currentTimeMillis();
        Object[][] placed = {{"A-1001", 24_90L, 2000L}, {"A-1002", 59_00L, 2300L}, {"A-1003", 12_50L, 2600L},
                {"A-1004", 89_99L, 2900L}, {"A-1005", 45_00L, 3200L}, {"A-1006", 19_90L, 3500L}};
        for (Object[] o : placed) {
            String id = (String) o[0];
            long deadline = now + (Long) o[2];
            orders.place(id, (Long) o[1], deadline);
            SendResult sent = rmq.sendFixedTime(ORDER_TOPIC, new CloseOrder(id), Instant.ofEpochMilli(deadline));
            story("  -> order %s over %6s placed, pay by %s: close scheduled (slot %d)", id,
                    PriceBoard.format((Long) o[1]), clock(deadline), sent.slot());
        }
        Thread.sleep(1000);
        for (String id : List.of("A-1002", "A-1004")) {
            orders.pay(id);
            story("  $  order %s paid", id);
        }
        OrderBook.Order extended = orders.extendDeadline("A-1006", orders.get("A-1006").deadline() + 1000);
        SendResult moved = rmq.sendFixedTime(ORDER_TOPIC, new CloseOrder("A-1006"), Instant.ofEpochMilli(extended.deadline()));
        report.orderExtensionMerged(moved.merged());
        story("  -> order A-1006 gets one more second, pay by %s: close re-sent -> %s", clock(extended.deadline()),
                moved.merged() ? "MERGED, its time moved" : "queued (new)");
        check(moved.merged(), "the moved close of A-1006 did not merge into the waiting one");
        Thread.sleep(500);
        orders.pay("A-1005");
        story("  $  order A-1005 paid");

        await("every order's deadline handled", () -> orders.orders().stream()
                .allMatch(o -> o.status() == OrderBook.Status.CLOSED || o.checkedAt() > 0) && queueEmpty(ORDER_TOPIC));
        List<String> lateness = new ArrayList<>();
        for (OrderBook.Order order : orders.orders()) {
            switch (order.status()) {
                case CLOSED -> {
                    lateness.add(order.id() + " +" + (order.closedAt() - order.deadline()) + " ms");
                    check(order.closedAt() >= order.deadline(), "order " + order.id() + " was closed "
                            + (order.deadline() - order.closedAt()) + " ms BEFORE its deadline");
                }
                case PAID -> check(order.checkedAt() >= order.deadline(), "paid order " + order.id()
                        + " was checked before its deadline");
                case UNPAID -> check(false, "order " + order.id() + " is still open after its deadline");
            }
        }
        story("  closed at their deadlines: %s; paid orders skipped: %s", String.join(", ", lateness),
                orders.orders().stream().filter(o -> o.status() == OrderBook.Status.PAID).map(OrderBook.Order::id)
                        .collect(Collectors.joining(", ")));
    }

    // ------------------------------------------------------------------ end

    private void awaitEmptyQueues() throws InterruptedException {
        await("all queues empty", () -> queueEmpty(RENDER_TOPIC) && queueEmpty(MERCHANT_TOPIC) && queueEmpty(ORDER_TOPIC));
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
        story("FIXED_TIME   %-15s %d orders: %d paid in time (skipped), %d closed at their deadline", ORDER_TOPIC,
                all.size(), all.stream().filter(o -> o.status() == OrderBook.Status.PAID).count(),
                all.stream().filter(o -> o.status() == OrderBook.Status.CLOSED).count());
        for (String topic : List.of(RENDER_TOPIC, MERCHANT_TOPIC, ORDER_TOPIC)) {
            TopicStats stats = rmq.stats(topic);
            story("queue %-15s waiting=%d in-flight=%d dead=%d", topic, stats.waiting(), stats.inFlight(), stats.dead());
        }
        if (report.succeeded()) {
            story("All three stories ended as expected, in %.1f s.", report.elapsedMillis() / 1000.0);
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
        TopicStats stats = rmq.stats(topic);
        return stats.waiting() == 0 && stats.inFlight() == 0;
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

    /** A step did not finish within {@code rmq.samples.wait-timeout}; already recorded as a problem. */
    private static final class StoryTimeout extends RuntimeException {
        StoryTimeout() {
            super(null, null, false, false);
        }
    }
}
