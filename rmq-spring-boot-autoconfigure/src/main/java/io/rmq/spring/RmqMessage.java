package io.rmq.spring;

import java.nio.charset.StandardCharsets;

/**
 * A received message with its delivery details; declare {@code RmqMessage<T>} as the listener parameter to get them.
 *
 * @param topic   topic name
 * @param slot    the slot it came from
 * @param attempt 1 on the first delivery, n + 1 after n failed attempts
 * @param score   its store score: due time in epoch ms (RANGE_MERGE, FIXED_TIME) or priority (PRIORITY)
 * @param payload the body converted to {@code T}
 * @param body    the stored body (the message's identity)
 */
public record RmqMessage<T>(String topic, int slot, int attempt, double score, T payload, byte[] body) {

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
