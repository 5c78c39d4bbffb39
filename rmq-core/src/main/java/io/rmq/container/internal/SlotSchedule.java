package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

import io.rmq.consumer.PollResult;
import io.rmq.container.internal.PollerEvents.Wake;
import io.rmq.redis.internal.RedisGateway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a CONCURRENT container's poller knows of each slot: when it next needs a pop, its pop under way, the
 * announcements deferred behind that pop, its failed pops in a row. Threads: the poller thread owns all of it
 * ({@link PollerEvents} is how others reach it); only {@link #lastPolled} is shared, with the watchdog (timer thread).
 * <p>
 * A slot is busy iff its pop is in {@link #slotPop}; the {@link PollerEvents.PopFinished} event of that pop, drained
 * by the poller ({@link #popFinished}), is the only place it leaves (or a watchdog resync that finds it ended unseen).
 * A failed pop pauses only its own slot. Which slots are due prefers the container's own share ({@link SlotShares}):
 * a foreign slot is due only while no own slot is due or busy, and only its steal delay after its known due time; its
 * hints come from announcements, the idle check and this container's own steals, as for an own slot.
 */
final class SlotSchedule {

    /** Logs under the container's name ({@link ContainerLoggers}). */
    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    /** The longest pause of a failing slot. */
    static final long ERROR_PAUSE_MILLIS = 1000;
    /** Pause of a slot after its first failed pop; it doubles with each further failure up to ERROR_PAUSE_MILLIS. */
    private static final long FIRST_RETRY_MILLIS = 100;

    private final String id;
    private final String topic;
    private final RedisClock clock;
    private final SlotShares shares;

    /** Per slot: Redis ms when it next needs a pop; -1 when empty; 0 at start (unknown: poll). */
    private long[] slotNextDue;
    /** Per slot, its pop under way, or null; a slot is busy (not polled again) while it has one. */
    private Pop[] slotPop;
    /** Wake-up announcements for busy slots, applied after their pop's (older) hints. */
    private final List<Wake> deferredWakes = new ArrayList<>();
    /** Rotates which due slots a partial poll starts with, so no slot waits behind the others. */
    private int slotCursor;
    /** Per slot, its failed pops in a row; and how many slots are failing (logged when that starts and ends). */
    private int[] slotFailures;
    private int failingSlots;
    /** Per slot, local ms when a pop round covering it last finished (with a result or an error); the watchdog's. */
    private volatile AtomicLongArray lastPolled;

    SlotSchedule(String id, String topic, RedisClock clock, SlotShares shares) {
        this.id = id;
        this.topic = topic;
        this.clock = clock;
        this.shares = shares;
    }

    /** A new run: every slot unknown (polled at once), none busy. Before the poller starts (which publishes it). */
    void start(int slots, long now) {
        slotNextDue = new long[slots];
        slotPop = new Pop[slots];
        slotFailures = new int[slots];
        failingSlots = 0;
        deferredWakes.clear();
        long[] initial = new long[slots];
        Arrays.fill(initial, now);
        lastPolled = new AtomicLongArray(initial);
    }

    AtomicLongArray lastPolled() {
        return lastPolled;
    }

    /** The pops under way, by slot (null: not busy). The poller's; read, never stored into. */
    Pop[] pops() {
        return slotPop;
    }

    void sent(Pop pop) {
        slotPop[pop.slot] = pop;
    }

    /**
     * The slots to pop now: the own slots not busy and due by Redis ms {@code redisNow}; only when none of them is due
     * or busy, the foreign slots not busy that have been due for their steal delay (work stealing, {@link SlotShares}).
     * With {@code all} (a full poll: start, resync, failed idle check), every slot not busy, own and foreign: a full
     * poll stands in for the idle check, which looks at every slot, so none may be left out.
     */
    int[] dueSlots(boolean all, long redisNow) {
        long[] next = slotNextDue;
        int count = 0;
        boolean ownBusy = false;
        int[] due = new int[next.length];
        for (int i = 0; i < next.length; i++) {
            if (!all && !shares.mine(i)) {
                continue;
            }
            if (slotPop[i] != null) {
                ownBusy = true;
            }
            else if (all || next[i] >= 0 && next[i] <= redisNow) {
                due[count++] = i;
            }
        }
        if (count == 0 && !ownBusy) {
            for (int i = 0; i < next.length; i++) {
                if (!shares.mine(i) && slotPop[i] == null && next[i] >= 0
                        && next[i] + shares.stealDelay(i) <= redisNow) {
                    due[count++] = i;
                }
            }
        }
        return Arrays.copyOf(due, count);
    }

    /** {@code count} of the {@code due} slots, starting at a rotating position. */
    int[] pick(int[] due, int count) {
        if (count == due.length) {
            return due;
        }
        int[] picked = new int[count];
        int start = Math.floorMod(slotCursor, due.length);
        for (int i = 0; i < count; i++) {
            picked[i] = due[(start + i) % due.length];
        }
        slotCursor = start + count;
        return picked;
    }

    /**
     * Local ms of the earliest known due time of a slot not busy, or Long.MAX_VALUE; a foreign slot's counts (after
     * its steal delay) only while no own slot is busy, as in {@link #dueSlots}.
     */
    long earliestDueLocal() {
        long earliest = Long.MAX_VALUE;
        long foreign = Long.MAX_VALUE;
        boolean ownBusy = false;
        long[] next = slotNextDue;
        for (int i = 0; i < next.length; i++) {
            // a busy slot's hint is stale; its pop ending wakes the poller
            if (slotPop[i] != null) {
                ownBusy |= shares.mine(i);
            }
            else if (next[i] >= 0) {
                if (shares.mine(i)) {
                    earliest = Math.min(earliest, next[i]);
                }
                else {
                    foreign = Math.min(foreign, next[i] + shares.stealDelay(i));
                }
            }
        }
        if (!ownBusy) {
            earliest = Math.min(earliest, foreign);
        }
        return earliest == Long.MAX_VALUE ? earliest : earliest - clock.offset();
    }

    void applyWake(Wake wake) {
        long[] next = slotNextDue;
        int slot = wake.slot();
        if (slot < 0 || slot >= next.length) {
            return;
        }
        if (slotPop[slot] != null) {
            deferredWakes.add(wake); // the pop under way may bring back a hint older than this announcement
        }
        else if (next[slot] < 0 || wake.due() < next[slot]) {
            next[slot] = wake.due();
        }
    }

    /** Announcements deferred behind a pop that has now finished apply after its (older) hints. */
    void applyDeferredWakes() {
        if (!deferredWakes.isEmpty()) {
            List<Wake> ready = new ArrayList<>(deferredWakes);
            deferredWakes.clear();
            ready.forEach(this::applyWake);
        }
    }

    /**
     * The idle check found {@code slot} empty, or occupied but another container's (its owner pops it): unless busy
     * (its pop reports for it), it counts as polled.
     */
    void foundEmpty(int slot, long now) {
        if (slotPop[slot] == null) {
            // a busy slot's pop reports for it: the watchdog must still see a pop that never ends
            lastPolled.set(slot, now);
        }
    }

    /** A pop that ended but whose event never reached the poller (invariant broken): the slot is free and due. */
    void forget(Pop pop) {
        slotPop[pop.slot] = null;
        slotNextDue[pop.slot] = 0;
    }

    /** The pop's event: the slot is free again, with its next due time, or paused after an error. */
    void popFinished(Pop pop, PollResult result, Throwable failure, long now) {
        int slot = pop.slot;
        if (slotPop[slot] != pop) {
            return; // already abandoned by a resync
        }
        slotPop[slot] = null;
        lastPolled.set(slot, now);
        if (result == null) {
            failed(slot, RedisGateway.unwrap(failure), now);
            return;
        }
        if (slotFailures[slot] > 0) {
            slotFailures[slot] = 0;
            if (--failingSlots == 0) {
                log.info("RMQ listener container '{}' polls every slot of topic '{}' again", id, topic);
            }
        }
        if (result.redisNow() >= 0) {
            clock.bracket(result.redisNow() - now, result.redisNow() - pop.sentMillis);
        }
        slotNextDue[slot] = result.slotNextDue()[0];
        if (!shares.mine(slot)) {
            shares.stole(slot, result.deliveries().size(), pop.asked);
        }
    }

    private void failed(int slot, Throwable error, long now) {
        if (error instanceof Pop.SlotMoved) {
            slotNextDue[slot] = 0; // poll it again at once, on its new node
            return;
        }
        // only this slot waits before its next try, the others go on: a quick retry first, then backing off
        // to ERROR_PAUSE_MILLIS; but every FIRST_RETRY_MILLIS while the cluster refuses commands (it does so
        // from the moment a master is marked failed until its replica takes over, and the healthy slots
        // should go on as soon as it has)
        boolean firstOfAll = failingSlots == 0;
        if (slotFailures[slot]++ == 0) {
            failingSlots++;
        }
        boolean clusterDown = String.valueOf(error.getMessage()).contains("CLUSTERDOWN");
        long pause = clusterDown ? FIRST_RETRY_MILLIS
                : Math.min(ERROR_PAUSE_MILLIS, FIRST_RETRY_MILLIS << Math.min(10, slotFailures[slot] - 1));
        slotNextDue[slot] = now + clock.offset() + pause;
        // one line when polling starts to fail (not one per slot), then one a minute per slot still failing
        if (firstOfAll || slotFailures[slot] % 60 == 0) {
            log.warn("RMQ listener container '{}' failed to poll slot {} of topic '{}' ({} failed pop(s) in a row);"
                    + " retrying each failing slot, backing off to every {} ms; the other slots go on: {}", id, slot,
                    topic, slotFailures[slot], ERROR_PAUSE_MILLIS, String.valueOf(error),
                    log.isDebugEnabled() ? error : null);
        }
    }
}
