package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.PollerEvents.Resync;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchdog's check of a CONCURRENT container's poller: the poller thread is alive and has made a pass within
 * {@code maxIdle + commandTimeout} (+ grace), and, while the buffer had room, every slot has finished a pop within that
 * time. A broken promise is logged as an ERROR naming the container (and the slots) and repaired: a dead poller is
 * restarted; otherwise a {@link Resync} makes the poller poll every slot at once (and give up on any pop older than
 * twice the command timeout). While paused on purpose the container takes nothing, so only the poller is checked.
 * <p>
 * Threads: runs on the watchdog's timer thread, which alone owns {@link #roomSinceMillis}; it reads the poller's
 * volatile state and reaches the poller only through its events (and by starting a new thread when it died).
 */
final class PollerCheck implements ContainerWatchdog.Check {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    /** Slack on top of maxIdle + commandTimeout before the watchdog calls a slot or the poller stalled (GC, load). */
    private static final long GRACE_MILLIS = 5000;

    private final Poller poller;
    private final RunFlags flags;
    private final ContainerWatchdog watchdog;
    private final String id;
    private final String topic;
    private final long limitMillis;
    /** Local ms since which the watchdog has seen room in the buffer without a break (0: no room last time). */
    private long roomSinceMillis;

    PollerCheck(Poller poller, RunFlags flags, ContainerWatchdog watchdog, ContainerOptions options, String topic) {
        this.poller = poller;
        this.flags = flags;
        this.watchdog = watchdog;
        this.id = options.id();
        this.topic = topic;
        this.limitMillis = options.maxIdle().toMillis() + options.commandTimeout().toMillis() + GRACE_MILLIS;
    }

    /** A new run: no room seen yet. Before the watchdog starts. */
    void reset() {
        roomSinceMillis = 0;
    }

    @Override
    public void jvmPaused(long now) {
        // the whole JVM stood still (a long GC pause, SIGSTOP): give the poller a second to catch up
        roomSinceMillis = 0;
        poller.lastPassMillis = Math.max(poller.lastPassMillis, now);
    }

    @Override
    public void check(long now) {
        if (flags.stopping || !flags.running) {
            return;
        }
        Thread pollerThread = poller.events.poller();
        if (!pollerThread.isAlive()) {
            watchdog.repaired();
            log.error("RMQ listener container '{}' (topic '{}'): its poller thread has died; starting a new one",
                    id, topic);
            poller.startThread();
            return;
        }
        long lastPass = poller.lastPassMillis;
        if (now - lastPass > limitMillis) {
            Throwable where = new Throwable("poller stack");
            where.setStackTrace(pollerThread.getStackTrace());
            watchdog.repaired();
            log.error("RMQ listener container '{}' (topic '{}'): its poller has made no pass for {} ms; waking it",
                    id, topic, now - lastPass, where);
            poller.events.post(new Resync(true));
            return;
        }
        if (flags.paused || poller.room() < poller.roundSize
                || now < poller.throttledUntil + ContainerWatchdog.EVERY_MILLIS) {
            // a pause, a full buffer or the rate limit legitimately holds polling back
            roomSinceMillis = 0;
            return;
        }
        if (roomSinceMillis == 0) {
            roomSinceMillis = now;
        }
        AtomicLongArray polled = poller.schedule.lastPolled();
        List<Integer> stalled = new ArrayList<>();
        for (int slot = 0; slot < polled.length(); slot++) {
            if (now - Math.max(polled.get(slot), roomSinceMillis) > limitMillis) {
                stalled.add(slot);
            }
        }
        if (!stalled.isEmpty()) {
            watchdog.repaired();
            log.error("RMQ listener container '{}' (topic '{}'): slot(s) {} were not polled for over {} ms although"
                    + " the container had room; forcing a poll of every slot", id, topic, stalled, limitMillis);
            for (int slot : stalled) {
                polled.set(slot, now); // one report per stall; the next check sees whether the repair worked
            }
            poller.events.post(new Resync(true));
        }
    }
}
