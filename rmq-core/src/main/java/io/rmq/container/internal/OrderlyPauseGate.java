package io.rmq.container.internal;

import java.util.concurrent.TimeUnit;

/**
 * The pause gate of an {@link OrderlyListenerContainer}: whether its steps may take messages, and how many steps that
 * take are under way. Threads: {@link #pause()} and {@link #resume()} are called by the container's pause control
 * (its {@link PauseFlags}, on the caller's thread); {@link #beginTake()} and {@link #endTake()} by the thread stepping
 * a slot; the state changes only under the lock of {@link OrderlySlots}, and {@code paused} is read anywhere.
 *
 * <h2>Invariant 5</h2>
 * While {@linkplain #pause() paused} (a flag written under the lock) no step takes messages: a step that takes is
 * counted in {@code takesUnderWay} by {@link #beginTake()}, decided under the lock, so {@link #awaitTakesUnderWay} can
 * wait for those under way and nothing is taken after it returns. Slots stay owned, {@link LaneScheduler#takeWork}
 * hands out steps only to report what was handled, and lanes keep running what was taken.
 */
final class OrderlyPauseGate {

    private final OrderlySlots slots;
    /** Set and cleared under the lock by {@link #pause()} / {@link #resume()}; read anywhere. */
    private volatile boolean paused;
    /** Steps that take messages and have not answered yet (incremented under the lock, only while not paused). */
    private int takesUnderWay;

    OrderlyPauseGate(OrderlySlots slots) {
        this.slots = slots;
    }

    boolean isPaused() {
        return paused;
    }

    /** Takes nothing more from now on; true when this call paused (it was not paused before). */
    boolean pause() {
        slots.lock.lock();
        try {
            if (paused) {
                return false;
            }
            paused = true;
            slots.changed.signalAll();
            return true;
        }
        finally {
            slots.lock.unlock();
        }
    }

    /** Waits, while paused and at most until {@code deadline} (local ms), for the steps that take to answer. */
    void awaitTakesUnderWay(long deadline) {
        slots.lock.lock();
        try {
            while (paused && takesUnderWay > 0) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    break;
                }
                slots.changed.await(left, TimeUnit.MILLISECONDS);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            slots.lock.unlock();
        }
    }

    /** Takes again: every owned slot that is not stepping is due now. False when it was not paused. */
    boolean resume() {
        slots.lock.lock();
        try {
            if (!paused) {
                return false;
            }
            paused = false;
            long now = System.currentTimeMillis();
            for (OrderlySlot s : slots.owned.values()) {
                if (!s.stepping) {
                    s.dueAt = Math.min(s.dueAt, now);
                }
                else {
                    s.wokenAt = Math.min(s.wokenAt, now); // its step under way ends due at once
                }
            }
            slots.changed.signalAll();
            return true;
        }
        finally {
            slots.lock.unlock();
        }
    }

    /** Counts a step that takes messages, unless paused; false: paused, take nothing. */
    boolean beginTake() {
        slots.lock.lock();
        try {
            if (paused) {
                return false;
            }
            takesUnderWay++;
            return true;
        }
        finally {
            slots.lock.unlock();
        }
    }

    void endTake() {
        slots.lock.lock();
        try {
            takesUnderWay--;
            slots.changed.signalAll();
        }
        finally {
            slots.lock.unlock();
        }
    }
}
