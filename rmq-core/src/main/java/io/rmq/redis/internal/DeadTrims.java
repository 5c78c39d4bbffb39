package io.rmq.redis.internal;

/**
 * Not API. Told how many dead messages a script of {@link RmqRedis} trimmed by the dead-letter retention, per slot
 * (the engine reports them to its instrumentation: the meter and the history). Called on Lettuce's threads; must not
 * block or throw.
 */
@FunctionalInterface
public interface DeadTrims {

    DeadTrims NONE = (topic, slot, messages) -> {
    };

    void trimmed(String topic, int slot, long messages);
}
