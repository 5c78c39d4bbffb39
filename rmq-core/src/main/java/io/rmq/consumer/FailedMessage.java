package io.rmq.consumer;

/**
 * A failed delivery, as an {@link RmqErrorHandler} sees it.
 *
 * @param delivery   the delivery (topic, slot, body, attempt)
 * @param payload    the body converted to the listener's payload type
 * @param error      what the handler threw
 * @param maxRetries the retries the listener allows after the first attempt
 * @param retryable  false when the error is non-retryable ({@link RmqNonRetryableException} or listed in
 *                   {@code noRetryFor}): the standard decision sends it to the dead queue at once
 */
public record FailedMessage(Delivery delivery, Object payload, Throwable error, int maxRetries, boolean retryable) {

    public String topic() {
        return delivery.topic();
    }

    /** 1 on the first delivery, n + 1 after n failed attempts. */
    public int attempt() {
        return delivery.attempt();
    }

    /** True when the standard decision would move it to the dead queue (no retries left). */
    public boolean lastAttempt() {
        return delivery.attempt() > maxRetries;
    }
}
