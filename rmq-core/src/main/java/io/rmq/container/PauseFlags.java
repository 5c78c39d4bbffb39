package io.rmq.container;

/**
 * The two reasons a container takes nothing on purpose: this instance's own pause ({@code ListenerContainer.pause()})
 * and the cluster-wide one (stored in Redis, applied by the instance registry's heartbeat thread). Written and acted
 * on only while holding this object's monitor, by whichever thread pauses or resumes, so that a resume of one never
 * lifts the other: the container takes again only when both are off. Read without it by the views.
 */
final class PauseFlags {

    /** How a container stops and starts taking (each container its own way; called under this object's monitor). */
    interface Taking {

        /** Stops taking; returns once nothing more is taken. */
        void pause();

        void resume();
    }

    private final Taking taking;
    private volatile boolean here;
    private volatile boolean cluster;

    PauseFlags(Taking taking) {
        this.taking = taking;
    }

    synchronized void pauseHere() {
        here = true;
        taking.pause();
    }

    synchronized void resumeHere() {
        here = false;
        if (!cluster) {
            taking.resume();
        }
    }

    synchronized void setCluster(boolean paused) {
        if (cluster == paused) {
            return; // told on every heartbeat: only a change does something
        }
        cluster = paused;
        if (paused) {
            taking.pause();
        }
        else if (!here) {
            taking.resume();
        }
    }

    boolean here() {
        return here;
    }

    boolean cluster() {
        return cluster;
    }
}
