package io.rmq.container.internal;

import java.util.concurrent.TimeUnit;

import io.rmq.consumer.internal.SlotConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code maxIdle} check of an ORDERLY container's idle slots (owned, not stepping, nothing due in them as their
 * last step read it): every {@code maxIdle}, one round of plain {@code EXISTS} over those slots' keys (one command on a
 * standalone server whose slots are empty, one per slot on a cluster; {@link SlotConsumer#occupiedSlotsAsync(int[])}),
 * and a step at once for each slot that holds anything — what no announcement told about (a lost one, a writer that
 * does not announce). An idle slot used to take a step script of its own every {@code maxIdle} (8 commands each:
 * 68 commands/s for 256 idle slots at the default 30 s). When the check fails, every idle slot steps, as before.
 * <p>
 * Threads: {@link #check} on the watchdog's timer thread (it never blocks: the reply wakes the slots on Lettuce's
 * thread, through {@link LaneScheduler}, whose lock guards the slots); {@code nextCheckAt} and {@code underWay} belong
 * to the timer thread and the reply (one check at a time).
 */
final class OrderlyIdleCheck implements ContainerWatchdog.Check {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.ORDERLY);

    private final SlotConsumer consumer;
    private final LaneScheduler scheduler;
    private final String id;
    private final long maxIdleMillis;
    private final long commandTimeoutMillis;
    private volatile long nextCheckAt;
    private volatile boolean underWay;

    OrderlyIdleCheck(SlotConsumer consumer, LaneScheduler scheduler, String id, long maxIdleMillis,
            long commandTimeoutMillis) {
        this.consumer = consumer;
        this.scheduler = scheduler;
        this.id = id;
        this.maxIdleMillis = maxIdleMillis;
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.nextCheckAt = System.currentTimeMillis() + maxIdleMillis;
    }

    @Override
    public void check(long now) {
        if (now < nextCheckAt || underWay) {
            return;
        }
        nextCheckAt = now + maxIdleMillis;
        int[] idle = scheduler.idleSlots();
        if (idle.length == 0) {
            return;
        }
        underWay = true;
        java.util.concurrent.CompletableFuture<long[]> occupied;
        try {
            occupied = consumer.occupiedSlotsAsync(idle);
        }
        catch (RuntimeException ex) {
            occupied = java.util.concurrent.CompletableFuture.failedFuture(ex);
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
