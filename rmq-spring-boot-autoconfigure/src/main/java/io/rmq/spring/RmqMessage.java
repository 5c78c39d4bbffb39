package io.rmq.spring;

import java.nio.charset.StandardCharsets;

/**
 * A received message with its delivery details; declare {@code RmqMessage<T>} as the listener parameter to get them.
 *
 * @param topic   topic name
 * @param slot    the slot it came from
 * @param attempt    1 on the first delivery, n + 1 after n failed attempts
 * @param maxRetries the retries the listener allows after the first attempt: a failure of attempt
 *                   {@code maxRetries + 1} moves the message to the dead queue
 * @param score      its store score: due time in epoch ms (RANGE_MERGE, FIXED_TIME) or priority (PRIORITY)
 * @param payload    the body converted to {@code T}
 * @param body       the stored body (the message's identity)
 */
public record RmqMessage<T>(String topic, int slot, int attempt, int maxRetries, double score, T payload, byte[] body) {

    /** True when a failure of this attempt moves the message to the dead queue (no retries left). */
    public boolean lastAttempt() {
        return attempt > maxRetries;
    }

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
