package io.rmq.samples;

import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.rmq.admin.MessageRef;
import io.rmq.admin.TopicStats;
import io.rmq.core.internal.SlotRouter;
import io.rmq.samples.ledger.Ledger;
import io.rmq.samples.ledger.Ledger.Applied;
import io.rmq.samples.ledger.LedgerEntryHandler;
import io.rmq.samples.merchant.MerchantTaskWorker;
import io.rmq.samples.merchant.MerchantTaskWorker.HandledTask;
import io.rmq.samples.merchant.MerchantTier;
import io.rmq.samples.order.CloseOrder;
import io.rmq.samples.order.CustomerNotifier;
import io.rmq.samples.order.OrderBook;
import io.rmq.samples.order.OrderBook.Order;
import io.rmq.samples.order.OrderPlacement;
import io.rmq.samples.order.OrderStats;
import io.rmq.samples.order.OrderTimeoutHandler;
import io.rmq.samples.redis.EmbeddedRedisEnvironmentPostProcessor;
import io.rmq.samples.render.PictureRenderer;
import io.rmq.samples.render.PictureRenderer.FailedAttempt;
import io.rmq.samples.render.PictureRenderer.Render;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.schedule.RmqSchedules;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the whole sample application against the test Redis (the driver plays the scenario while the context starts,
 * as {@code CommandLineRunner}) and checks each story's outcome. Subclasses choose the topology.
 */
@SpringBootTest(classes = {RmqSamplesApplication.class, SampleScenarioTestSupport.ScenarioFailures.class},
        properties = {"samples.exit-when-done=false", "samples.live-traffic=false"})
@DirtiesContext
abstract class SampleScenarioTestSupport {

    private static final List<Long> ITEMS = List.of(1001L, 1002L, 1003L, 1004L);

    @Autowired
    ScenarioReport report;

    @Autowired
    io.rmq.samples.quote.QuoteDesk quoteDesk;

    @Autowired
    io.rmq.samples.quote.ReminderMailer reminderMailer;

    @Autowired
    PictureRenderer renderer;

    @Autowired
    MerchantTaskWorker merchantWorker;

    @Autowired
    OrderBook orders;

    @Autowired
    CustomerNotifier notifier;

    @Autowired
    OrderTimeoutHandler timeoutHandler;

    @Autowired
    OrderStats orderStats;

    @Autowired
    RmqSchedules schedules;

    /** The sample's H2 database, read directly (not through the sample's own classes). */
    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    Ledger ledger;

    @Autowired
    LedgerEntryHandler ledgerHandler;

    @Autowired
    RmqTemplate rmq;

    @Autowired
    Environment environment;

    /** The two failures the scenario causes on purpose (a render, a ledger entry), logged while the context starts. */
    @Autowired
    LogCapture scenarioFailures;

    /**
     * Captures the scenario's failures from before the driver runs (after Spring Boot has set logging up, which
     * would drop a capture opened earlier) until the context closes.
     */
    @Configuration(proxyBeanMethods = false)
    static class ScenarioFailures {

        @Bean
        LogCapture scenarioFailures() {
            return LogCapture.rmq().expecting("picture CDN upload timed out", "core banking timed out");
        }
    }

    @Test
    void theScenarioFinishesWithoutProblems() {
        assertThat(report.finished()).isTrue();
        assertThat(report.problems()).isEmpty();
        assertThat(report.succeeded()).isTrue();
        assertThat(scenarioFailures.warnings()).as("the failures the scenario causes on purpose").hasSize(2);
        assertThat(SampleDriver.TOPICS).containsExactly(SampleDriver.RENDER_TOPIC, SampleDriver.MERCHANT_TOPIC,
                SampleDriver.ORDER_TOPIC, SampleDriver.LEDGER_TOPIC, SampleDriver.QUOTE_TOPIC,
                SampleDriver.REMINDER_TOPIC);
        for (String topic : SampleDriver.TOPICS) {
            TopicStats stats = rmq.admin().stats(topic);
            assertThat(stats.waiting()).as(topic + " waiting").isZero();
            assertThat(stats.inFlight()).as(topic + " in flight").isZero();
            assertThat(stats.retrying()).as(topic + " retrying").isZero();
            assertThat(stats.dead()).as(topic + " dead").isZero();
        }
    }

