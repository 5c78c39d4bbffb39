package io.rmq.spring.listener;

import java.util.Set;

import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;

/**
 * A snapshot of one registered listener container, for operations (health, the {@code rmq} endpoint, the dashboard).
 *
 * @param id             the container id
 * @param topic          the topic it consumes
 * @param mode           CONCURRENT or ORDERLY
 * @param status         RUNNING, PAUSED (started, paused on purpose) or STOPPED
 * @param autoStartup    whether it starts with the application context
 * @param concurrency    handler threads (CONCURRENT) or at most that many slots at once (ORDERLY)
 * @param ownedSlots     ORDERLY: the slots it owns now; CONCURRENT: empty
 * @param suspendedSlots ORDERLY: owned slots whose failed head waits for its retry; CONCURRENT: empty
 * @param stallsRepaired how often its watchdog found it stalled and repaired it since it was created (0 when healthy)
 */
public record RmqListenerState(String id, String topic, ConsumeMode mode, Status status, boolean autoStartup,
        int concurrency, Set<Integer> ownedSlots, Set<Integer> suspendedSlots, long stallsRepaired) {

    /** What a listener container is doing. */
    public enum Status {
        /** Started and taking messages. */
        RUNNING,
        /** Started, but paused on purpose ({@link ListenerContainer#pause()}): it takes nothing until resumed. */
        PAUSED,
        /** Not started, or stopped. */
        STOPPED
    }

    static RmqListenerState of(ListenerContainer container, boolean autoStartup) {
        Status status = !container.isRunning() ? Status.STOPPED
                : container.isPaused() ? Status.PAUSED : Status.RUNNING;
        return new RmqListenerState(container.id(), container.topic(), container.mode(), status, autoStartup,
                container.concurrency(), container.ownedSlots(), container.suspendedSlots(),
                container.stallsRepaired());
    }
}
