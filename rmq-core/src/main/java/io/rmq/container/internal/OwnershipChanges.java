package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Changes to the set of slots an {@link OrderlyListenerContainer} owns, as its ownership decides them: a slot claimed,
 * renewed, being given up, given up or lost. Threads: no state of its own; called by the coordination thread
 * ({@link SlotOwnership}), by stop() (the slots given up at the end), and by the thread that learns a step was fenced
 * ({@link #lost}); everything is read and changed under the lock of {@link OrderlySlots}, in one hold per change, so
 * that no handler thread takes a slot halfway through one.
 */
final class OwnershipChanges {

    /** Logs under the container's name ({@link ContainerLoggers}). */
    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.ORDERLY);

    private final OrderlySlots slots;

    OwnershipChanges(OrderlySlots slots) {
        this.slots = slots;
    }

    /** The owned slots now, in slot order. */
    List<OrderlySlot> held() {
        return slots.locked(() -> new ArrayList<>(slots.owned.values()));
    }

    /** A slot claimed under {@code epoch}: owned from now on, and due at once. */
    void add(int slot, long epoch, long validUntil) {
        slots.locked(() -> {
            slots.owned.put(slot, new OrderlySlot(slot, epoch, validUntil, System.currentTimeMillis()));
            slots.changed.signalAll();
            return null;
        });
    }

    /**
     * After a renewal of {@code held}, in one hold of the lock (so no handler thread takes a slot in between): makes
     * due again the slots put aside whose guard the renewal restored ({@code mayStart}), and marks those no longer
     * {@code assigned} as being given up. Returns the latter.
     */
    List<OrderlySlot> renewed(List<OrderlySlot> held, Set<Integer> assigned, Predicate<OrderlySlot> mayStart) {
        return slots.locked(() -> {
            List<OrderlySlot> releasing = new ArrayList<>(0);
            long now = System.currentTimeMillis();
            for (OrderlySlot s : held) {
                if (s.guardLapsed && !s.stepping && mayStart.test(s)) {
                    s.guardLapsed = false;
                    s.dueAt = Math.min(s.dueAt, now);
                }
            }
            slots.changed.signalAll();
            for (OrderlySlot s : held) {
                if (!assigned.contains(s.slot) && !s.releasing && slots.owned.get(s.slot) == s) {
                    s.releasing = true;
                    releasing.add(s);
                }
            }
            return releasing;
        });
    }

    /** Marks a slot that is being given up as stepping, if no thread runs it; true when the caller gives it up. */
    boolean takeForRelease(OrderlySlot s) {
        return slots.locked(() -> {
            if (s.busy() || slots.owned.get(s.slot) != s || slots.runsElsewhere(s)) {
                return false;
            }
            s.stepping = true;
            return true;
        });
    }

    /** A slot given up: no longer owned, and no longer run (lost during its release, it blocks its number no more). */
    void remove(OrderlySlot s) {
        slots.locked(() -> {
            slots.owned.remove(s.slot, s);
            slots.lostRunning.remove(s.slot, s);
            slots.changed.signalAll();
            return null;
        });
    }

    /** The slot is no longer this instance's (fenced with {@code epoch}): forget it, unless it was claimed anew. */
    void lost(OrderlySlot s, long epoch, String why) {
        boolean forgotten = slots.locked(() -> {
            if (s.epoch != epoch || slots.owned.get(s.slot) != s) {
                return false;
            }
            slots.owned.remove(s.slot);
            s.lost = true;
            if (s.busy()) {
                slots.lostRunning.put(s.slot, s); // no new object of this slot is handed out until its runs end
            }
            slots.changed.signalAll();
            return true;
        });
        if (forgotten) {
            log.info("ORDERLY container '{}' lost slot {} of topic '{}' ({}); what it had not settled is handled by"
                    + " the new owner", slots.id, s.slot, slots.topic, why);
        }
    }

    /**
     * At stop, once the handler threads ended: waits until no owned slot is stepped (a report sent without waiting ends
     * when its reply is settled, within the command timeout) or until {@code deadlineNanos}, so that it is given up
     * cleanly rather than left to run out.
     */
    void awaitStepsEnded(long deadlineNanos) {
        slots.lock.lock();
        try {
            while (slots.owned.values().stream().anyMatch(s -> s.stepping)) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                slots.changed.awaitNanos(left);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            slots.lock.unlock();
        }
    }

    /** The owned slots that no thread runs now (at stop: those are given up). */
    List<OrderlySlot> notRunning() {
        return slots.locked(() -> slots.owned.values().stream()
                .filter(s -> !s.busy() && !slots.runsElsewhere(s)).toList());
    }
}