    @Test
    void quotesComeBackAnExpiredRequestIsNeverPricedAndRemindersGoOutOncePerWindow() {
        assertThat(report.quotesAnswered()).isEqualTo(3);
        assertThat(report.quoteFailureBack()).isTrue();
        assertThat(report.quoteExpired()).isTrue();
        assertThat(quoteDesk.priced()).as("the requests the desk priced, 1003 not among them")
                .containsExactly(1001L, 1002L, 1004L, 9999L);
        assertThat(report.remindersAsked()).isEqualTo(SampleDriver.REMINDER_ROUNDS * SampleDriver.REMINDED_ORDERS.size());
        assertThat(report.remindersDeduplicated()).isEqualTo((SampleDriver.REMINDER_ROUNDS - 1)
                * SampleDriver.REMINDED_ORDERS.size());
        assertThat(reminderMailer.mailed()).containsExactlyInAnyOrderElementsOf(SampleDriver.REMINDED_ORDERS);
    }

    @Test
    void theConfiguredRedisIsUsedAndNoEmbeddedOneIsStarted() {
        assertThat(EmbeddedRedisEnvironmentPostProcessor.embeddedRedisPort(environment)).isEmpty();
        assertThat(environment.getProperty("spring.data.redis.host") != null
                || environment.getProperty("spring.data.redis.cluster.nodes") != null).isTrue();
    }

    @Test
    void rangeMergeRendersEachItemOncePerRequestThatFoundNoneWaitingAtItsLatestPrice() {
        List<ScenarioReport.Burst> bursts = report.bursts();
        assertThat(bursts).extracting(ScenarioReport.Burst::name).containsExactly("burst 1", "burst 2");
        assertThat(bursts).extracting(ScenarioReport.Burst::batched).containsExactly(false, true);
        Map<Long, Long> expectedRenders = new HashMap<>();
        for (ScenarioReport.Burst burst : bursts) {
            // one render per request that found none of its item waiting: the others merged into it. On an idle
            // machine burst 1's 12 single sends fit in the 2 s time range (one new request per item); a machine too
            // busy to send them in 2 s gets more new requests, and exactly as many renders
            assertThat(burst.newRequestsPerItem()).as(burst.name() + " new requests per item").containsOnlyKeys(ITEMS)
                    .allSatisfy((item, requests) -> assertThat(requests).isPositive());
            assertThat(burst.rendersPerItem()).as(burst.name() + " renders per item")
                    .isEqualTo(burst.newRequestsPerItem());
            int newRequests = burst.newRequestsPerItem().values().stream().mapToInt(Integer::intValue).sum();
            assertThat(burst.merged()).as(burst.name() + " merged").isEqualTo(burst.requestsSent() - newRequests);
            assertThat(burst.renderedPrices()).as(burst.name() + " rendered prices").isEqualTo(burst.latestPrices());
            // the price and the source header come with the message: merged by the item's id, the latest send's
            assertThat(burst.renderedSources()).as(burst.name() + " rendered sources").isEqualTo(burst.latestSources());
            burst.newRequestsPerItem().forEach((item, requests) -> expectedRenders.merge(item, (long) requests, Long::sum));
        }
        assertThat(bursts.get(0).requestsSent()).isEqualTo(12);
        assertThat(bursts.get(0).merged()).isLessThanOrEqualTo(8);
        // one sendBatch merges within itself, whatever the load: one render per item
        assertThat(bursts.get(1).requestsSent()).isEqualTo(6);
        assertThat(bursts.get(1).merged()).isEqualTo(2);
        assertThat(bursts.get(1).rendersPerItem()).allSatisfy((item, renders) -> assertThat(renders).isEqualTo(1));
        assertThat(bursts.get(1).renderedSources()).isEqualTo(Map.of(1001L, "flash-sale", 1002L, "correction",
                1003L, "flash-sale", 1004L, "correction"));

        // independently of the driver's bookkeeping of renders: the renderer's own list
        Map<Long, Long> rendersPerItem = renderer.renders().stream()
                .collect(Collectors.groupingBy(Render::itemId, Collectors.counting()));
        assertThat(rendersPerItem).isEqualTo(expectedRenders);
    }

