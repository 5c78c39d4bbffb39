package io.rmq.container.internal;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.rmq.consumer.PollResult;

/**
 * Everything other threads tell a CONCURRENT container's poller, and how they wake it. The poller's scheduling state
 * has one owner, the poller thread; other threads (Lettuce's event loop, the deadline and timer threads, the wake-up
 * subscriber, callers of pause/resume) never touch it: they {@linkplain #post post an event} and unpark the poller.
 * The poller drains the queue completely at the top of every pass; an event is never cleared or dropped unseen (only
 * {@link #clear} at start, before anything runs that could post one).
 * <p>
 * Threads: the queue is concurrent; {@link #poller} is written by the container's lifecycle and its watchdog (a
 * restart), read by any thread; {@link #plannedWake} is written by the poller around its sleep and taken by others.
 */
final class PollerEvents {

    sealed interface Event permits PopFinished, Wake, Resync, TopologyChecked, SlotsChecked, Members {
    }

    /** The idle check ended: per slot whether it holds anything ({@code occupied}), or its error. */
    record SlotsChecked(long[] occupied, Throwable error) implements Event {
    }

    /** A slot's pop ended: its result, or its error (a timeout, or its abandonment, included). */
    record PopFinished(Pop pop, PollResult result, Throwable error) implements Event {
    }

    /** A topology refresh the poller asked for has ended: pops sent to a node that lost their slot go again. */
    record TopologyChecked() implements Event {
    }

    /** A wake-up announcement: a slot got a new first message due at {@code due} (Redis clock). */
    record Wake(int slot, long due) implements Event {
    }

    /** Poll every slot now (after a resubscription that may have missed announcements, or a watchdog repair). */
    record Resync(boolean abandonOldPops) implements Event {
    }

    /**
     * The engine's heartbeat among the topic's consumers answered member {@code memberId} (one run of the container):
     * the live members ({@link SlotShares}), or its error.
     */
    record Members(String memberId, List<String> live, Throwable error) implements Event {
    }

    private final ConcurrentLinkedQueue<Event> queue = new ConcurrentLinkedQueue<>();
    /**
     * When the poller's sleep ends (local ms), 0 while it is awake: others unpark it only while it sleeps. A thread
     * that unparks it for room may clear it first (the poller is then as good as awake: the unpark's permit ends or
     * prevents its sleep).
     */
    private final AtomicLong plannedWake = new AtomicLong();
    private volatile Thread poller;

    void poller(Thread thread) {
        poller = thread;
    }

    Thread poller() {
        return poller;
    }

    /** Adds {@code event} and wakes the poller. */
    void post(Event event) {
        queue.add(event);
        unpark();
    }

    /** Adds {@code event} without waking the poller (the caller decides, see {@link #plannedWake()}). */
    void add(Event event) {
        queue.add(event);
    }

    void unpark() {
        Thread thread = poller;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    /** The next event, or null (poller thread). */
    Event next() {
        return queue.poll();
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** At start only, before anything runs that could post. */
    void clear() {
        queue.clear();
    }

    /** When the poller's sleep ends (local ms), 0 while it is awake. */
    long plannedWake() {
        return plannedWake.get();
    }

    /**
     * The poller plans its sleep ({@code millis} > 0) or is awake (0). Set-then-check by the poller, add-then-read by
     * the others (both sequentially consistent): an event added after the poller's check sees the planned wake and
     * unparks, and one added before it is seen by the check.
     */
    void planWake(long millis) {
        plannedWake.set(millis);
    }

    /** Takes the planned wake and unparks the poller; false when another thread took it first (one unpark a sleep). */
    boolean takeWake() {
        if (plannedWake.getAndSet(0) == 0) {
            return false;
        }
        unpark();
        return true;
    }
}
