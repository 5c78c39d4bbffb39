package io.rmq.container;

import io.rmq.core.ConsumeMode;

/** Runs one listener on one topic, CONCURRENT or ORDERLY; made by {@link io.rmq.Rmq#container}. */
public interface ListenerContainer {

    String id();

    String topic();

    ConsumeMode mode();

    boolean isRunning();

    void start();

    /** Graceful stop; returns when the container has stopped (or its shutdown timeout has passed). */
    void stop();

    /**
     * Stops taking new messages while staying started: deliveries in hand are handled and settled, leases of running
     * handlers keep being extended, ORDERLY slots stay owned (their in-hand messages finish, no new ones are taken),
     * and the watchdog does not count the pause as a stall. Returns once nothing more will be taken (at most about the
     * command timeout later). Idempotent; a stopped container started again stays paused until {@link #resume()}.
     */
    void pause();

    /** Takes messages again after {@link #pause()}, at once (the poller or the slots' threads are woken). Idempotent. */
    void resume();

    /**
     * True while it takes nothing on purpose: between {@link #pause()} and {@link #resume()}, or while paused
     * cluster-wide (also while stopped, if it was paused).
     */
    boolean isPaused();

    /**
     * Turns the cluster-wide pause of this listener on or off (the instance registry does, from the pauses stored in
     * Redis). Independent of {@link #pause()}: the container takes nothing while either is on, and takes again only
     * when both are off. Pausing behaves as {@link #pause()} does (in-hand work finishes, its leases are kept).
     */
    default void setPausedCluster(boolean paused) {
        throw new UnsupportedOperationException("listener '" + id() + "' cannot be paused cluster-wide");
    }

    /** Whether this instance's own pause ({@link #pause()}) is on. */
    default boolean isPausedHere() {
        return isPaused();
    }

    /** Whether the cluster-wide pause ({@link #setPausedCluster}) is on. */
    default boolean isPausedCluster() {
        return false;
    }

    /** How many handler threads (CONCURRENT) or at most how many slots at once (ORDERLY) this container runs. */
    int concurrency();

    /** ORDERLY: the slots this container owns now (sorted); CONCURRENT: empty (every consumer pops every slot). */
    default java.util.Set<Integer> ownedSlots() {
        return java.util.Set.of();
    }

    /**
     * ORDERLY: owned slots where a group's failed head waits for its retry (sorted; the slot's other groups go on);
     * CONCURRENT: empty.
     */
    default java.util.Set<Integer> suspendedSlots() {
        return java.util.Set.of();
    }

    /**
     * CONCURRENT: up to {@code max} messages fetched (leased, in Redis's prepare set) and waiting for a handler, in
     * this container's buffer or taken by a handler thread for its next calls, a copy taken now (any thread); ORDERLY:
     * empty (an owned slot's messages are its owner's).
     */
    default java.util.List<io.rmq.consumer.Delivery> prefetched(int max) {
        return java.util.List.of();
    }

    /**
     * What the last {@link #stop()} handed back: CONCURRENT, fetched messages it had not started, returned to the store
     * (no attempt counted); ORDERLY, the slots it released for other instances to take over at once.
     */
    default int handedBackOnStop() {
        return 0;
    }

    /**
     * What the last {@link #stop()} left behind because handlers still ran after the shutdown timeout: CONCURRENT,
     * those messages (redelivered after their lease); ORDERLY, those slots (taken over when their ownership runs out).
     */
    default int abandonedOnStop() {
        return 0;
    }

    /** Stalls the container's watchdog found and repaired (zero in a healthy container; each is logged as an ERROR). */
    long stallsRepaired();

}
