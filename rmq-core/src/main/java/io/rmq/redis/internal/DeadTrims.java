package io.rmq.redis.internal;

import io.rmq.core.internal.RmqKeys.SlotKeys;

/**
 * Not API. Told how many dead messages a script of {@link RmqRedisLeases} or {@link RmqRedisOrderly} trimmed by the
 * dead-letter retention, per slot (the engine reports them to its instrumentation: the meter and the history). Called
 * on Lettuce's threads; must not block or throw.
 */
@FunctionalInterface
public interface DeadTrims {

    DeadTrims NONE = (topic, slot, messages) -> {
    };

    void trimmed(String topic, int slot, long messages);

    /** Reports what a script's burials trimmed in {@code slot} (see trim_dead in _common.lua), when anything. */
    default void trimmed(SlotKeys slot, long messages) {
        if (messages > 0) {
            trimmed(slot.topic(), slot.slot(), messages);
        }
    }
}
