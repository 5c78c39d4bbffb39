package io.rmq.container;

/**
 * The two reasons a container takes nothing on purpose: this instance's own pause ({@code ListenerContainer.pause()})
 * and the cluster-wide one (stored in Redis, applied by the instance registry's heartbeat thread). Written and acted
 * on only while holding this object's monitor, by whichever thread pauses or resumes, so that a resume of one never
 * lifts the other: the container takes again only when both are off. Read without it by the views.
 */
final class PauseFlags {

    volatile boolean here;
    volatile boolean cluster;
}
