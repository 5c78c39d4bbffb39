package io.rmq.container.internal;

import io.rmq.container.ContainerOptions;

/**
 * When the idle checks of an engine's listeners run ({@link Poller}'s for CONCURRENT, {@link OrderlyIdleCheck} for
 * ORDERLY), so that their {@code EXISTS} can go to a standalone server as one command
 * ({@link io.rmq.redis.internal.RmqRedisLeases#occupied}): every container of the JVM with the same {@code maxIdle}
 * checks on the same grid of the local clock (multiples of {@code maxIdle} from a phase of the JVM's), and each check
 * waits a little for the others. So ten idle listeners cost Redis one {@code EXISTS} per {@code maxIdle}, as one does.
 * Stateless.
 */
final class IdleCheckTimes {

    /** The longest a check waits for the checks of other listeners (those due at the same grid point). */
    private static final long FOLD_MILLIS = 100;

    /**
     * Where this JVM's grid starts within {@code maxIdle}, as a fraction of it: random per JVM, so that the instances
     * of a fleet do not all check at the same instant (on a cluster, one {@code EXISTS} per slot each).
     */
    private static final double PHASE = java.util.concurrent.ThreadLocalRandom.current().nextDouble();

    private IdleCheckTimes() {
    }

    /** The first grid point after local ms {@code now}: in ({@code now}, {@code now + maxIdle}]. */
    static long nextAfter(long now, long maxIdleMillis) {
        long offset = (long) (PHASE * maxIdleMillis);
        return (Math.floorDiv(now - offset, maxIdleMillis) + 1) * maxIdleMillis + offset;
    }

    /**
     * How long a check of a container with these options may wait for others: {@value #FOLD_MILLIS} ms, or less
     * where {@code maxIdle} or the command timeout is short (a tenth of either), so that the wait never counts in what
     * the watchdog bounds.
     */
    static long foldMillis(ContainerOptions options) {
        return Math.min(FOLD_MILLIS, Math.min(options.maxIdle().toMillis(), options.commandTimeout().toMillis()) / 10);
    }
}