    @Test
    void aFailedRenderIsRetriedAfterItsBackoff() {
        List<FailedAttempt> failures = renderer.failures();
        assertThat(failures).hasSize(1);
        FailedAttempt failure = failures.get(0);
        assertThat(failure.itemId()).isEqualTo(1003L);
        assertThat(failure.attempt()).isEqualTo(1);
        assertThat(scenarioFailures.warnings()).filteredOn(line -> line.contains("picture-render/")).singleElement()
                .asString().contains("attempt 1", "retrying after its backoff", "picture CDN upload timed out");
        Render retried = renderer.renders().stream().filter(r -> r.itemId() == 1003L).findFirst().orElseThrow();
        assertThat(retried.attempt()).isEqualTo(2);
        // backoff 500 ms, no jitter (allow for clock granularity)
        assertThat(retried.renderedAt() - failure.failedAt()).isGreaterThanOrEqualTo(450);
        assertThat(renderer.renders()).filteredOn(r -> r.itemId() != 1003L)
                .allSatisfy(r -> assertThat(r.attempt()).isEqualTo(1));
    }

    @Test
    void priorityServesKeyAccountsFirstFromTheBacklog() {
        List<HandledTask> handled = merchantWorker.handled();
        assertThat(handled).hasSize(report.backlogTasks()).hasSize(9);
        assertThat(handled).extracting(HandledTask::priority).isSortedAccordingTo(Comparator.reverseOrder());
        assertThat(handled).extracting(HandledTask::tier).containsExactly(MerchantTier.KA, MerchantTier.KA,
                MerchantTier.KA, MerchantTier.KA, MerchantTier.REGULAR, MerchantTier.REGULAR, MerchantTier.LONG_TAIL,
                MerchantTier.LONG_TAIL, MerchantTier.LONG_TAIL);
        // Corner Books was upgraded while waiting: its re-send merged and took the KA priority
        assertThat(report.upgradeMerged()).isTrue();
        assertThat(handled.subList(0, 4)).extracting(HandledTask::merchant)
                .containsExactlyInAnyOrder("Acme Electronics", "Acme Electronics", "MegaMart", "Corner Books");
        assertThat(handled).extracting(HandledTask::merchant).containsOnlyOnce("Corner Books");
    }

    @Test
    void fixedTimeClosesUnpaidOrdersAtTheirDeadlineAndCancelsTheClosesOfPaidOnes() {
        Map<String, Order> byId = orders.orders().stream().collect(Collectors.toMap(Order::id, o -> o));
        assertThat(byId).containsOnlyKeys("A-1001", "A-1002", "A-1003", "A-1004", "A-1005", "A-1006");
        for (String id : List.of("A-1001", "A-1003", "A-1006")) {
            Order order = byId.get(id);
            assertThat(order.status()).as(id).isEqualTo(OrderBook.Status.CLOSED);
            assertThat(order.closedAt()).as(id + " closed not before its deadline").isGreaterThanOrEqualTo(order.deadline());
            // lateness is measured by the benchmarks (W3); here only that the close came (generous for a loaded machine)
            assertThat(order.closedAt() - order.deadline()).as(id + " lateness (ms)").isLessThan(10_000);
        }
        for (String id : List.of("A-1002", "A-1004", "A-1005")) {
            Order order = byId.get(id);
            assertThat(order.status()).as(id).isEqualTo(OrderBook.Status.PAID);
            assertThat(order.closedAt()).as(id + " never closed").isZero();
            assertThat(order.paidAt()).as(id + " paid before its deadline").isLessThan(order.deadline());
            // paid a second or more before the deadline: its close was still waiting, and the cancel removed it
            assertThat(report.cancelledCloses().get(id).cancelled()).as(id + " close cancelled").isTrue();
            assertThat(order.checkedAt()).as(id + " never reached the deadline handler").isZero();
        }
        // A-1006 got one more second: its close merged and moved to the new deadline, 2.5 s after A-1001's (not 1.5 s)
        assertThat(report.orderExtensionMerged()).isTrue();
        assertThat(byId.get("A-1006").deadline() - byId.get("A-1001").deadline()).isEqualTo(2_500);
    }

