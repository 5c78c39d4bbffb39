package io.rmq.admin;

import java.util.Map;

import io.rmq.core.ConsumeMode;
import org.jspecify.annotations.Nullable;

/**
 * A message in flight: taken by a consumer and not settled yet (in its slot's prepare set).
 *
 * @param member          the stored member (the body, or 0xFF + the id for a message sent with an id)
 * @param id              the id it was sent with, or null
 * @param body            its body (for an id message, its payload; empty when that is not stored)
 * @param leaseDeadlineMillis CONCURRENT: when its lease ends unless extended (Redis ms); ORDERLY: null, the prepare
 *                        score of an ORDERLY message is its store score, not a deadline (the slot's ownership is its
 *                        lease)
 * @param attempt         which delivery this is (1 for the first)
 * @param mode            the topic's registered consume mode (null when none is registered)
 */
public record InFlightMessage(String topic, int slot, byte[] member, @Nullable String id, byte[] body,
        @Nullable Long leaseDeadlineMillis, int attempt, @Nullable ConsumeMode mode, Map<String, String> headers) {

    /** Names this message for the admin's operations ({@link RmqAdmin#find}, {@link RmqAdmin#cancel}, ...). */
    public MessageRef ref() {
        return MessageRef.stored(topic, slot, member);
    }
}
