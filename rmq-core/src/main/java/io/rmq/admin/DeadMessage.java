package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * A message in a dead queue.
 *
 * @param topic     topic name
 * @param slot      the slot it lives in
 * @param body      the stored body (its identity)
 * @param diedAt    when it was moved to the dead queue (Redis clock)
 * @param attempts  failed attempts it had
 * @param priority  its priority (PRIORITY topics), else null
 * @param lastError the error of its last attempt
 */
public record DeadMessage(String topic, int slot, byte[] body, Instant diedAt, int attempts, Long priority,
        String lastError) {

    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