    @Test
    void eachOrderIsPlacedInATransactionThatHoldsItsCloseAndTheRefusedOneLeavesNoRowAndNoClose() {
        List<ScenarioReport.Placement> placements = report.placements();
        assertThat(placements).extracting(ScenarioReport.Placement::orderId).containsExactly("A-1001", "A-1002",
                "A-1003", "A-1004", "A-1005", "A-1006", SampleDriver.REFUSED_ORDER);
        // committed: the send said "held", and right after the transaction the close waited in Redis, the row in H2
        assertThat(placements.subList(0, 6)).allSatisfy(p -> {
            assertThat(p.committed()).as(p.orderId()).isTrue();
            assertThat(p.closeHeld()).as(p.orderId() + " close held by the transaction").isTrue();
            assertThat(p.closeWaiting()).as(p.orderId() + " close in Redis after the commit").isTrue();
            assertThat(p.rowPresent()).as(p.orderId() + " row after the commit").isTrue();
        });
        // refused after its close was sent: rolled back, nothing in Redis nor in the database right after it
        ScenarioReport.Placement refused = placements.get(6);
        assertThat(refused.committed()).isFalse();
        assertThat(refused.closeWaiting()).as("refused order's close in Redis after the rollback").isFalse();
        assertThat(refused.rowPresent()).as("refused order's row after the rollback").isFalse();

        // and now, after its deadline and an empty topic: the close never reached the deadline handler (which
        // handled the other orders' closes), no row, and the print it wanted is with A-1006
        assertThat(timeoutHandler.handled()).contains("A-1001", "A-1003", "A-1006")
                .doesNotContain(SampleDriver.REFUSED_ORDER);
        assertThat(report.refusedCloseDelivered()).isFalse();
        assertThat(rmq.admin().contains(MessageRef.body(SampleDriver.ORDER_TOPIC,
                new CloseOrder(SampleDriver.REFUSED_ORDER)))).isFalse();
        assertThat(jdbc.queryForObject("select count(*) from orders where id = ?", Integer.class,
                SampleDriver.REFUSED_ORDER)).isZero();
        assertThat(jdbc.queryForList("select id from orders where item = ?", String.class, SampleDriver.SIGNED_PRINT))
                .containsExactly("A-1006");
        assertThat(jdbc.queryForObject("select available from stock where item = ?", Integer.class,
                SampleDriver.SIGNED_PRINT)).isZero();
        // the committed orders' rows hold what the deadline handler and the payments did
        Map<String, String> statuses = new HashMap<>();
        jdbc.query("select id, status from orders", row -> {
            statuses.put(row.getString(1), row.getString(2));
        });
        assertThat(statuses).isEqualTo(Map.of("A-1001", "CLOSED", "A-1002", "PAID", "A-1003", "CLOSED", "A-1004",
                "PAID", "A-1005", "PAID", "A-1006", "CLOSED"));
        assertThat(OrderPlacement.TOPIC).isEqualTo(SampleDriver.ORDER_TOPIC);
    }

    @Test
    void theOrderStatsScheduleFiredDuringTheScenarioEachFiringTimeOnce() {
        List<OrderStats.Firing> firings = orderStats.firings();
        // a 2 s rate over a scenario of 10 s or more: it fired several times (at least once, on a very busy machine)
        assertThat(report.scheduleFirings()).isPositive().isEqualTo(report.distinctFiringTimes());
        assertThat(firings).hasSizeGreaterThanOrEqualTo(report.scheduleFirings());
        assertThat(firings).extracting(OrderStats.Firing::firing).doesNotHaveDuplicates()
                .isSortedAccordingTo(Comparator.naturalOrder())
                // firing times are multiples of the rate since the epoch
                .allSatisfy(firing -> assertThat(firing.toEpochMilli() % 2_000).as(firing.toString()).isZero());
        // run when due, by Redis's clock (the test's Redis runs on this machine, on the same clock)
        assertThat(firings).allSatisfy(f -> assertThat(f.ranAt()).as(f.toString())
                .isGreaterThanOrEqualTo(f.firing().toEpochMilli()));
        // the counts it read: committed orders only, never the refused one (at most the six placed)
        assertThat(firings).allSatisfy(f -> assertThat(f.counts().values().stream().mapToLong(Long::longValue).sum())
                .as(f.toString()).isBetween(0L, 6L));

        // the schedule's state in Redis, as the endpoint shows it
        RmqSchedules.ScheduleView view = schedules.get(OrderStats.SCHEDULE);
        assertThat(view).isNotNull();
        assertThat(view.lastRun()).isNotNull();
        assertThat(view.outcome()).isEqualTo("success");
        assertThat(view.conflict()).isNull();
    }

    @Test
    void eachClosedOrderIsRepliedToOrderClosedWhereABatchListenerTellsItsCustomer() {
        // @SendTo: the deadline handler's return value for each CLOSED order went to order-closed, nothing for the
        // others; the batch listener there got it in a list of at most batchSize
        assertThat(notifier.notified()).containsExactlyInAnyOrder("A-1001", "A-1003", "A-1006");
        assertThat(notifier.mailOuts()).isNotEmpty()
                .allSatisfy(mailOut -> assertThat(mailOut).isNotEmpty().hasSizeLessThanOrEqualTo(50));
    }

