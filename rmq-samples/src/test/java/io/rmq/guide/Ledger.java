package io.rmq.guide;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;

/** The ordering guide's opening example: an ORDERLY listener and the send that gives an account one slot. */
public class Ledger {

    public record LedgerEntry(String accountId, long amountCents) {
    }

    final Accounts accounts = new Accounts();

    private final RmqTemplate template;

    public Ledger(RmqTemplate template) {
        this.template = template;
    }

    // tag::ordering-listener[]
    @RmqListener(topic = "ledger", type = "FIXED_TIME", mode = "ORDERLY", concurrency = "4")
    void apply(LedgerEntry entry) { accounts.apply(entry); }          // no lock: one thread per account, in order
    // end::ordering-listener[]

    void record(LedgerEntry entry) {
        // tag::ordering-send[]
        template.send(OutgoingMessage.fixedTime("ledger", entry, Instant.now()).withGroup(entry.accountId()));
        // end::ordering-send[]
    }

    /** Stands for the account balances: records the entries applied. */
    static class Accounts {
        final List<LedgerEntry> applied = new CopyOnWriteArrayList<>();

        void apply(LedgerEntry entry) {
            applied.add(entry);
        }
    }
}
