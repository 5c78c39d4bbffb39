package io.rmq.redis.internal;

import io.rmq.core.internal.RmqKeys.SlotKeys;

/**
 * Not API. Told what a script of {@link RmqRedisLeases} or {@link RmqRedisOrderly} did to messages that no handler
 * saw, per slot: dead messages the dead-letter retention trimmed, and messages that expired before they were handled
 * (the engine reports both to its instrumentation: meters and the history). Called on Lettuce's threads; must not
 * block or throw.
 */
public interface SlotReports {

    SlotReports NONE = new SlotReports() {
    };

    /** {@code messages} of the oldest dead messages of a slot were deleted by the retention. */
    default void trimmed(String topic, int slot, long messages) {
    }

    /**
     * Messages of a slot expired before they were handled: {@code dropped} left for good, {@code dead} were moved to
     * the dead queue with the reason (the topic keeps expired messages).
     */
    default void expired(String topic, int slot, long dropped, long dead) {
    }

    /** Reports what a script's burials trimmed in {@code slot} (see trim_dead in _common.lua), when anything. */
    default void trimmed(SlotKeys slot, long messages) {
        if (messages > 0) {
            trimmed(slot.topic(), slot.slot(), messages);
        }
    }

    /** Reports what a script expired in {@code slot} (see expire_waiting in _common.lua), when anything. */
    default void expired(SlotKeys slot, long dropped, long dead) {
        if (dropped + dead > 0) {
            expired(slot.topic(), slot.slot(), dropped, dead);
        }
    }
}