    @Test
    void orderlyAppliesEveryAccountsLedgerEntriesInSequence() {
        ScenarioReport.LedgerRun run = report.ledgerRun();
        assertThat(run).isNotNull();
        assertThat(run.entriesSent()).isEqualTo(200);
        assertThat(run.merged()).isZero();
        List<Applied> applied = ledger.applied();
        assertThat(applied).hasSize(run.entriesSent());
        assertThat(ledger.outOfOrder()).isEmpty();
        assertThat(ledger.duplicates()).isZero();
        assertThat(ledgerHandler.accountOverlaps()).isZero();

        // independently of the ledger's own check: each account's entries were applied as 1, 2, ..., 25
        Map<String, List<Integer>> sequences = applied.stream().collect(Collectors.groupingBy(Applied::accountId,
                LinkedHashMap::new, Collectors.mapping(Applied::sequence, Collectors.toList())));
        assertThat(sequences).containsOnlyKeys(SampleDriver.LEDGER_ACCOUNTS);
        List<Integer> oneToTwentyFive = IntStream.rangeClosed(1, 25).boxed().toList();
        sequences.forEach((account, seqs) -> assertThat(seqs).as(account).isEqualTo(oneToTwentyFive));

        // final balances as computed from what was sent, and each the sum of its applied amounts
        assertThat(ledger.balances()).isEqualTo(run.expectedBalances());
        Map<String, Long> sums = applied.stream().collect(Collectors.groupingBy(Applied::accountId,
                Collectors.summingLong(Applied::amountCents)));
        assertThat(sums).isEqualTo(run.expectedBalances());
        // sent in sequence: no balance ever went below zero
        assertThat(applied).allSatisfy(a -> assertThat(a.balanceAfter()).as(a.toString()).isNotNegative());

        // slotBasis = account: all of an account's entries came from one slot, CRC32(account) & 15
        for (String account : SampleDriver.LEDGER_ACCOUNTS) {
            int slot = SlotRouter.slot(account.getBytes(StandardCharsets.UTF_8), 16);
            assertThat(run.slotByAccount()).containsEntry(account, slot);
            assertThat(applied).filteredOn(a -> a.accountId().equals(account)).extracting(Applied::slot)
                    .containsOnly(slot);
        }
        // accounts in parallel: several handler threads took part (the listener has 4)
        assertThat(applied).extracting(Applied::thread).allMatch(t -> t.startsWith(LedgerEntryHandler.LISTENER_ID
                + "-orderly-"));
        assertThat(applied.stream().map(Applied::thread).distinct().count()).isBetween(2L, 4L);
    }

    @Test
    void aFailedLedgerEntryHoldsBackItsAccountUntilItsRetry() {
        List<LedgerEntryHandler.FailedAttempt> failures = ledgerHandler.failures();
        assertThat(failures).hasSize(1);
        LedgerEntryHandler.FailedAttempt failure = failures.get(0);
        assertThat(scenarioFailures.warnings()).filteredOn(line -> line.contains("ledger/")).singleElement()
                .asString().contains("attempt 1", "retrying after its backoff", "core banking timed out");
        assertThat(failure.accountId()).isEqualTo(SampleDriver.FAILING_ACCOUNT);
        assertThat(failure.sequence()).isEqualTo(SampleDriver.FAILING_SEQUENCE);
        assertThat(failure.attempt()).isEqualTo(1);

        List<Applied> applied = ledger.applied();
        int retryAt = IntStream.range(0, applied.size()).filter(i -> applied.get(i).accountId().equals(failure.accountId())
                && applied.get(i).sequence() == failure.sequence()).findFirst().orElseThrow();
        Applied retry = applied.get(retryAt);
        assertThat(retry.attempt()).isEqualTo(2);
        // backoff 200 ms, no jitter (allow for clock granularity)
        assertThat(retry.appliedAt() - failure.failedAt()).isGreaterThanOrEqualTo(150);
        // nothing of its account overtook it; AC-1016, which shares its slot, is another group and may go on meanwhile
        assertThat(applied.subList(failure.appliedBefore(), retryAt))
                .noneMatch(a -> a.accountId().equals(failure.accountId()));
        assertThat(applied.subList(0, retryAt)).noneMatch(a -> a.accountId().equals(failure.accountId())
                && a.sequence() > failure.sequence());
        assertThat(applied).filteredOn(a -> a != retry).allSatisfy(a -> assertThat(a.attempt()).isEqualTo(1));
        assertThat(report.ledgerRun().slotByAccount().get("AC-1016")).isEqualTo(failure.slot());
    }
}
