package io.rmq.container;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.RmqConsumer.OrderedStep;
import io.rmq.consumer.RmqConsumer.Outcome;
import io.rmq.consumer.TopicRateLimiter;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.core.internal.Timeouts;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis.Claim;
import io.rmq.redis.internal.WakeUpSubscriber;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one ORDERLY listener: this instance owns some slots of the topic (which ones, the {@link SlotCoordinator}
 * decides; the ownership itself is claimed in Redis), and handles each owned slot's messages on one thread at a
 * time, one message after another, in the order Redis hands them over. {@code concurrency} threads handle up to that
 * many slots at once.
 * <p>
 * A coordination thread renews this instance's membership and its slots' ownership every fifth of the guard time
 * (below), claims the slots the coordinator assigns to it (once their previous owner released them or its time ran
 * out) and gives up those it no longer should own (after the handler running on the slot has finished; the
 * messages it had taken but not started stay, in order, for the next owner).
 *
 * <h2>Invariants</h2>
 * <ol>
 * <li>A slot's messages are taken and settled only under the epoch this instance holds for it: every step carries
 * the epoch and Redis refuses it otherwise (orderly_next.lua). Locally, no handler starts once another instance may
 * own the slot, by either clock: the guard time is the shorter of the ownership timeout (Redis's claim) and the
 * coordinator's {@link SlotCoordinator.Membership#assignmentTimeout() assignment timeout} (e.g. the ZooKeeper
 * session, after which another instance's claim overrides this one's), and a slot may start handlers until the start
 * of the last successful renewal + the guard time - one renewal period, while the coordinator vouches for its
 * assignment ({@link SlotCoordinator.Membership#assured()}), and not once it is being given up. A slot that may not
 * start waits (it takes nothing) until a renewal restores it or it is lost.</li>
 * <li>At most one thread runs a slot at a time ({@code running}, under {@link #lock}). It handles the messages of a
 * step in their order and stops at the first failure; the next step reports it, and Redis keeps the failed message
 * at the slot's head until its retry (the slot is suspended) or moves it to dead.</li>
 * <li>The scheduling state (owned slots, when each is next due, which are running or being given up) is guarded by
 * {@link #lock}; workers wait on its condition for at most a second, and whatever changes it signals.</li>
 * <li>Every wait on Redis has a deadline ({@code commandTimeout}); a step whose outcome is unknown is sent again
 * (acks are idempotent) after a pause.</li>
 * <li>While {@linkplain #pause() paused} (a flag written under {@link #lock}) no step takes messages: a step that
 * takes is counted in {@code takesUnderWay}, decided under the lock, so {@link #pause()} can wait for those under
 * way and nothing is taken after it returns. Slots stay owned (the coordination thread renews them as usual), what
 * a slot has in hand is handled, and its acks and failure are reported without taking more.</li>
 * </ol>
 */
public final class OrderlyListenerContainer implements ListenerContainer {

    private static final Logger log = LoggerFactory.getLogger(OrderlyListenerContainer.class);

    private static final long ERROR_PAUSE_MILLIS = 1000;
    private static final long WAIT_BOUND_MILLIS = 1000;
    /** Steps one slot runs in a row before it lets a waiting slot have the thread. */
    private static final int STEPS_PER_TURN = 4;

    private final RmqConsumer consumer;
    private final WakeUpSubscriber wakeUps;
    private final SlotCoordinator coordinator;
    private final Type payloadType;
    private final MessageHandler<Object> handler;
    private final ContainerOptions options;
    private final TopicRateLimiter limiter;
    private final long ownershipMillis;
    /** A fifth of the guard time (invariant 1): the shorter of the ownership and the coordinator's timeout. */
    private volatile long renewEveryMillis;
    private final long commandTimeoutMillis;
    private final int batch;
    /** The consumer's instrumentation; {@code instrumented} false for NONE (no clock reads, no scopes). */
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Owned slots by number (guarded by {@link #lock}). */
    private final Map<Integer, OwnedSlot> owned = new TreeMap<>();

    private final Object lifecycle = new Object();
    private volatile boolean running;
    private volatile boolean stopping;
    private volatile String instanceId;
    private volatile SlotCoordinator.Membership membership;
    private volatile Thread coordination;
    private volatile long lastTickMillis;
    private final List<Thread> workers = new ArrayList<>();
    private ScheduledFuture<?> watchdog;
    private final AtomicLong stallsRepaired = new AtomicLong();
    /** Estimated Redis clock minus local clock (from each step's reply). */
    private volatile long clockOffset;
    private int failedTicks;
    /** Set and cleared under {@link #lock} by {@link #pause()} / {@link #resume()}; read anywhere. */
    private volatile boolean paused;
    /** Steps that take messages and have not answered yet (incremented under {@link #lock}, only while not paused). */
    private int takesUnderWay;
    private volatile int handedBackOnStop;
    private volatile int abandonedOnStop;

    /** A slot this instance holds. */
    private static final class OwnedSlot {

        final int slot;
        /** The fencing token; changes only on the coordination thread. */
        volatile long epoch;
        /** Local ms until which handlers may start on this slot (with the coordinator's assurance, invariant 1). */
        volatile long validUntil;
        /** Being given up: no new handler starts; given up once no thread runs it. */
        volatile boolean releasing;
        /** Put aside because it might not start handlers (invariant 1); due again as soon as a renewal restores it. */
        volatile boolean guardLapsed;
        // guarded by the container's lock
        boolean running;
        long dueAt;
        long wokenAt = Long.MAX_VALUE;
        // touched only by the thread running the slot (invariant 2)
        final List<Delivery> acked = new ArrayList<>();
        /** With an instrumentation: the scopes of {@link #acked}, in the same order, and of {@link #failed}. */
        final List<HandleScope> ackedScopes = new ArrayList<>();
        HandleScope failedScope;
        /** Deliveries of the last step that were not started: the next step hands them out again (not new). */
        int notStarted;
        Delivery failed;
        Outcome failure;
        int failedSteps;
        /** Local ms until which the slot's head waits for its retry (0: not suspended); set by each step. */
        volatile long suspendedUntil;

        OwnedSlot(int slot, long epoch, long validUntil, long dueAt) {
            this.slot = slot;
            this.epoch = epoch;
            this.validUntil = validUntil;
            this.dueAt = dueAt;
        }

        boolean hasReport() {
            return !acked.isEmpty() || failed != null;
        }
    }

    private final WakeUpSubscriber.Listener wakeListener = new WakeUpSubscriber.Listener() {
        @Override
        public void wake(int slot, long due) {
            lock.lock();
            try {
                OwnedSlot s = owned.get(slot);
                if (s != null) {
                    s.wokenAt = Math.min(s.wokenAt, due - clockOffset);
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

        @Override
        public void resubscribed() {
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
    };

    /** Not API (it takes engine internals): the {@link io.rmq.Rmq} facade wires it; use {@link io.rmq.Rmq#container}. */
    @SuppressWarnings("unchecked")
    public <T> OrderlyListenerContainer(RmqConsumer consumer, WakeUpSubscriber wakeUps, SlotCoordinator coordinator,
            Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        if (coordinator == null) {
            throw new IllegalArgumentException("An ORDERLY container needs a SlotCoordinator (listener '"
                    + options.id() + "')");
        }
        this.consumer = consumer;
        this.wakeUps = wakeUps;
        this.coordinator = coordinator;
        this.payloadType = payloadType;
        this.handler = (MessageHandler<Object>) handler;
        this.options = options;
        this.limiter = options.rateLimit() == null ? null : consumer.rateLimiter(options.rateLimit());
        this.ownershipMillis = options.ownershipTimeout().toMillis();
        this.renewEveryMillis = Math.max(100, ownershipMillis / 5);
        this.commandTimeoutMillis = Math.min(options.commandTimeout().toMillis(), ownershipMillis);
        this.batch = consumer.settings().batchSize();
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
    }

    @Override
    public String id() {
        return options.id();
    }

    @Override
    public String topic() {
        return consumer.topic().name();
    }

    @Override
    public ConsumeMode mode() {
        return ConsumeMode.ORDERLY;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public long stallsRepaired() {
        return stallsRepaired.get();
    }

    /** This instance's id among the topic's ordered consumers (fresh at every start). */
    public String instanceId() {
        return instanceId;
    }

    /** The slots this instance owns now. */
    @Override
    public Set<Integer> ownedSlots() {
        lock.lock();
        try {
            return Collections.unmodifiableSet(new java.util.TreeSet<>(owned.keySet()));
        }
        finally {
            lock.unlock();
        }
    }

    /** Owned slots whose failed head waits for its retry (as of each slot's last step). */
    @Override
    public Set<Integer> suspendedSlots() {
        long now = System.currentTimeMillis();
        lock.lock();
        try {
            java.util.TreeSet<Integer> suspended = new java.util.TreeSet<>();
            for (OwnedSlot s : owned.values()) {
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

    @Override
    public int concurrency() {
        return options.concurrency();
    }

    @Override
    public boolean isPaused() {
        return paused;
    }

    @Override
    public int handedBackOnStop() {
        return handedBackOnStop;
    }

    @Override
    public int abandonedOnStop() {
        return abandonedOnStop;
    }

    /**
     * Stops taking messages; the owned slots stay owned and finish what they have in hand. Returns once no step that
     * takes messages is under way (at most about the command timeout later), so nothing is taken after it returns.
     */
    @Override
    public void pause() {
        lock.lock();
        try {
            if (!paused) {
                paused = true;
                changed.signalAll();
                log.info("ORDERLY listener container '{}' (topic '{}') paused: it takes no new messages; it keeps its"
                        + " slots", id(), topic());
            }
            long deadline = System.currentTimeMillis() + commandTimeoutMillis + 1000;
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

    /** Takes messages again at once: every owned slot that is not running is due now. */
    @Override
    public void resume() {
        lock.lock();
        try {
            if (!paused) {
                return;
            }
            paused = false;
            long now = System.currentTimeMillis();
            for (OwnedSlot s : owned.values()) {
                if (!s.running) {
                    s.dueAt = Math.min(s.dueAt, now);
                }
            }
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
        log.info("ORDERLY listener container '{}' (topic '{}') resumed", id(), topic());
    }

    @Override
    public void start() {
        synchronized (lifecycle) {
            if (running) {
                return;
            }
            running = true;
            stopping = false;
            // no '/': the id is also a ZooKeeper node name
            instanceId = options.id().replace('/', '_') + "@" + ProcessHandle.current().pid() + "-"
                    + UUID.randomUUID().toString().substring(0, 8);
            consumer.preparePayloadType(payloadType);
            membership = coordinator.join(topic(), instanceId, consumer.topic().slotAmount(),
                    options.ownershipTimeout());
            wakeUps.register(topic(), wakeListener);
            workers.clear();
            for (int i = 0; i < options.concurrency(); i++) {
                Thread worker = options.threadFactory().newThread(this::work);
                worker.setName(options.id() + "-orderly-" + i);
                workers.add(worker);
                worker.start();
            }
            lastTickMillis = System.currentTimeMillis();
            startCoordination();
            watchdog = Timeouts.every(1000, this::watchdog);
            log.debug("Started ORDERLY listener container '{}' on topic '{}' as {} ({} coordinator)", id(), topic(),
                    instanceId, coordinator);
        }
    }

    private void startCoordination() {
        Thread thread = options.threadFactory().newThread(this::coordinate);
        thread.setName(options.id() + "-coordination");
        coordination = thread;
        thread.start();
    }

    @Override
    public void stop() {
        synchronized (lifecycle) {
            if (!running) {
                return;
            }
            stopping = true;
            watchdog.cancel(false);
            wakeUps.unregister(topic(), wakeListener);
            lock.lock();
            try {
                changed.signalAll();
            }
            finally {
                lock.unlock();
            }
            // not interrupted: a pass under way finishes, so a slot whose claim Redis has already granted is known
            // here and given up below (interrupted mid-claim, it stayed owned until its ownership ran out). Its
            // waits on Redis are bounded: renewals and claims go out together, one bound each, plus slots being
            // given up on a rebalance. Interrupted only when Redis does not answer within that.
            Thread coordinationThread = coordination;
            ContainerThreads.joinUntil(coordinationThread,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4 * commandTimeoutMillis + 1000));
            if (coordinationThread.isAlive()) {
                coordinationThread.interrupt();
                ContainerThreads.joinUntil(coordinationThread,
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMillis));
            }
            // running handlers finish their message (no new one starts); their slots are then given up
            long deadline = System.nanoTime() + options.shutdownTimeout().toNanos();
            for (Thread worker : workers) {
                ContainerThreads.joinUntil(worker, deadline);
            }
            List<OwnedSlot> left;
            lock.lock();
            try {
                left = owned.values().stream().filter(s -> !s.running).toList();
            }
            finally {
                lock.unlock();
            }
            left.forEach(this::giveUp);
            int abandoned = ownedSlots().size();
            handedBackOnStop = left.size();
            abandonedOnStop = abandoned;
            if (abandoned > 0) {
                log.warn("ORDERLY container '{}' stopped with handlers still running on {} slot(s) after {}; those"
                        + " slots are taken over when their ownership runs out", id(), abandoned,
                        options.shutdownTimeout());
            }
            try {
                membership.close();
            }
            catch (RuntimeException ex) {
                log.warn("ORDERLY container '{}' could not leave the consumers of topic '{}'; it drops out when its"
                        + " membership runs out: {}", id(), topic(), String.valueOf(ex));
            }
            for (Thread worker : workers) {
                worker.interrupt();
            }
            running = false;
            log.debug("Stopped ORDERLY listener container '{}'", id());
        }
    }


    // ------------------------------------------------------------------ coordination

    private void coordinate() {
        while (!stopping) {
            long started = System.currentTimeMillis();
            lastTickMillis = started;
            try {
                tick();
                if (failedTicks > 0) {
                    log.info("ORDERLY container '{}' coordinates topic '{}' again after {} failed attempt(s)", id(),
                            topic(), failedTicks);
                    failedTicks = 0;
                }
            }
            catch (RuntimeException ex) {
                if (stopping) {
                    return;
                }
                failedTicks++;
                if (failedTicks == 1 || failedTicks % 30 == 0) {
                    log.warn("ORDERLY container '{}' could not renew its ownership of topic '{}' ({} time(s) in a"
                            + " row); its slots stop when their ownership runs out: {}", id(), topic(), failedTicks,
                            String.valueOf(ex));
                }
            }
            try {
                awaitNextTick(started + renewEveryMillis);
            }
            catch (InterruptedException ex) {
                return;
            }
        }
    }

    /** Sleeps until {@code nextTickAt} (local ms) or until {@link #stop()} signals; stop() does not interrupt. */
    private void awaitNextTick(long nextTickAt) throws InterruptedException {
        lock.lock();
        try {
            long left;
            while (!stopping && (left = nextTickAt - System.currentTimeMillis()) > 0) {
                changed.await(left, TimeUnit.MILLISECONDS);
            }
        }
        finally {
            lock.unlock();
        }
    }

    /** Renews what this instance holds, gives up what it should no longer hold, claims what it should. */
    private void tick() {
        long sent = System.currentTimeMillis();
        Map<Integer, Long> assigned = membership.assignedSlots();
        long guardMillis = guardMillis();
        renewEveryMillis = Math.max(100, guardMillis / 5);
        List<OwnedSlot> held;
        lock.lock();
        try {
            held = new ArrayList<>(owned.values());
        }
        finally {
            lock.unlock();
        }
        Map<OwnedSlot, CompletableFuture<Claim>> renewals = new LinkedHashMap<>();
        for (OwnedSlot s : held) {
            renewals.put(s, consumer.claim(s.slot, instanceId, s.epoch, ownershipMillis, 0));
        }
        Map<Integer, CompletableFuture<Claim>> claims = new LinkedHashMap<>();
        for (Map.Entry<Integer, Long> slot : assigned.entrySet()) {
            if (held.stream().noneMatch(s -> s.slot == slot.getKey())) {
                claims.put(slot.getKey(), consumer.claim(slot.getKey(), instanceId, 0, ownershipMillis,
                        slot.getValue()));
            }
        }
        long validUntil = sent + guardMillis - renewEveryMillis;
        for (Map.Entry<OwnedSlot, CompletableFuture<Claim>> renewal : renewals.entrySet()) {
            OwnedSlot s = renewal.getKey();
            Claim claim = RedisGateway.await(renewal.getValue(), "renewing ownership of slot " + s.slot
                    + " of topic '" + topic() + "'", commandTimeoutMillis);
            if (claim.held()) {
                if (claim.epoch() != s.epoch) {
                    log.info("ORDERLY container '{}': ownership of slot {} of topic '{}' had run out; claimed again"
                            + " (epoch {})", id(), s.slot, topic(), claim.epoch());
                    s.epoch = claim.epoch();
                }
                s.validUntil = validUntil;
            }
            else {
                lost(s, s.epoch, "another instance holds it now");
            }
        }
        lock.lock();
        try {
            long now = System.currentTimeMillis();
            for (OwnedSlot s : held) {
                if (s.guardLapsed && !s.running && mayStart(s)) {
                    s.guardLapsed = false;
                    s.dueAt = Math.min(s.dueAt, now);
                }
            }
            changed.signalAll();
            for (OwnedSlot s : held) {
                if (!assigned.containsKey(s.slot) && !s.releasing && owned.get(s.slot) == s) {
                    s.releasing = true;
                    log.debug("ORDERLY container '{}' gives slot {} of topic '{}' up (rebalance)", id(), s.slot,
                            topic());
                }
            }
        }
        finally {
            lock.unlock();
        }
        for (OwnedSlot s : held) {
            if (s.releasing && takeForRelease(s)) {
                giveUp(s);
            }
        }
        for (Map.Entry<Integer, CompletableFuture<Claim>> entry : claims.entrySet()) {
            Claim claim = RedisGateway.await(entry.getValue(), "claiming slot " + entry.getKey() + " of topic '"
                    + topic() + "'", commandTimeoutMillis);
            if (claim.held()) {
                if (claim.tookOver() && instrumented) {
                    instrumentation.slotTakenOver(id(), topic(), entry.getKey());
                }
                lock.lock();
                try {
                    owned.put(entry.getKey(), new OwnedSlot(entry.getKey(), claim.epoch(), validUntil,
                            System.currentTimeMillis()));
                    changed.signalAll();
                }
                finally {
                    lock.unlock();
                }
                log.debug("ORDERLY container '{}' owns slot {} of topic '{}' (epoch {})", id(), entry.getKey(),
                        topic(), claim.epoch());
            }
        }
    }

    /**
     * How long after a renewal began no other instance can claim this one's slots: the ownership in Redis, or the
     * coordinator's own bound when that is shorter (a ZooKeeper session shorter than the ownership: the next owner's
     * claim follows the session and overrides the Redis one).
     */
    private long guardMillis() {
        java.time.Duration coordinated = membership.assignmentTimeout();
        return coordinated == null || coordinated.toMillis() <= 0 ? ownershipMillis
                : Math.min(ownershipMillis, coordinated.toMillis());
    }

    /** True while handlers may start on {@code s} (invariant 1); read before every handler start. */
    private boolean mayStart(OwnedSlot s) {
        return !stopping && !s.releasing && System.currentTimeMillis() < s.validUntil && membership.assured();
    }

    /** Marks a slot that is being given up as running, if no thread runs it; true when the caller gives it up. */
    private boolean takeForRelease(OwnedSlot s) {
        lock.lock();
        try {
            if (s.running || owned.get(s.slot) != s) {
                return false;
            }
            s.running = true;
            return true;
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * Reports what was handled (acks, a failure) and releases the slot; the next owner gets what was taken and not
     * started, in order. The caller has marked the slot running (no worker takes it meanwhile).
     */
    private void giveUp(OwnedSlot s) {
        try {
            if (s.hasReport()) {
                report(s, 0);
            }
            RedisGateway.await(consumer.releaseOwnership(s.slot, instanceId, s.epoch), "releasing slot " + s.slot
                    + " of topic '" + topic() + "'", commandTimeoutMillis);
        }
        catch (RuntimeException ex) {
            log.warn("ORDERLY container '{}' could not release slot {} of topic '{}' cleanly; it is taken over when"
                    + " its ownership runs out: {}", id(), s.slot, topic(), String.valueOf(ex));
        }
        lock.lock();
        try {
            owned.remove(s.slot, s);
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
        try {
            membership.released(s.slot);
        }
        catch (RuntimeException ex) {
            log.warn("ORDERLY container '{}': the coordinator failed to note the release of slot {}: {}", id(),
                    s.slot, String.valueOf(ex));
        }
    }

    /** The slot is no longer this instance's (fenced with {@code epoch}): forget it, unless it was claimed anew. */
    private void lost(OwnedSlot s, long epoch, String why) {
        lock.lock();
        try {
            if (s.epoch != epoch || owned.get(s.slot) != s) {
                return;
            }
            owned.remove(s.slot);
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
        log.info("ORDERLY container '{}' lost slot {} of topic '{}' ({}); what it had not settled is handled by the"
                + " new owner", id(), s.slot, topic(), why);
    }

    // ------------------------------------------------------------------ handling

    private void work() {
        while (!stopping) {
            OwnedSlot s;
            try {
                s = takeReady();
            }
            catch (InterruptedException ex) {
                return;
            }
            if (s == null) {
                return;
            }
            long next = System.currentTimeMillis() + ERROR_PAUSE_MILLIS;
            try {
                next = run(s);
            }
            catch (RuntimeException ex) {
                s.failedSteps++;
                if (s.failedSteps == 1 || s.failedSteps % 60 == 0) {
                    log.warn("ORDERLY container '{}' failed a step on slot {} of topic '{}' ({} in a row); retrying"
                            + " in {} ms: {}", id(), s.slot, topic(), s.failedSteps, ERROR_PAUSE_MILLIS,
                            String.valueOf(ex));
                }
            }
            catch (Error ex) {
                log.error("ORDERLY container '{}' hit an error on slot {} of topic '{}'", id(), s.slot, topic(), ex);
            }
            finally {
                finishRun(s, next);
            }
        }
    }

    /** Waits for an owned slot that is due and not running, and marks it running; null when stopping. */
    private OwnedSlot takeReady() throws InterruptedException {
        lock.lock();
        try {
            while (!stopping) {
                long now = System.currentTimeMillis();
                OwnedSlot best = null;
                long earliest = paused ? now + WAIT_BOUND_MILLIS : Long.MAX_VALUE; // resume() signals
                for (OwnedSlot s : owned.values()) {
                    if (s.running || s.releasing) {
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

    private void finishRun(OwnedSlot s, long nextDue) {
        boolean release;
        lock.lock();
        try {
            s.running = false;
            // an announcement that came while the slot ran may be sooner than what its last step said
            s.dueAt = Math.min(nextDue, s.wokenAt);
            s.wokenAt = Long.MAX_VALUE;
            release = s.releasing && owned.get(s.slot) == s && !stopping;
            if (release) {
                s.running = true;
            }
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
        if (release) {
            giveUp(s);
        }
    }

    /**
     * Runs a slot for a few steps: report what was handled and take the next messages, handle them in order.
     *
     * @return local ms when the slot is next due
     */
    private long run(OwnedSlot s) {
        for (int steps = 0; steps < STEPS_PER_TURN; steps++) {
            if (stopping || s.releasing) {
                return Long.MAX_VALUE; // stop() or the release reports what was handled
            }
            if (!mayStart(s)) {
                // another instance may own the slot by now: take nothing, report what was handled (Redis refuses it
                // if so), and wait for a renewal (the tick makes the slot due again)
                s.guardLapsed = true;
                if (s.hasReport()) {
                    report(s, 0);
                }
                return System.currentTimeMillis() + renewEveryMillis;
            }
            s.guardLapsed = false;
            if (!beginTake()) {
                // paused: report what was handled (settled now, not at resume), take nothing; resume() makes it due
                if (s.hasReport()) {
                    report(s, 0);
                }
                return System.currentTimeMillis();
            }
            long epoch = s.epoch;
            OrderedStep step;
            int wanted = batch;
            try {
                if (limiter != null) {
                    long[] permits = limiter.acquire(batch, commandTimeoutMillis);
                    wanted = (int) permits[0];
                    if (wanted == 0) {
                        if (instrumented) {
                            instrumentation.rateLimitWaited(id(), topic(), TimeUnit.MILLISECONDS.toNanos(permits[1]));
                        }
                        if (s.hasReport()) {
                            report(s, 0);
                        }
                        return System.currentTimeMillis() + permits[1]; // throttled: no polling until a permit is free
                    }
                }
                step = report(s, wanted);
            }
            finally {
                endTake();
            }
            if (step == null) {
                return Long.MAX_VALUE; // fenced: the slot is gone
            }
            if (limiter != null) {
                limiter.giveBack(wanted - step.deliveries().size());
            }
            if (step.deliveries().isEmpty()) {
                return step.nextDue() < 0
                        ? System.currentTimeMillis() + options.maxIdle().toMillis()
                        : step.nextDue() - clockOffset;
            }
            List<Delivery> taken = step.deliveries();
            for (int i = 0; i < taken.size(); i++) {
                Delivery delivery = taken.get(i);
                if (s.epoch != epoch || !mayStart(s)) {
                    // not started: it stays in prepare, in order, for whoever runs the slot next
                    s.notStarted = taken.size() - i;
                    return System.currentTimeMillis();
                }
                // right before the handler (conversion included), on its thread
                HandleScope scope = instrumented
                        ? instrumentation.handleStarted(id(), delivery, consumer.latenessMillis(delivery))
                        : HandleScope.NONE;
                Outcome outcome = consumer.invoke(delivery, payloadType, handler);
                scope.handlerReturned(outcome.error());
                if (outcome.failed()) {
                    s.failed = delivery;
                    s.failure = outcome;
                    s.failedScope = scope;
                    s.notStarted = taken.size() - i - 1;
                    break; // the rest waits behind it (invariant 2)
                }
                s.acked.add(delivery);
                if (instrumented) {
                    s.ackedScopes.add(scope);
                }
            }
        }
        return System.currentTimeMillis(); // more may be due: back in line behind slots that waited
    }

    /** Counts a step that takes messages, unless paused (invariant 5); false: paused, take nothing. */
    private boolean beginTake() {
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

    private void endTake() {
        lock.lock();
        try {
            takesUnderWay--;
            changed.signalAll();
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * Sends a step: what was handled since the last one, and (with {@code wanted > 0}) takes the next messages.
     * Returns null when the slot was fenced (and forgets it).
     */
    private OrderedStep report(OwnedSlot s, int wanted) {
        long epoch = s.epoch;
        long sent = System.currentTimeMillis();
        long sentNanos = instrumented ? System.nanoTime() : 0;
        OrderedStep step;
        try {
            step = RedisGateway.await(consumer.orderedStep(s.slot, epoch, wanted, s.acked, s.failed,
                    s.failure == null ? null : s.failure.reason(), s.failure == null ? null : s.failure.decision()),
                    "a step on slot " + s.slot + " of topic '" + topic() + "'", commandTimeoutMillis);
        }
        catch (RuntimeException ex) {
            if (instrumented) {
                reportStep(s, wanted, null, ex, System.nanoTime() - sentNanos);
            }
            throw ex;
        }
        long received = System.currentTimeMillis();
        if (instrumented) {
            reportStep(s, wanted, step, null, System.nanoTime() - sentNanos);
        }
        clockOffset = step.redisNow() - (sent + received) / 2;
        s.failedSteps = 0;
        NackOutcome failedOutcome = null;
        s.suspendedUntil = step.suspended() ? Math.max(1, step.nextDue() - clockOffset) : 0;
        if (s.failed != null) {
            failedOutcome = step.fenced() ? NackOutcome.FENCED : step.failedOutcome();
            consumer.afterFailure(s.failed, failedOutcome, s.failure);
        }
        if (instrumented) {
            RmqInstrumentation.Outcome acked = step.fenced() ? RmqInstrumentation.Outcome.FENCED
                    : RmqInstrumentation.Outcome.ACK;
            s.ackedScopes.forEach(scope -> scope.settled(acked));
            if (s.failedScope != null && failedOutcome != null) {
                s.failedScope.settled(RmqConsumer.outcomeOf(failedOutcome));
            }
        }
        s.ackedScopes.clear();
        s.failedScope = null;
        s.acked.clear();
        s.failed = null;
        s.failure = null;
        if (step.fenced()) {
            lost(s, epoch, "fenced: its ownership ran out or another instance took it");
            return null;
        }
        return step;
    }

    /**
     * Reports one step: a step that takes messages is this listener's pop of the slot ({@code popped} /
     * {@code popFailed}, {@code operation("receive")}, its settlements included); one that only settles is an
     * {@code ack} (or a {@code nack} when it reports a failure).
     */
    private void reportStep(OwnedSlot s, int wanted, OrderedStep step, Throwable error, long nanos) {
        Throwable failure = RedisGateway.unwrap(error);
        if (wanted > 0) {
            if (failure == null) {
                int taken = step.deliveries().size();
                // what the last step took and did not start comes again first: counted once, when first taken
                int again = Math.min(taken, s.notStarted);
                s.notStarted -= again;
                instrumentation.popped(id(), topic(), s.slot, taken - again, nanos);
            }
            else {
                instrumentation.popFailed(id(), topic(), s.slot, failure);
            }
            instrumentation.operation("receive", topic(), nanos, failure);
        }
        else {
            instrumentation.operation(s.failed != null ? "nack" : "ack", topic(), nanos, failure);
        }
    }

    /** Counts a repair by the watchdog (each one a broken invariant, logged as an ERROR by the caller). */
    private void repaired() {
        stallsRepaired.incrementAndGet();
        if (instrumented) {
            instrumentation.watchdogRepaired(id(), topic());
        }
    }

    // ------------------------------------------------------------------ watchdog

    private void watchdog() {
        try {
            if (stopping || !running) {
                return;
            }
            Thread thread = coordination;
            long silent = System.currentTimeMillis() - lastTickMillis;
            if (!thread.isAlive() || silent > renewEveryMillis + 3 * commandTimeoutMillis + 5000) {
                repaired();
                log.error("ORDERLY container '{}' (topic '{}'): its coordination thread {}; starting a new one", id(),
                        topic(), thread.isAlive() ? "made no pass for " + silent + " ms" : "has died");
                thread.interrupt();
                lastTickMillis = System.currentTimeMillis();
                startCoordination();
            }
            for (int i = 0; i < workers.size(); i++) {
                if (!workers.get(i).isAlive() && !stopping) {
                    repaired();
                    log.error("ORDERLY container '{}' (topic '{}'): handler thread {} has died; starting a new one",
                            id(), topic(), workers.get(i).getName());
                    Thread worker = options.threadFactory().newThread(this::work);
                    worker.setName(workers.get(i).getName());
                    workers.set(i, worker);
                    worker.start();
                }
            }
        }
        catch (RuntimeException ex) {
            log.error("ORDERLY container '{}': watchdog check failed", id(), ex);
        }
    }
}
