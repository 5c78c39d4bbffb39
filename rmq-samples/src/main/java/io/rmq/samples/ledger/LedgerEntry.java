package io.rmq.samples.ledger;

/**
 * "Apply this entry to the account": the body of a {@code ledger} message. It is sent with the account as slot basis,
 * so all entries of an account share a slot, and due in sequence order. Sequence and account make every body distinct:
 * entries never merge.
 *
 * @param accountId   the account
 * @param sequence    the entry's number within the account, 1, 2, 3, ...; entry n+1 must be applied after n
 * @param amountCents positive: deposit; negative: withdrawal
 */
public record LedgerEntry(String accountId, int sequence, long amountCents) {
}
