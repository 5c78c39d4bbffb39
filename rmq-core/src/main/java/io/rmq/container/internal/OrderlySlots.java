package io.rmq.container.internal;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The slots an {@link OrderlyListenerContainer} owns, and the one lock under which every scheduling decision about
 * them is made: which slot is owned, which earlier object of a slot still runs, and which run of the container is
 * current. The jobs that decide live beside it, each on its own threads, all under this lock:
 * {@link LaneScheduler} (handler threads: take work, finish a step or a lane, wake-ups), {@link StepBook} (the
 * thread stepping a slot: what the step reports and takes), {@link OwnershipChanges} (the coordination thread and
 * stop: slots claimed, given up, lost) and {@link OrderlyPauseGate} (pause and resume). Threads: its maps are read and
 * changed only under {@link #lock}, which any of those threads takes; {@code stopping} and {@code generation} are
 * also read without it. Each start is a new {@linkplain #generation() generation}: a thread of an earlier run that
 * outlived its stop (a handler slower than the shutdown timeout) sees it is no longer current and ends, and the slots
 * that run left behind are forgotten.
 *
 * <h2>Invariants</h2>
 * <ol>
 * <li value="2">No slot is handed out whose number an earlier, lost slot object still runs ({@link #runsElsewhere}: a
 * slot lost while its handlers run and claimed again, e.g. after this instance dropped out of the membership, waits
 * for those runs to end).</li>
 * <li value="3">Owned slots, their due times, lanes, reports, {@code stepping} and {@code releasing} change only
 * under {@link #lock}; threads wait on its condition {@link #changed} for at most {@link LaneScheduler}'s bound, and
 * whatever changes it signals.</li>
 * </ol>
 */
final class OrderlySlots {

    final String id;
    final String topic;

    final ReentrantLock lock = new ReentrantLock();
    final Condition changed = lock.newCondition();
    /** Owned slots by number. */
    final Map<Integer, OrderlySlot> owned = new TreeMap<>();
    /** Slots lost while a thread ran them, by number, until that run ends (invariant 2). */
    final Map<Integer, OrderlySlot> lostRunning = new HashMap<>();
    /** Set by stop() (then signalled), cleared by start(); read anywhere. */
    private volatile boolean stopping;
    /** Counts the starts (written under the lock by {@link #starting()}); read anywhere. */
    private volatile long generation;

    OrderlySlots(String id, String topic) {
        this.id = id;
        this.topic = topic;
    }

    // ---------------------------------------------------------------- lifecycle

    boolean isStopping() {
        return stopping;
    }

    /**
     * A new run: forgets the slots an earlier run left behind (still marked busy by a handler that outlived the
     * stop: they were not given up, and are taken over once their ownership runs out), and begins a new generation.
     */
    void starting() {
        lock.lock();
        try {
            owned.clear();
            lostRunning.clear();
            generation++;
            stopping = false;
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
    }

    /** The current run's generation: a thread reads it as it begins, and runs while {@link #isCurrent} says so. */
    long generation() {
        return generation;
    }

    /** Whether a thread of run {@code generation} goes on: not stopping, and no start since. */
    boolean isCurrent(long generation) {
        return !stopping && this.generation == generation;
    }

    /** No slot is handed out, and no handler starts, from now on; {@link #signalChange()} wakes the waiters. */
    void markStopping() {
        stopping = true;
    }

    void signalChange() {
        locked(() -> {
            changed.signalAll();
            return null;
        });
    }

    /** Sleeps until {@code at} (local ms) or until stopping is signalled; stop() does not interrupt. */
    void awaitUntil(long at) throws InterruptedException {
        lock.lock();
        try {
            long left;
            while (!stopping && (left = at - System.currentTimeMillis()) > 0) {
                changed.await(left, TimeUnit.MILLISECONDS);
            }
        }
        finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- under the lock, for the jobs beside it

    /**
     * Under the lock, after a thread let go of {@code s}: a lost slot no longer blocks its number once nothing runs
     * it; a slot being given up that nothing runs any more is marked stepping for the caller to give it up (true).
     */
    boolean ended(OrderlySlot s) {
        if (!s.busy()) {
            lostRunning.remove(s.slot, s);
        }
        boolean release = s.releasing && !s.busy() && owned.get(s.slot) == s && !stopping;
        if (release) {
            s.stepping = true;
        }
        changed.signalAll();
        return release;
    }

    /** Under the lock: an earlier object of {@code s}'s slot, lost, is still run by a thread. */
    boolean runsElsewhere(OrderlySlot s) {
        OrderlySlot earlier = lostRunning.get(s.slot);
        return earlier != null && earlier != s;
    }

    /** Under the lock: {@code s} is still the owned object of its slot, not being given up, and the run goes on. */
    boolean live(OrderlySlot s) {
        return owned.get(s.slot) == s && !s.releasing && !stopping;
    }

    /** {@code action} under the lock: for the views, the step bookkeeping and ownership changes, none per message. */
    <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        }
        finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- views

    Set<Integer> ownedSlots() {
        return locked(() -> Collections.unmodifiableSet(new TreeSet<>(owned.keySet())));
    }

    /** Owned slots where a group's failed head waits for its retry (as of each slot's last step). */
    Set<Integer> suspendedSlots() {
        long now = System.currentTimeMillis();
        return locked(() -> {
            TreeSet<Integer> suspended = new TreeSet<>();
            for (OrderlySlot s : owned.values()) {
                if (s.suspendedUntil > now) {
                    suspended.add(s.slot);
                }
            }
            return Collections.unmodifiableSet(suspended);
        });
    }
}
