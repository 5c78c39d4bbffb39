package io.rmq.instances;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A running RMQ instance as it last described itself in Redis (see {@link RmqInstances}): everything but {@code id}
 * and {@code readAt} is as of {@code lastSeenAt}, its latest report, at most one heartbeat old when it is alive
 * ({@link #reportAge()}).
 *
 * @param id          the instance's id: host, process id and a random part
 * @param application the application's name
 * @param version     the RMQ version it runs ({@code dev} when it runs from classes, not a released jar)
 * @param lastSeenAt  its latest heartbeat, when it made this report (Redis's clock)
 * @param busy        handler threads busy when it reported, over all its listeners
 * @param listeners   its listener containers
 * @param ownedSlots  the ORDERLY slots it owns now
 * @param handling    the messages its busy handlers worked on when it reported (at most
 *                    {@value RmqInstances#MAX_HANDLING} shown)
 * @param prefetched  the messages it had fetched (leased) and not yet started, waiting in its listeners' buffers
 *                    when it reported (CONCURRENT listeners; at most {@value RmqInstances#MAX_PREFETCHED} shown)
 * @param readAt      when this was read from Redis (Redis's clock)
 */
public record RmqInstance(String id, String application, String host, long pid, String version, Instant startedAt,
        Instant lastSeenAt, int busy, List<Listener> listeners, List<OwnedSlot> ownedSlots, List<Handling> handling,
        List<Prefetched> prefetched, Instant readAt) {

    /** How old the report was when it was read (Redis's clock on both ends; never negative). */
    public java.time.Duration reportAge() {
        java.time.Duration age = java.time.Duration.between(lastSeenAt, readAt);
        return age.isNegative() ? java.time.Duration.ZERO : age;
    }

    /**
     * One listener container of the instance.
     *
     * @param state         running, paused or stopped
     * @param busy          its handler threads busy when the instance reported
     * @param pausedHere    whether the instance's own pause is on
     * @param pausedCluster whether the cluster-wide pause (of the listener or its topic) is on
     */
    public record Listener(String id, String topic, String mode, String state, int concurrency, int busy,
            boolean pausedHere, boolean pausedCluster) {
    }

    /** An ORDERLY slot the instance owns. */
    public record OwnedSlot(String topic, int slot) {
    }

    /**
     * A message a busy handler works on.
     *
     * @param digest {@link RmqInstances#digest} of the stored member (how the in-flight view finds it)
     * @param id     the id it was sent with, or null
     * @param since  when its handler started (the instance's clock)
     */
    public record Handling(String listener, String topic, int slot, String digest, @Nullable String id,
            Instant since) {
    }

    /**
     * A message the instance had fetched (it is in the slot's prepare set, leased to this instance) and not yet given
     * to a handler.
     *
     * @param digest {@link RmqInstances#digest} of the stored member
     * @param id     the id it was sent with, or null
     */
    public record Prefetched(String listener, String topic, int slot, String digest, @Nullable String id) {
    }
}
