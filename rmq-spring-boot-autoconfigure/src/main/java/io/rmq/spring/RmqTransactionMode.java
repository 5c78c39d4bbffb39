package io.rmq.spring;

/**
 * What {@link RmqTemplate} does with a send made inside a Spring transaction ({@code rmq.template.transaction-mode}).
 * Outside a transaction every send is written at once, whatever the mode.
 */
public enum RmqTransactionMode {

    /**
     * Held until the transaction commits, then written; dropped when it rolls back (its future, if any, then completes
     * with {@link RmqSendDiscardedException}). Input is checked when the send is made. The default.
     */
    AFTER_COMMIT,

    /** Written at once, as outside a transaction: a rollback does not take it back. */
    IMMEDIATE
}
