package io.rmq.samples;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.stereotype.Component;

/**
 * What the scenario sent and what came of it, filled in by {@link SampleDriver}; the summary is printed from it and
 * tests read it.
 */
@Component
public class ScenarioReport {

    /**
     * One burst of price changes (story 1).
     *
     * @param name           e.g. "burst 1"
     * @param batched        sent with one {@code sendBatch} instead of single sends
     * @param requestsSent   render requests sent (one per price change)
     * @param merged         of these, how many merged into a waiting identical request
     * @param newRequestsPerItem per item id, the requests that found none of the item's waiting (not merged)
     * @param rendersPerItem successful renders per item id during the burst
     * @param latestPrices   each item's price after the burst
     * @param renderedPrices the price each item's render showed (its last render in the burst)
     * @param latestSources  each item's last request's {@code source} header
     * @param renderedSources the {@code source} header each item's last render got
     */
    public record Burst(String name, boolean batched, int requestsSent, long merged,
            Map<Long, Integer> newRequestsPerItem, Map<Long, Integer> rendersPerItem, Map<Long, Long> latestPrices,
            Map<Long, Long> renderedPrices, Map<Long, String> latestSources, Map<Long, String> renderedSources) {
    }

    /**
     * What story 4 sent to the ledger.
     *
     * @param entriesSent      ledger entries sent
     * @param expectedBalances each account's balance after all its entries, computed from what was sent
     * @param slotByAccount    the slot each account's entries were routed to (slotBasis = account)
     * @param merged           sends that merged into a waiting message (every entry is distinct: 0)
     */
    public record LedgerRun(int entriesSent, Map<String, Long> expectedBalances, Map<String, Integer> slotByAccount,
            long merged) {
    }

    /**
     * One order placement of story 3, in its database transaction, and what was found once it had ended.
     *
     * @param orderId      the order
     * @param committed    placed (the transaction committed); false: refused, rolled back
     * @param closeHeld    the close's send said it was held by the transaction (false when refused: no result)
     * @param closeWaiting its close was waiting in Redis right after the transaction
     * @param rowPresent   its row was in the database right after the transaction
     */
    public record Placement(String orderId, boolean committed, boolean closeHeld, boolean closeWaiting,
            boolean rowPresent) {
    }

    private final List<Burst> bursts = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private int backlogTasks;
    private boolean upgradeMerged;
    private boolean orderExtensionMerged;
    private LedgerRun ledgerRun;
    private final List<Placement> placements = new ArrayList<>();
    private boolean refusedCloseDelivered;
    private int scheduleFirings;
    private int distinctFiringTimes;
    private boolean finished;
    private long elapsedMillis;

    public synchronized void addBurst(Burst burst) {
        bursts.add(burst);
    }

    public synchronized List<Burst> bursts() {
        return List.copyOf(bursts);
    }

    public synchronized void backlog(int tasks, boolean upgradeMerged) {
        this.backlogTasks = tasks;
        this.upgradeMerged = upgradeMerged;
    }

    public synchronized int backlogTasks() {
        return backlogTasks;
    }

    public synchronized boolean upgradeMerged() {
        return upgradeMerged;
    }

    private final java.util.Map<String, io.rmq.admin.CancelResult> cancelledCloses = new java.util.LinkedHashMap<>();

    /** The cancel of a paid order's close, and what it found. */
    public synchronized void closeCancelled(String orderId, io.rmq.admin.CancelResult result) {
        cancelledCloses.put(orderId, result);
    }

    public synchronized java.util.Map<String, io.rmq.admin.CancelResult> cancelledCloses() {
        return java.util.Map.copyOf(cancelledCloses);
    }

    public synchronized void orderExtensionMerged(boolean merged) {
        this.orderExtensionMerged = merged;
    }

    public synchronized boolean orderExtensionMerged() {
        return orderExtensionMerged;
    }

    public synchronized void ledgerRun(LedgerRun run) {
        this.ledgerRun = run;
    }

    /** What story 4 sent; null before it has. */
    public synchronized LedgerRun ledgerRun() {
        return ledgerRun;
    }

    private int quotesAnswered;
    private boolean quoteFailureBack;
    private boolean quoteExpired;
    private int remindersAsked;
    private int remindersDeduplicated;

    /** Story 5's requests: quotes answered right, the failure sent back, the request that expired unanswered. */
    public synchronized void quotes(int answered, boolean failureBack, boolean expired) {
        this.quotesAnswered = answered;
        this.quoteFailureBack = failureBack;
        this.quoteExpired = expired;
    }

    public synchronized int quotesAnswered() {
        return quotesAnswered;
    }

    public synchronized boolean quoteFailureBack() {
        return quoteFailureBack;
    }

    public synchronized boolean quoteExpired() {
        return quoteExpired;
    }

    /** Story 5's reminders: asked for, and dropped by the deduplication window. */
    public synchronized void reminders(int asked, int deduplicated) {
        this.remindersAsked = asked;
        this.remindersDeduplicated = deduplicated;
    }

    public synchronized int remindersAsked() {
        return remindersAsked;
    }

    public synchronized int remindersDeduplicated() {
        return remindersDeduplicated;
    }

    public synchronized void placement(Placement placement) {
        placements.add(placement);
    }

    /** Story 3's placements, in the order they were made. */
    public synchronized List<Placement> placements() {
        return List.copyOf(placements);
    }

    public synchronized void refusedCloseDelivered(boolean delivered) {
        this.refusedCloseDelivered = delivered;
    }

    /** Whether the close of the rolled-back order reached the deadline handler (it must not). */
    public synchronized boolean refusedCloseDelivered() {
        return refusedCloseDelivered;
    }

    /** The order-stats schedule's runs at the end of the scenario, and how many distinct firing times they ran for. */
    public synchronized void scheduleFirings(int runs, int distinctFiringTimes) {
        this.scheduleFirings = runs;
        this.distinctFiringTimes = distinctFiringTimes;
    }

    public synchronized int scheduleFirings() {
        return scheduleFirings;
    }

    public synchronized int distinctFiringTimes() {
        return distinctFiringTimes;
    }

    public synchronized void problem(String problem) {
        problems.add(problem);
    }

    public synchronized List<String> problems() {
        return List.copyOf(problems);
    }

    public synchronized void finish(long elapsedMillis) {
        this.finished = true;
        this.elapsedMillis = elapsedMillis;
    }

    /** True once the driver has played every story (successfully or not). */
    public synchronized boolean finished() {
        return finished;
    }

    public synchronized boolean succeeded() {
        return finished && problems.isEmpty();
    }

    public synchronized long elapsedMillis() {
        return elapsedMillis;
    }
}
