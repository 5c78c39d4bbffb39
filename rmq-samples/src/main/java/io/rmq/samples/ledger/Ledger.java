package io.rmq.samples.ledger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.rmq.samples.render.PriceBoard;

import org.springframework.stereotype.Component;

/**
 * Account balances (in cents), in memory; stands in for the core-banking database. It applies ledger entries and
 * checks, for every account, that they come in sequence: entry n+1 only after entry n. An entry out of sequence is
 * still applied (no money is lost) but recorded; one applied already (a redelivery) is skipped.
 */
@Component
public class Ledger {

    /** What became of an entry. */
    public enum Outcome {
        /** The account's next entry: applied. */
        APPLIED,
        /** Applied, but not the account's next entry: an earlier one is missing or came later. */
        OUT_OF_ORDER,
        /** Applied already; skipped. */
        DUPLICATE
    }

    /**
     * One applied entry, in the order the ledger applied them.
     *
     * @param balanceAfter the account's balance after the entry
     * @param slot         the slot it was delivered from
     * @param thread       the handler thread that applied it
     * @param attempt      the delivery attempt (2 after one failure)
     * @param appliedAt    epoch ms
     */
    public record Applied(String accountId, int sequence, long amountCents, long balanceAfter, int slot, String thread,
            int attempt, long appliedAt) {
    }

    /** An entry applied out of sequence: {@code expected} was the account's next one. */
    public record OutOfOrder(String accountId, int expected, int got) {
    }

    private final Map<String, Long> balances = new TreeMap<>();
    private final Map<String, Integer> lastSequence = new HashMap<>();
    private final Map<String, Set<Integer>> appliedSequences = new HashMap<>();
    private final List<Applied> applied = new ArrayList<>();
    private final List<OutOfOrder> outOfOrder = new ArrayList<>();
    private int duplicates;

    public synchronized Outcome apply(LedgerEntry entry, int slot, int attempt) {
        String account = entry.accountId();
        if (!appliedSequences.computeIfAbsent(account, a -> new HashSet<>()).add(entry.sequence())) {
            duplicates++;
            return Outcome.DUPLICATE;
        }
        int expected = lastSequence.getOrDefault(account, 0) + 1;
        lastSequence.put(account, entry.sequence());
        long balance = balances.merge(account, entry.amountCents(), Long::sum);
        applied.add(new Applied(account, entry.sequence(), entry.amountCents(), balance, slot,
                Thread.currentThread().getName(), attempt, System.currentTimeMillis()));
        if (entry.sequence() != expected) {
            outOfOrder.add(new OutOfOrder(account, expected, entry.sequence()));
            return Outcome.OUT_OF_ORDER;
        }
        return Outcome.APPLIED;
    }

    /** Balances by account. */
    public synchronized Map<String, Long> balances() {
        return Map.copyOf(balances);
    }

    public synchronized long balance(String accountId) {
        return balances.getOrDefault(accountId, 0L);
    }

    /** Every applied entry, in the order applied. */
    public synchronized List<Applied> applied() {
        return List.copyOf(applied);
    }

    public synchronized int appliedCount() {
        return applied.size();
    }

    public synchronized List<OutOfOrder> outOfOrder() {
        return List.copyOf(outOfOrder);
    }

    public synchronized int duplicates() {
        return duplicates;
    }

    /** An amount with its sign, e.g. {@code +120.00}, {@code -35.50}. */
    public static String signed(long cents) {
        return (cents < 0 ? "-" : "+") + PriceBoard.format(Math.abs(cents));
    }
}
