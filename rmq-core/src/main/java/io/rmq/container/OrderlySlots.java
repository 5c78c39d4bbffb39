package io.rmq.container;

import java.nio.ByteBuffer;
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

import io.rmq.consumer.Delivery;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduling state of an {@link OrderlyListenerContainer}: which slots it owns, when each is next due, which are
 * being stepped, their lanes (one per group: what was taken, in order) and what those handled, whether it is paused
 * and how many steps that take messages are under way. Threads: all of it is guarded by {@link #lock}, which any
 * thread takes (handler threads, the coordination thread, the wake-up subscriber, callers of pause/resume/stop);
 * {@code stopping}, {@code paused} and {@code generation} are also read without it. Each start is a new
 * {@linkplain #generation() generation}: a thread of an earlier run that outlived its stop (a handler slower than the
 * shutdown timeout) sees it is no longer current and ends, and the slots that run left behind are forgotten.
 *
 * <h2>Invariants</h2>
 * <ol>
 * <li value="2">At most one thread steps a slot at a time ({@code stepping}), and at most one runs each of its lanes
 * ({@code running}), marked under the lock by {@link #takeWork}, {@link #finishLane}, {@link #reportMidRun} and
 * {@link #takeForRelease},
 * cleared by {@link #finishStep} and {@link #finishLane} only (a slot given up or lost leaves the map still marked).
 * A lane's deliveries are handed to its thread in order, and a lane whose failure is not reported yet gets none
 * ({@link #stepped}). No lane starts and no step takes on a slot being given up, and no slot is handed out whose number
 * an earlier, lost slot object still runs (a slot lost while its handlers run and claimed again, e.g. after this
 * instance dropped out of the membership, waits for those runs to end).</li>
 * <li value="3">Owned slots, their due times, lanes, reports, {@code stepping} and {@code releasing} change only
 * under {@link #lock}; handler threads wait on its condition for at most {@link #WAIT_BOUND_MILLIS}, and whatever
 * changes it signals.</li>
 * <li value="5">While {@linkplain #pause() paused} (a flag written under the lock) no step takes messages: a step
 * that takes is counted in {@code takesUnderWay} by {@link #beginTake()}, decided under the lock, so
 * {@link #awaitTakesUnderWay} can wait for those under way and nothing is taken after it returns. Slots stay owned,
 * {@link #takeWork} hands out steps only to report what was handled, and lanes keep running what was taken.</li>
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

    /** Takes again: every owned slot that is not stepping is due now. False when it was not paused. */
    boolean resume() {
        lock.lock();
        try {
            if (!paused) {
                return false;
            }
            paused = false;
            long now = System.currentTimeMillis();
            for (OrderlySlot s : owned.values()) {
                if (!s.stepping) {
                    s.dueAt = Math.min(s.dueAt, now);
                }
                else {
                    s.wokenAt = Math.min(s.wokenAt, now); // its step under way ends due at once
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

    /** What a handler thread does next: run {@code lane} of {@code slot}, or (null) step it. */
    record Work(OrderlySlot slot, @Nullable LaneRun lane) {
    }

    /** A lane marked running, and the deliveries its run handles in order. */
    record LaneRun(OrderlyLane lane, List<Delivery> deliveries) {
    }

    /** What follows a lane's run: the caller's action, and the next ready lane of the slot it runs (or null). */
    record LaneEnd(AfterLane after, @Nullable LaneRun next) {
    }

    /** Under the lock: marks the slot's first ready lane running and hands its queue out. */
    private LaneRun startLane(OrderlySlot s) {
        OrderlyLane lane = s.ready.poll();
        lane.ready = false;
        lane.running = true;
        s.lanesRunning++;
        List<Delivery> deliveries = new ArrayList<>(lane.queue);
        lane.queue.clear();
        s.queued -= deliveries.size();
        return new LaneRun(lane, deliveries);
    }



    /**
     * Waits for work and marks it: a slot whose report is urgent ({@link OrderlySlot#reportUrgent}; marked stepping),
     * else a ready lane of a slot that may start handlers (marked running, its queue handed out), else a slot due for a
     * step that takes messages, with few queued ({@code queued <= batch / 2}; marked stepping). Null once run
     * {@code generation} is no longer {@linkplain #isCurrent current} (stopping, or started again). While paused,
     * lanes still run what was taken (the container finishes what it has in hand) and steps only report.
     */
    @Nullable Work takeWork(long generation, int batch, Predicate<OrderlySlot> mayStart) throws InterruptedException {
        lock.lock();
        try {
            while (isCurrent(generation)) {
                long now = System.currentTimeMillis();
                OrderlySlot report = null;
                OrderlySlot laneSlot = null;
                OrderlySlot take = null;
                long earliest = paused ? now + WAIT_BOUND_MILLIS : Long.MAX_VALUE; // resume() signals
                for (OrderlySlot s : owned.values()) {
                    if (s.releasing || runsElsewhere(s)) {
                        continue;
                    }
                    if (!s.stepping && s.reportUrgent(batch, now)) {
                        if (s.reportNotBefore <= now) {
                            report = s;
                            break;
                        }
                        earliest = Math.min(earliest, s.reportNotBefore);
                    }
                    else if (!s.stepping) {
                        earliest = Math.min(earliest, s.reportDueAt()); // its acks are due soon however busy it is
                    }
                    // lanes: of the slot with the fewest running, so that threads spread over the slots
                    if (!s.ready.isEmpty() && (laneSlot == null || s.lanesRunning < laneSlot.lanesRunning)
                            && mayStart.test(s)) {
                        laneSlot = s;
                    }
                    if (s.stepping || paused || s.queued > batch / 2) {
                        continue;
                    }
                    if (s.dueAt <= now && (take == null || s.dueAt < take.dueAt)) {
                        take = s;
                    }
                    earliest = Math.min(earliest, s.dueAt);
                }
                if (report != null) {
                    report.stepping = true;
                    return new Work(report, null);
                }
                if (laneSlot != null) {
                    return new Work(laneSlot, startLane(laneSlot));
                }
                if (take != null) {
                    take.stepping = true;
                    take.wokenAt = Long.MAX_VALUE;
                    return new Work(take, null);
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
     * Ends a step: the slot is due at {@code nextDue} (or sooner, if announced meanwhile). True when it is being given
     * up and nothing runs it any more: it stays marked stepping, and the caller gives it up.
     */
    boolean finishStep(OrderlySlot s, long nextDue) {
        lock.lock();
        try {
            s.stepping = false;
            // an announcement that came while the slot stepped may be sooner than what its step said
            s.dueAt = Math.min(nextDue, s.wokenAt);
            s.wokenAt = Long.MAX_VALUE;
            return ended(s);
        }
        finally {
            lock.unlock();
        }
    }

    /** What {@link #finishLane} asks of the thread that ran the lane. */
    enum AfterLane {
        NOTHING, STEP, GIVE_UP
    }

    /**
     * Ends a lane's run: {@code acked} (with their scopes) and {@code failure} go into the slot's report; after a
     * failure, what the lane still holds ({@code notStarted} and its queue) is returned unstarted; without one,
     * {@code notStarted} (the run stopped early: the guard, the epoch, a stop) is queued again in front. Its action is
     * STEP when the caller sends the slot's report now ({@link OrderlySlot#reportUrgent}; it is marked stepping: acks
     * do not wait for the slot's next turn), GIVE_UP when the slot is being given up and nothing runs it any more.
     * With {@code mayStart} (the run ended normally) and nothing to do first, the caller goes on with the slot's next
     * ready lane (marked running here: one hold of the lock for both, where short handlers spend most of their time);
     * the other lanes stay in the ready queue for any thread, so a slow lane holds back no other.
     */
    LaneEnd finishLane(OrderlySlot s, OrderlyLane lane, List<Delivery> acked, List<HandleScope> ackedScopes,
            StepReport.@Nullable Failure failure, List<Delivery> notStarted, int batch,
            @Nullable Predicate<OrderlySlot> mayStart) {
        lock.lock();
        try {
            long now = System.currentTimeMillis();
            s.report.acked.addAll(acked);
            s.report.ackedScopes.addAll(ackedScopes);
            if (failure != null) {
                s.report.failures.add(failure);
                lane.failedPending = true;
                s.report.returned.addAll(notStarted);
                s.report.returned.addAll(lane.queue);
                s.queued -= lane.queue.size();
                lane.queue.clear();
            }
            else if (!notStarted.isEmpty()) {
                for (int i = notStarted.size() - 1; i >= 0; i--) {
                    lane.queue.addFirst(notStarted.get(i));
                }
                s.queued += notStarted.size();
            }
            s.report.added(now);
            lane.running = false;
            s.lanesRunning--;
            if (!lane.queue.isEmpty() && !lane.failedPending) {
                lane.ready = true;
                s.ready.add(lane);
            }
            else if (lane.idle()) {
                s.lanes.remove(lane.group, lane);
            }
            if (ended(s)) {
                return new LaneEnd(AfterLane.GIVE_UP, null);
            }
            if (!s.stepping && s.reportUrgent(batch, now) && s.reportNotBefore <= now
                    && owned.get(s.slot) == s && !s.releasing && !stopping) {
                s.stepping = true;
                return new LaneEnd(AfterLane.STEP, null);
            }
            changed.signalAll();
            if (mayStart != null && !s.ready.isEmpty() && owned.get(s.slot) == s && !s.releasing && !s.lost
                    && !stopping && mayStart.test(s) && !reportDueElsewhere(s, batch, now)) {
                return new LaneEnd(AfterLane.NOTHING, startLane(s));
            }
            return new LaneEnd(AfterLane.NOTHING, null);
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * A lane's run that goes on: its {@code acked} so far (the first at {@code since}, local ms) join the slot's report
     * now rather than at the run's end. True when the caller sends the report at once (it is urgent and no other
     * thread steps the slot: marked stepping, the caller steps, then goes on with its lane).
     */
    boolean reportMidRun(OrderlySlot s, List<Delivery> acked, List<HandleScope> ackedScopes, long since, int batch) {
        lock.lock();
        try {
            long now = System.currentTimeMillis();
            s.report.acked.addAll(acked);
            s.report.ackedScopes.addAll(ackedScopes);
            s.report.added(since);
            if (!s.stepping && s.reportUrgent(batch, now) && s.reportNotBefore <= now && owned.get(s.slot) == s
                    && !s.releasing && !stopping) {
                s.stepping = true;
                return true;
            }
            changed.signalAll();
            return false;
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: another owned slot's report is due and no thread steps it. The thread that ended a lane of
     * {@code s} goes back to {@link #takeWork} (which sends due reports first) instead of staying on {@code s}: a slot
     * whose threads all moved on must not keep its acks for as long as another slot has lanes ready.
     */
    private boolean reportDueElsewhere(OrderlySlot s, int batch, long now) {
        for (OrderlySlot other : owned.values()) {
            if (other != s && !other.stepping && !other.releasing && other.reportNotBefore <= now
                    && other.reportUrgent(batch, now)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Under the lock, after a thread let go of {@code s}: a lost slot no longer blocks its number once nothing runs
     * it; a slot being given up that nothing runs any more is marked stepping for the caller to give it up (true).
     */
    private boolean ended(OrderlySlot s) {
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

    // ---------------------------------------------------------------- steps (the stepping thread)

    /** When {@code s} next wants a step that takes (local ms). */
    long dueAt(OrderlySlot s) {
        return locked(() -> s.dueAt);
    }

    /** Whether {@code s}'s lanes handled something not reported yet. */
    boolean hasReport(OrderlySlot s) {
        return locked(s::hasReport);
    }

    /** Whether a step of {@code s} should take messages: due, not paused nor given up, few queued in its lanes. */
    boolean wantsTake(OrderlySlot s, int batch) {
        return locked(() -> {
            boolean take = !paused && !s.releasing && s.queued <= batch / 2
                    && (Math.min(s.dueAt, s.wokenAt) <= System.currentTimeMillis()
                            || s.takeWithReport && s.hasReport());
            if (take) {
                s.takeWithReport = false;
            }
            return take;
        });
    }

    /** A step that took found nothing: the next one that reports takes too (see {@link OrderlySlot#takeWithReport}). */
    void tookNothing(OrderlySlot s) {
        locked(() -> s.takeWithReport = true);
    }

    /** The slot's report, moved out for a step to send. */
    StepReport drainReport(OrderlySlot s) {
        return locked(() -> {
            StepReport report = s.report.drain();
            // a common-lane failure alone holds nothing: Redis suspends the lane or has moved the message on
            OrderlyLane common = s.lanes.get("");
            report.serial = common != null && (common.running || !common.queue.isEmpty());
            return report;
        });
    }

    /** Whether the next step of {@code s} hands out every held message first. */
    boolean resync(OrderlySlot s) {
        return locked(() -> s.resync);
    }

    /**
     * A step whose outcome is unknown: its report goes back in front, sent again after {@code pauseMillis} (no tight
     * loop while Redis is away), and the next step resyncs.
     */
    void stepUnknown(OrderlySlot s, StepReport unsent, long pauseMillis) {
        locked(() -> {
            s.report.restore(unsent);
            s.reportNotBefore = System.currentTimeMillis() + pauseMillis;
            s.resync = true;
            return null;
        });
    }

    /**
     * A step Redis has run: what it reported is no longer held here, the lanes whose failure it reported take
     * messages again, and (unless fenced) {@code deliveries} join their lanes in order — but not what is held here
     * already (handed out again), and not what comes for a lane whose failure is not reported yet (returned). Returns
     * how many of them are new deliveries (not held here, nor returned unstarted before).
     */
    int stepped(OrderlySlot s, StepReport sent, boolean resynced, boolean fenced, List<Delivery> deliveries) {
        lock.lock();
        try {
            int fresh = 0;
            if (resynced) {
                s.resync = false;
            }
            for (Delivery d : sent.acked) {
                s.holding.remove(ByteBuffer.wrap(d.member()));
            }
            for (Delivery d : sent.returned) {
                s.holding.remove(ByteBuffer.wrap(d.member()));
                s.unstarted.add(ByteBuffer.wrap(d.member()));
            }
            for (StepReport.Failure failure : sent.failures) {
                s.holding.remove(ByteBuffer.wrap(failure.delivery().member()));
                OrderlyLane lane = s.lanes.get(laneOf(failure.delivery()));
                if (lane != null) {
                    lane.failedPending = false;
                    if (lane.idle()) {
                        s.lanes.remove(lane.group, lane);
                    }
                }
            }
            if (fenced) {
                return 0;
            }
            for (Delivery d : deliveries) {
                ByteBuffer member = ByteBuffer.wrap(d.member());
                if (!s.holding.add(member)) {
                    continue;
                }
                if (!s.unstarted.remove(member)) {
                    fresh++;
                }
                String group = laneOf(d);
                OrderlyLane lane = s.lanes.computeIfAbsent(group, OrderlyLane::new);
                if (lane.failedPending) {
                    s.report.returned.add(d);
                    s.report.added(System.currentTimeMillis());
                    continue;
                }
                lane.queue.add(d);
                s.queued++;
                if (!lane.running && !lane.ready) {
                    lane.ready = true;
                    s.ready.add(lane);
                }
            }
            changed.signalAll();
            return fresh;
        }
        finally {
            lock.unlock();
        }
    }

    /** The lane of a delivery: its group, or the slot's common lane for one stored without (as orderly_lane). */
    static String laneOf(Delivery d) {
        String group = d.group();
        return group == null ? "" : group;
    }

    // ---------------------------------------------------------------- wake-ups

    /** A message of {@code slot} is due at {@code localDue} (local ms). */
    void wake(int slot, long localDue) {
        lock.lock();
        try {
            OrderlySlot s = owned.get(slot);
            if (s != null) {
                s.wokenAt = Math.min(s.wokenAt, localDue);
                if (!s.stepping) {
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
            owned.values().stream().filter(s -> !s.stepping).forEach(s -> s.dueAt = now);
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

    /**
     * At stop, once the handler threads ended: waits until no owned slot is stepped (a report sent without waiting ends
     * when its reply is settled, within the command timeout) or until {@code deadlineNanos}, so that it is given up
     * cleanly rather than left to run out.
     */
    void awaitStepsEnded(long deadlineNanos) {
        lock.lock();
        try {
            while (owned.values().stream().anyMatch(s -> s.stepping)) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                changed.awaitNanos(left);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            lock.unlock();
        }
    }

    /** The owned slots that no thread runs now (at stop: those are given up). */
    List<OrderlySlot> notRunning() {
        return locked(() -> owned.values().stream().filter(s -> !s.busy() && !runsElsewhere(s)).toList());
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
                if (s.guardLapsed && !s.stepping && mayStart.test(s)) {
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

    /** Marks a slot that is being given up as stepping, if no thread runs it; true when the caller gives it up. */
    boolean takeForRelease(OrderlySlot s) {
        lock.lock();
        try {
            if (s.busy() || owned.get(s.slot) != s || runsElsewhere(s)) {
                return false;
            }
            s.stepping = true;
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
            s.lost = true;
            if (s.busy()) {
                lostRunning.put(s.slot, s); // no new object of this slot is handed out until its runs end
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

    /** Owned slots where a group's failed head waits for its retry (as of each slot's last step). */
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
