package io.rmq.tour;

/** A ledger entry of the tour's ordered consumption: the amount is applied to the account. */
public record LedgerEntry(String accountId, long sequence, long amountCents) {
}
