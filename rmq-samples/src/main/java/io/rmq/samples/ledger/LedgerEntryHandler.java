package io.rmq.samples.ledger;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Component;

/**
 * Story 4, FIXED_TIME consumed ORDERLY: applies ledger entries to their accounts. Entries of one account share a slot
 * (sent with the account as slot basis), and the listener is ORDERLY: each slot is owned by one instance at a time and
 * run by one of its four threads at a time, one message after another in due-time order. So an account's entries are
 * applied in sequence, many accounts in parallel, without any lock.
 * <p>
 * The core-banking call can fail (see {@link #failOnce(String, int)}): the handler throws, and the entry's slot is
 * suspended until its retry after the backoff (200 ms, no jitter); no later entry of that slot overtakes it. The
 * handler also counts two threads ever running one slot at once, which ORDERLY rules out.
 */
@Component
public class LedgerEntryHandler {

    /** The listener's container id. */
    public static final String LISTENER_ID = "ledger";

    private static final Logger log = LoggerFactory.getLogger(LedgerEntryHandler.class);

    /** Simulated cost of applying one entry. */
    private static final long WORK_MILLIS = 3;

    /**
     * One failed attempt.
     *
     * @param appliedBefore how many entries the ledger had applied when it failed (its position in
     *                      {@link Ledger#applied()})
     */
    public record FailedAttempt(String accountId, int sequence, int slot, int attempt, String error, long failedAt,
            int appliedBefore) {
    }

    private final Ledger ledger;
    private final Set<String> failOnce = ConcurrentHashMap.newKeySet();
    private final List<FailedAttempt> failures = new ArrayList<>();
    private final Map<String, AtomicInteger> runningPerAccount = new ConcurrentHashMap<>();
    private final AtomicInteger accountOverlaps = new AtomicInteger();

    public LedgerEntryHandler(Ledger ledger) {
        this.ledger = ledger;
    }

    @RmqListener(topic = "ledger", id = LISTENER_ID, mode = "ORDERLY", concurrency = "4",
            backoffInitial = "200ms", backoffJitter = "0")
    public void apply(RmqMessage<LedgerEntry> message) throws InterruptedException {
        LedgerEntry entry = message.payload();
        AtomicInteger running = runningPerAccount.computeIfAbsent(entry.accountId(), a -> new AtomicInteger());
        if (running.incrementAndGet() > 1) {
            accountOverlaps.incrementAndGet();
            log.warn("two threads run account {} at once (entry #{})", entry.accountId(), entry.sequence());
        }
        try {
            if (failOnce.remove(key(entry.accountId(), entry.sequence()))) {
                String error = "core banking timed out";
                synchronized (this) {
                    failures.add(new FailedAttempt(entry.accountId(), entry.sequence(), message.slot(),
                            message.attempt(), error, System.currentTimeMillis(), ledger.appliedCount()));
                }
                log.info("  <- {} #{} {}: attempt {} FAILED ({}); the account waits for its retry, the others go on",
                        entry.accountId(), entry.sequence(), Ledger.signed(entry.amountCents()), message.attempt(),
                        error);
                throw new IllegalStateException(error);
            }
            Thread.sleep(WORK_MILLIS);
            switch (ledger.apply(entry, message.slot(), message.attempt())) {
                case APPLIED -> {
                    if (message.attempt() > 1) {
                        log.info("  <- {} #{} {}: applied at attempt {}, balance {}; the account's later entries follow",
                                entry.accountId(), entry.sequence(), Ledger.signed(entry.amountCents()),
                                message.attempt(), Ledger.signed(ledger.balance(entry.accountId())));
                    }
                }
                case OUT_OF_ORDER -> log.warn("{} #{} applied OUT OF SEQUENCE", entry.accountId(), entry.sequence());
                case DUPLICATE -> log.info("  <- {} #{} applied already: skipped", entry.accountId(), entry.sequence());
            }
        }
        finally {
            running.decrementAndGet();
        }
    }

    /** Makes the first attempt to apply this entry fail (a core-banking timeout). */
    public void failOnce(String accountId, int sequence) {
        failOnce.add(key(accountId, sequence));
    }

    public synchronized List<FailedAttempt> failures() {
        return List.copyOf(failures);
    }

    /** How often a handler started on an account another thread was running (ORDERLY, one group = one account: never). */
    public int accountOverlaps() {
        return accountOverlaps.get();
    }

    private static String key(String accountId, int sequence) {
        return accountId + "#" + sequence;
    }
}
