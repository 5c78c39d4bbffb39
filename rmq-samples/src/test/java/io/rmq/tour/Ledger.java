package io.rmq.tour;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.spring.annotation.RmqListener;

/** The tour's ORDERLY listener: each account's entries are applied one after another, in order, without a lock. */
public class Ledger {

    final Accounts accounts = new Accounts();

    // tag::tour-ordering[]
    @RmqListener(topic = "ledger", type = "FIXED_TIME", mode = "ORDERLY", concurrency = "4")
    void apply(LedgerEntry entry) {
        accounts.apply(entry);   // no lock: one thread at a time per account, in the order sent
    }
    // end::tour-ordering[]

    /** Stands for the accounts: records the sequence numbers applied to each. */
    static class Accounts {
        final Map<String, List<Long>> applied = new ConcurrentHashMap<>();

        void apply(LedgerEntry entry) {
            applied.computeIfAbsent(entry.accountId(), key -> new CopyOnWriteArrayList<>()).add(entry.sequence());
        }
    }
}
