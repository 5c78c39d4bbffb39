package io.rmq.admin;

import java.nio.charset.StandardCharsets;

/**
 * A message waiting in a topic's store, as {@code browse} lists it.
 *
 * @param topic          topic name
 * @param slot           its slot
 * @param body           the serialized body (its identity)
 * @param score          due time in epoch ms (RANGE_MERGE, FIXED_TIME) or priority (PRIORITY)
 * @param failedAttempts failed attempts so far (above 0: it waits for a retry)
 */
public record WaitingMessage(String topic, int slot, byte[] body, double score, int failedAttempts) {

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
