package io.rmq.instances;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The instance registry of one engine ({@link io.rmq.Rmq#instances()}): once {@linkplain #start started}, the engine says every heartbeat, in one
 * script, that it is alive and what it runs (listeners with their state and busy handler threads, ORDERLY slots owned,
 * the messages its busy handlers work on), and reads back the cluster-wide pauses, which it applies to its listener
 * containers; on {@link #close()} it leaves. One that dies ages out after {@value #MISSED_BEATS} missed beats. Reads
 * ({@link #list()}, {@link #pauses()}) and pause changes work whether this engine takes part or not.
 * <p>
 * Threads: the heartbeat runs on this registry's own thread ({@code rmq-instances}), which alone applies the pauses
 * it read to the containers; {@link #start}, {@link #close} and the reads and changes run on callers' threads.
 */
public interface RmqInstances extends AutoCloseable {

    /** Beats an instance may miss before it is taken for gone (its entry and description expire). */
    int MISSED_BEATS = 3;

    /** Most messages of busy handlers one description lists (it is rewritten every beat). */
    int MAX_HANDLING = 200;

    /** Most prefetched messages (fetched, waiting in a buffer for a handler) one description lists. */
    int MAX_PREFETCHED = 200;

    /**
     * Registers this engine and beats every {@code settings.heartbeat()} until {@link #close()}. Idempotent: a second
     * call keeps the first settings. Listener containers made before this call report no busy handlers (their
     * consumers were made without the registry's bookkeeping); the Spring layer starts it before any listener.
     */
    void start(InstanceSettings settings);

    /** Whether this engine takes part (started and not closed). */
    boolean isStarted();

    /** This engine's id in the registry, or null until {@link #start}. */
    @Nullable String id();

    /** Stops beating and leaves the registry (this engine's entry is removed); idempotent. */
    @Override
    void close();

    /**
     * Sends a heartbeat soon (on the heartbeat thread) without waiting for it: a listener of this instance changed
     * state (paused or resumed here), and the registry is to show it now rather than one heartbeat later. Does
     * nothing while the registry is not started.
     */
    void reportSoon();

    /** The live instances (this one included once it has beaten), by id. */
    List<RmqInstance> list();

    /** One live instance, or null when there is none with this id. */
    @Nullable RmqInstance get(String instanceId);

    /** The cluster-wide pauses, listeners first, then topics, each by name. */
    List<ClusterPause> pauses();

    /**
     * Pauses every instance's listener with this id, cluster-wide (kept in Redis until {@link #resumeListener}):
     * each instance honours it within one heartbeat, this one at once. False when it was paused already.
     *
     * @param by who pauses (shown with the pause)
     */
    boolean pauseListener(String listenerId, String by);

    /** Lifts the cluster-wide pause of a listener; false when there was none. */
    boolean resumeListener(String listenerId);

    /** Pauses every listener of this topic on every instance, cluster-wide; as {@link #pauseListener}. */
    boolean pauseTopic(String topic, String by);

    /** Lifts the cluster-wide pause of a topic; false when there was none. */
    boolean resumeTopic(String topic);

    /**
     * What a description names a stored member by: base64url of the first 12 bytes of its SHA-256 (members may be
     * whole bodies of up to the body limit; the in-flight view matches prepare's members to busy handlers by it).
     */
    static String digest(byte[] member) {
        try {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(member);
            return Base64.getUrlEncoder().withoutPadding().encodeToString(java.util.Arrays.copyOf(sha, 12));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
