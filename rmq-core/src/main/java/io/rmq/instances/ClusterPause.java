package io.rmq.instances;

import java.time.Instant;

/**
 * A cluster-wide pause, stored in Redis: every instance's listener with this id ({@code kind} "listener"), or every
 * listener of this topic ({@code kind} "topic"), takes nothing while it is there.
 *
 * @param since when it was set (the clock of the instance that set it)
 * @param by    who set it: an instance id, "dashboard", "endpoint", or what the caller named
 */
public record ClusterPause(String kind, String name, Instant since, String by) {
}
