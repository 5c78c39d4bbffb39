package io.rmq.container.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.core.internal.Timeouts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code maxIdle} check of an ORDERLY container's idle slots (owned, not stepping, nothing due in them as their
 * last step read it): every {@code maxIdle}, one round of plain {@code EXISTS} over those slots' keys (one command on a
 * standalone server whose slots are empty, shared with the engine's other listeners checking at the same time; one
 * per slot on a cluster; {@link SlotConsumer#occupiedSlotsAsync(int[], long)}), and a step at once for each slot that
 * holds anything — what no announcement told about (a lost one, a writer that does not announce). An idle slot used
 * to take a step script of its own every {@code maxIdle} (8 commands each: 68 commands/s for 256 idle slots at the
 * default 30 s). When the check fails, every idle slot steps, as before.
 * <p>
 * The checks fall on the grid of {@link IdleCheckTimes}: the watchdog's round before a grid point sets the check for
 * that point on the deadline timer, so that the checks of an engine's listeners go to Redis together.
 * <p>
 * Threads: {@link #check} on the watchdog's timer thread, {@link #run} on the deadline thread (neither blocks: the
 * reply wakes the slots on Lettuce's thread, through {@link LaneScheduler}, whose lock guards the slots);
 * {@code nextCheckAt} belongs to the timer thread; {@code underWay} (set, scheduled or running, until the reply) to
 * whichever of them holds the check (one check at a time).
 */
final class OrderlyIdleCheck implements ContainerWatchdog.Check {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.ORDERLY);

    private final SlotConsumer consumer;
    private final LaneScheduler scheduler;
    private final String id;
    private final long maxIdleMillis;
    private final long commandTimeoutMillis;
    private final long foldMillis;
    private long nextCheckAt;
    private volatile boolean underWay;

    OrderlyIdleCheck(SlotConsumer consumer, LaneScheduler scheduler, ContainerOptions options,
            long commandTimeoutMillis) {
        this.consumer = consumer;
        this.scheduler = scheduler;
        this.id = options.id();
        this.maxIdleMillis = options.maxIdle().toMillis();
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.foldMillis = IdleCheckTimes.foldMillis(options);
        this.nextCheckAt = IdleCheckTimes.nextAfter(System.currentTimeMillis(), maxIdleMillis);
    }

    @Override
    public void check(long now) {
        if (now + ContainerWatchdog.EVERY_MILLIS < nextCheckAt || underWay) {
            return;
        }
        long at = Math.max(nextCheckAt, now);
        nextCheckAt = IdleCheckTimes.nextAfter(at, maxIdleMillis);
        underWay = true;
        Timeouts.after(at - now, this::run);
    }

    /** The check itself, at its grid point. */
    private void run() {
        int[] idle;
        try {
            idle = scheduler.idleSlots();
        }
        catch (RuntimeException ex) {
            // the deadline thread is shared by every engine: nothing may end it, and the next round checks again
            underWay = false;
            log.debug("ORDERLY container '{}': the idle check of topic '{}' could not start: {}", id,
                    consumer.topic().name(), String.valueOf(ex));
            return;
        }
        if (idle.length == 0) {
            underWay = false;
            return;
        }
        CompletableFuture<long[]> occupied;
        try {
            occupied = consumer.occupiedSlotsAsync(idle, foldMillis);
        }
        catch (RuntimeException ex) {
            occupied = CompletableFuture.failedFuture(ex); // a failed check: every idle slot steps
        }
        occupied.orTimeout(commandTimeoutMillis, TimeUnit.MILLISECONDS).whenComplete((counts, error) -> {
            underWay = false;
            if (error != null) {
                log.debug("ORDERLY container '{}': the idle check of topic '{}' failed; its {} idle slot(s) step"
                        + " now: {}", id, consumer.topic().name(), idle.length, String.valueOf(error));
            }
            scheduler.wakeIdle(idle, counts);
        });
    }
}
