package io.rmq.container;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduling state of an {@link OrderlyListenerContainer}: which slots it owns, when each is next due, which are
 * running, whether it is paused and how many steps that take messages are under way. Threads: all of it is guarded by
 * {@link #lock}, which any thread takes (handler threads, the coordination thread, the wake-up subscriber, callers of
 * pause/resume/stop); {@code stopping}, {@code paused} and {@code generation} are also read without it. Each start is a
 * new {@linkplain #generation() generation}: a thread of an earlier run that outlived its stop (a handler slower than
 * the shutdown timeout) sees it is no longer current and ends, and the slots that run left behind are forgotten.
 *
 * <h2>Invariants</h2>
 * <ol>
 * <li value="2">At most one thread runs a slot at a time: {@link #takeReady} and {@link #takeForRelease} mark it
 * {@code running} under the lock and hand out no slot that is already running; only {@link #finishRun} clears the
 * mark (a slot given up or lost leaves the map still marked). {@link #takeReady} hands out no slot being given
 * up, and no slot whose number an earlier, lost slot object still runs (a slot lost while its handler runs and claimed
 * again, e.g. after this instance dropped out of the membership, waits for that run to end).</li>
 * <li value="3">Owned slots, their due times, {@code running} and {@code releasing} change only under {@link #lock};
 * handler threads wait on its condition for at most {@link #WAIT_BOUND_MILLIS}, and whatever changes it signals.</li>
 * <li value="5">While {@linkplain #pause() paused} (a flag written under the lock) no step takes messages: a step
 * that takes is counted in {@code takesUnderWay} by {@link #beginTake()}, decided under the lock, so
 * {@link #awaitTakesUnderWay} can wait for those under way and nothing is taken after it returns. Slots stay owned,
 * and {@link #takeReady} hands out a slot only to report what it handled.</li>
 * </ol>
 */
final class OrderlySlots {

    /** Logs under the container's name: operators tune one logger per listener container, as before the split. */
    private static final Logger log = LoggerFactory.getLogger(OrderlyListenerContainer.class);

    private static final long WAIT_BOUND_MILLIS = 1000;

    private final String id;
    private final String topic;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Owned slots by number. */
    private final Map<Integer, OrderlySlot> owned = new TreeMap<>();
    /** Slots lost while a thread ran them, by number, until that run ends (invariant 2). */
    private final Map<Integer, OrderlySlot> lostRunning = new HashMap<>();
    /** Set by stop() (then signalled), cleared by start(); read anywhere. */
    private volatile boolean stopping;
    /** Counts the starts (written under the lock by {@link #starting()}); read anywhere. */
    private volatile long generation;
    /** Set and cleared under the lock by {@link #pause()} / {@link #resume()}; read anywhere. */
    private volatile boolean paused;
    /** Steps that take messages and have not answered yet (incremented under the lock, only while not paused). */
    private int takesUnderWay;

    OrderlySlots(String id, String topic) {
        this.id = id;
        this.topic = topic;
    }

    // ---------------------------------------------------------------- lifecycle

    boolean isStopping() {
        return stopping;
    }

    /**
     * A new run: forgets the slots an earlier run left behind (still marked running by a handler that outlived the
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

    // ---------------------------------------------------------------- pause (invariant 5)

    boolean isPaused() {
        return paused;
    }

    /** Takes nothing more from now on; true when this call paused (it was not paused before). */
    boolean pause() {
        lock.lock();
        try {
            if (paused) {
                return false;
            }
            paused = true;
            changed.signalAll();
            return true;
        }
        finally {
            lock.unlock();
        }
    }

    /** Waits, while paused and at most until {@code deadline} (local ms), for the steps that take to answer. */
    void awaitTakesUnderWay(long deadline) {
        lock.lock();
        try {
            while (paused && takesUnderWay > 0) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    break;
                }
                changed.await(left, TimeUnit.MILLISECONDS);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            lock.unlock();
        }
    }

    /** Takes again: every owned slot that is not running is due now. False when it was not paused. */
    boolean resume() {
        lock.lock();
        try {
            if (!paused) {
                return false;
            }
            paused = false;
            long now = System.currentTimeMillis();
            for (OrderlySlot s : owned.values()) {
                if (!s.running) {
                    s.dueAt = Math.min(s.dueAt, now);
                }
            }
            changed.signalAll();
            return true;
        }
        finally {
            lock.unlock();
        }
    }

    /** Counts a step that takes messages, unless paused; false: paused, take nothing. */
    boolean beginTake() {
        lock.lock();
        try {
            if (paused) {
                return false;
            }
            takesUnderWay++;
            return true;
        }
        finally {
            lock.unlock();
        }
    }

    void endTake() {
        lock.lock();
        try {
            takesUnderWay--;
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- handler threads (invariant 2)

    /**
     * Waits for an owned slot that is due and not running, and marks it running; null once run {@code generation} is
     * no longer {@linkplain #isCurrent current} (stopping, or started again).
     */
    OrderlySlot takeReady(long generation) throws InterruptedException {
        lock.lock();
        try {
            while (isCurrent(generation)) {
                long now = System.currentTimeMillis();
                OrderlySlot best = null;
                long earliest = paused ? now + WAIT_BOUND_MILLIS : Long.MAX_VALUE; // resume() signals
                for (OrderlySlot s : owned.values()) {
                    if (s.running || s.releasing || runsElsewhere(s)) {
                        continue;
                    }
                    if (paused) {
                        // only to report what it handled (a slot's turn can end with acks not yet sent): its run
                        // sees the pause and takes nothing
                        if (s.hasReport()) {
                            best = s;
                            break;
                        }
                        continue;
                    }
                    if (s.dueAt <= now && (best == null || s.dueAt < best.dueAt)) {
                        best = s;
                    }
                    earliest = Math.min(earliest, s.dueAt);
                }
                if (best != null) {
                    best.running = true;
                    best.wokenAt = Long.MAX_VALUE;
                    return best;
                }
                changed.await(Math.max(1, Math.min(earliest - now, WAIT_BOUND_MILLIS)), TimeUnit.MILLISECONDS);
            }
            return null;
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * Ends a run: the slot is due at {@code nextDue} (or sooner, if announced meanwhile). True when it is being given
     * up: it stays marked running, and the caller gives it up.
     */
    boolean finishRun(OrderlySlot s, long nextDue) {
        lock.lock();
        try {
            s.running = false;
            lostRunning.remove(s.slot, s);
            // an announcement that came while the slot ran may be sooner than what its last step said
            s.dueAt = Math.min(nextDue, s.wokenAt);
            s.wokenAt = Long.MAX_VALUE;
            boolean release = s.releasing && owned.get(s.slot) == s && !stopping;
            if (release) {
                s.running = true;
            }
            changed.signalAll();
            return release;
        }
        finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- wake-ups

    /** A message of {@code slot} is due at {@code localDue} (local ms). */
    void wake(int slot, long localDue) {
        lock.lock();
        try {
            OrderlySlot s = owned.get(slot);
            if (s != null) {
                s.wokenAt = Math.min(s.wokenAt, localDue);
                if (!s.running) {
                    s.dueAt = Math.min(s.dueAt, s.wokenAt);
                }
                changed.signalAll();
            }
        }
        finally {
            lock.unlock();
        }
    }

    /** Announcements may have been missed: every owned slot is due now. */
    void wakeAll() {
        lock.lock();
        try {
            long now = System.currentTimeMillis();
            owned.values().forEach(s -> s.wokenAt = now);
            owned.values().stream().filter(s -> !s.running).forEach(s -> s.dueAt = now);
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- ownership changes (coordination thread, stop)

    /** The owned slots now, in slot order. */
    List<OrderlySlot> held() {
        return locked(() -> new ArrayList<>(owned.values()));
    }

    /** The owned slots that no thread runs now (at stop: those are given up). */
    List<OrderlySlot> notRunning() {
        return locked(() -> owned.values().stream().filter(s -> !s.running && !runsElsewhere(s)).toList());
    }

    /**
     * After a renewal of {@code held}, in one hold of the lock (so no handler thread takes a slot in between): makes
     * due again the slots put aside whose guard the renewal restored ({@code mayStart}), and marks those no longer
     * {@code assigned} as being given up. Returns the latter.
     */
    List<OrderlySlot> renewed(List<OrderlySlot> held, Set<Integer> assigned, Predicate<OrderlySlot> mayStart) {
        List<OrderlySlot> releasing = new ArrayList<>(0);
        lock.lock();
        try {
            long now = System.currentTimeMillis();
            for (OrderlySlot s : held) {
                if (s.guardLapsed && !s.running && mayStart.test(s)) {
                    s.guardLapsed = false;
                    s.dueAt = Math.min(s.dueAt, now);
                }
            }
            changed.signalAll();
            for (OrderlySlot s : held) {
                if (!assigned.contains(s.slot) && !s.releasing && owned.get(s.slot) == s) {
                    s.releasing = true;
                    releasing.add(s);
                }
            }
        }
        finally {
            lock.unlock();
        }
        return releasing;
    }

    /** A slot claimed under {@code epoch}: owned from now on, and due at once. */
    void add(int slot, long epoch, long validUntil) {
        locked(() -> {
            owned.put(slot, new OrderlySlot(slot, epoch, validUntil, System.currentTimeMillis()));
            changed.signalAll();
            return null;
        });
    }

    /** Marks a slot that is being given up as running, if no thread runs it; true when the caller gives it up. */
    boolean takeForRelease(OrderlySlot s) {
        lock.lock();
        try {
            if (s.running || owned.get(s.slot) != s || runsElsewhere(s)) {
                return false;
            }
            s.running = true;
            return true;
        }
        finally {
            lock.unlock();
        }
    }

    /** A slot given up: no longer owned, and no longer run (lost during its release, it blocks its number no more). */
    void remove(OrderlySlot s) {
        locked(() -> {
            owned.remove(s.slot, s);
            lostRunning.remove(s.slot, s);
            changed.signalAll();
            return null;
        });
    }

    /** The slot is no longer this instance's (fenced with {@code epoch}): forget it, unless it was claimed anew. */
    void lost(OrderlySlot s, long epoch, String why) {
        lock.lock();
        try {
            if (s.epoch != epoch || owned.get(s.slot) != s) {
                return;
            }
            owned.remove(s.slot);
            if (s.running) {
                lostRunning.put(s.slot, s); // no new object of this slot is handed out until this run ends
            }
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
        log.info("ORDERLY container '{}' lost slot {} of topic '{}' ({}); what it had not settled is handled by the"
                + " new owner", id, s.slot, topic, why);
    }

    /** Under the lock: an earlier object of {@code s}'s slot, lost, is still run by a thread. */
    private boolean runsElsewhere(OrderlySlot s) {
        OrderlySlot earlier = lostRunning.get(s.slot);
        return earlier != null && earlier != s;
    }

    // ---------------------------------------------------------------- views

    Set<Integer> ownedSlots() {
        return locked(() -> Collections.unmodifiableSet(new TreeSet<>(owned.keySet())));
    }

    /** Owned slots whose failed head waits for its retry (as of each slot's last step). */
    Set<Integer> suspendedSlots() {
        long now = System.currentTimeMillis();
        lock.lock();
        try {
            TreeSet<Integer> suspended = new TreeSet<>();
            for (OrderlySlot s : owned.values()) {
                if (s.suspendedUntil > now) {
                    suspended.add(s.slot);
                }
            }
            return Collections.unmodifiableSet(suspended);
        }
        finally {
            lock.unlock();
        }
    }

    /** {@code action} under the lock: for the views and ownership changes, none of them per message. */
    private <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        }
        finally {
            lock.unlock();
        }
    }
}
