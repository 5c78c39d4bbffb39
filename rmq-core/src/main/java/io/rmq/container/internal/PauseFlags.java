package io.rmq.container.internal;

import io.rmq.container.ListenerContainer;

/**
 * The two reasons a container takes nothing on purpose: this instance's own pause ({@code ListenerContainer.pause()})
 * and the cluster-wide one (stored in Redis, applied by the instance registry's heartbeat thread). Written and acted
 * on only while holding this object's monitor, by whichever thread pauses or resumes, so that a resume of one never
 * lifts the other: the container takes again only when both are off. Read without it by the views.
 */
final class PauseFlags {

    /** How the container stops taking (returns once nothing more is taken) and starts again; run under this monitor. */
    private final Runnable stopTaking;
    private final Runnable startTaking;
    private volatile boolean here;
    private volatile boolean cluster;

    PauseFlags(Runnable stopTaking, Runnable startTaking) {
        this.stopTaking = stopTaking;
        this.startTaking = startTaking;
    }

    synchronized void pauseHere() {
        here = true;
        stopTaking.run();
    }

    synchronized void resumeHere() {
        here = false;
        if (!cluster) {
            startTaking.run();
        }
    }

    synchronized void setCluster(boolean paused) {
        if (cluster == paused) {
            return; // told on every heartbeat: only a change does something
        }
        cluster = paused;
        if (paused) {
            stopTaking.run();
        }
        else if (!here) {
            startTaking.run();
        }
    }

    boolean here() {
        return here;
    }

    boolean cluster() {
        return cluster;
    }
}
