package io.rmq.container.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.coordination.internal.MembershipLease;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.ConsumerRoster;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link OrderlyListenerContainer}'s ownership of its slots: its membership among the topic's ordered consumers,
 * and, every fifth of the guard time, one pass that renews the slots it holds, gives up those it should no longer
 * hold (once no handler runs on them) and claims those the {@link SlotCoordinator} assigns to it. With the Redis
 * coordinator ({@link MembershipLease}) the membership's heartbeat is the renewal of every slot at once (leased owner
 * keys, see own.lua); with others each slot's timed ownership is renewed with a claim of its own. Threads: the
 * coordination thread ({@link #coordinate()}) owns the passes and alone changes a slot's epoch and guard;
 * {@link #join()} and {@link #leave()} run on the container's lifecycle (start/stop); {@link #mayStart} is read on
 * every thread that starts handlers; {@link #giveUp} runs on whichever thread has the slot marked running.
 *
 * <h2>Invariant 1</h2>
 * A slot's messages are taken and settled only under the epoch this instance holds for it: every step carries the
 * epoch and Redis refuses it otherwise (orderly_next.lua). Locally, no handler starts once another instance may own
 * the slot, by either clock: the guard time is the shorter of the ownership timeout (Redis's claim) and the
 * coordinator's {@link SlotCoordinator.Membership#assignmentTimeout() assignment timeout} (e.g. the ZooKeeper
 * session, after which another instance's claim overrides this one's), and a slot may start handlers until the start
 * of the last successful renewal (leased: the last heartbeat that found this instance listed; another instance takes
 * the slot only once the membership has dropped it, an ownership timeout after that heartbeat) + the guard time - one
 * renewal period, while the coordinator vouches for its
 * assignment ({@link SlotCoordinator.Membership#assured()}), and not once it is being given up ({@link #mayStart}). A
 * slot that may not start waits (it takes nothing) until a renewal restores it or it is lost.
 */
final class SlotOwnership {

    /** Logs under the container's name ({@link ContainerLoggers}). */
    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.ORDERLY);

    private final SlotConsumer consumer;
    private final SlotCoordinator coordinator;
    private final OrderlySlots slots;
    private final OwnershipChanges changes;
    private final StepBook steps;
    private final SlotStepSender sender;
    private final ContainerOptions options;
    private final String id;
    private final String topic;
    private final long ownershipMillis;
    private final long commandTimeoutMillis;
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;

    /** A fifth of the guard time (invariant 1): the shorter of the ownership and the coordinator's timeout. */
    private volatile long renewEveryMillis;
    /** Set at each start (lifecycle), read anywhere. */
    private volatile String instanceId;
    private volatile SlotCoordinator.Membership membership;
    /** When the last pass began (coordination thread; the watchdog as it starts one, or after a JVM pause). */
    private volatile long lastTickMillis;
    /** Passes that failed in a row (coordination thread). */
    private int failedTicks;
    /**
     * Slots whose claim or release got no answer: they may still be this instance's in Redis (added by the
     * coordination thread and by {@link #giveUp}; a later pass releases or claims them again).
     */
    private final Set<Integer> orphaned = ConcurrentHashMap.newKeySet();

    SlotOwnership(SlotConsumer consumer, SlotCoordinator coordinator, OrderlySlots slots, OwnershipChanges changes,
            StepBook steps, SlotStepSender sender, ContainerOptions options, long commandTimeoutMillis) {
        this.consumer = consumer;
        this.coordinator = coordinator;
        this.slots = slots;
        this.changes = changes;
        this.steps = steps;
        this.sender = sender;
        this.options = options;
        this.id = options.id();
        this.topic = consumer.topic().name();
        this.ownershipMillis = options.ownershipTimeout().toMillis();
        this.renewEveryMillis = Math.max(100, ownershipMillis / 5);
        this.commandTimeoutMillis = commandTimeoutMillis;
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
    }

    String instanceId() {
        return instanceId;
    }

    long renewEveryMillis() {
        return renewEveryMillis;
    }

    long lastTickMillis() {
        return lastTickMillis;
    }

    /** A fresh id for this start among the topic's ordered consumers. */
    void newInstanceId() {
        // no '/': the id is also a ZooKeeper node name
        instanceId = id.replace('/', '_') + "@" + ProcessHandle.current().pid() + "-"
                + UUID.randomUUID().toString().substring(0, 8) + ConsumerRoster.ROSTER_MARK;
    }

    /** Joins the topic's ordered consumers as {@link #instanceId()}; the coordination thread does the rest. */
    void join() {
        membership = coordinator.join(topic, instanceId, consumer.topic().slotAmount(), options.ownershipTimeout());
    }

    /**
     * Counts from now before the watchdog finds the coordination thread silent (a thread is about to start, or the
     * whole JVM stood still).
     */
    void ticking() {
        lastTickMillis = System.currentTimeMillis();
    }

    /**
     * Leaves the topic's ordered consumers (at stop, once the slots it could give up are given up). With slots still
     * {@code abandoned} to running handlers and a {@link MembershipLease}, it stays listed instead: leaving would let
     * another instance take those slots at once, while its handlers run; they are taken over once the membership runs
     * out (the ownership timeout), as a timed ownership would.
     */
    void leave(int abandoned) {
        orphaned.clear();
        if (abandoned > 0 && membership instanceof MembershipLease lease) {
            lease.leaveAfterTimeout();
            return;
        }
        try {
            membership.close();
        }
        catch (RuntimeException ex) {
            log.warn("ORDERLY container '{}' could not leave the consumers of topic '{}'; it drops out when its"
                    + " membership runs out: {}", id, topic, String.valueOf(ex));
        }
    }

    /**
     * The coordination thread: a pass every renewal period while its run is current (it reads the generation as it
     * begins) and it is not interrupted (stop() or the watchdog gave up on it). A {@code Throwable} is caught at the
     * top and logged once with the listener's id; the thread goes on, and a slot it was giving up is given up
     * ({@link #giveUp} throws nothing).
     */
    void coordinate() {
        long generation = slots.generation();
        while (slots.isCurrent(generation)) {
            long started = System.currentTimeMillis();
            lastTickMillis = started;
            try {
                tick();
                if (failedTicks > 0) {
                    log.info("ORDERLY container '{}' coordinates topic '{}' again after {} failed attempt(s)", id,
                            topic, failedTicks);
                    failedTicks = 0;
                }
            }
            catch (Throwable ex) {
                if (!slots.isCurrent(generation) || Thread.currentThread().isInterrupted()) {
                    return;
                }
                failedTicks++;
                if (failedTicks == 1 || failedTicks % 30 == 0) {
                    tickFailed(ex);
                }
            }
            try {
                slots.awaitUntil(started + renewEveryMillis);
            }
            catch (InterruptedException ex) {
                return;
            }
        }
    }

    private void tickFailed(Throwable ex) {
        if (ex instanceof RuntimeException) {
            log.warn("ORDERLY container '{}' could not renew its ownership of topic '{}' ({} time(s) in a row); its"
                    + " slots stop when their ownership runs out: {}", id, topic, failedTicks, String.valueOf(ex));
        }
        else {
            log.error("ORDERLY container '{}' (topic '{}'): unexpected error on its coordination thread ({} time(s) in"
                    + " a row); the thread goes on, its slots stop when their ownership runs out", id, topic,
                    failedTicks, ex);
        }
    }

    /**
     * Renews what this instance holds, gives up what it should no longer hold, claims what it should. With a
     * {@link MembershipLease} (the Redis coordinator) the heartbeat in {@code assignedSlots()} renews every held slot
     * at once: no command per slot; else each held slot's timed ownership is renewed with its own claim.
     */
    private void tick() {
        long sent = System.currentTimeMillis();
        Map<Integer, Long> assigned;
        try {
            assigned = membership.assignedSlots();
        }
        catch (MembershipLease.MembershipLost dropped) {
            // others may own its slots already (their epochs fence its steps): no handler starts on them from now.
            // It joins again under a new id at the next pass: the owner keys of the old one, never live again, are
            // taken over by whoever's share they fall in (under the old id they would stay with a live instance that
            // no longer holds them)
            log.warn("ORDERLY container '{}': {}", id, dropped.getMessage());
            for (OrderlySlot s : changes.held()) {
                changes.lost(s, s.epoch, "this instance dropped out of the membership");
            }
            orphaned.clear(); // keys of the old id: taken over, not released
            newInstanceId();
            join();
            return;
        }
        MembershipLease lease = membership instanceof MembershipLease l ? l : null;
        long guardMillis = guardMillis();
        renewEveryMillis = Math.max(100, guardMillis / 5);
        // leased: from when the heartbeat behind the membership began (the engine's, shared by its listeners)
        long validUntil = (lease == null ? sent : lease.renewedAt()) + guardMillis - renewEveryMillis;
        List<OrderlySlot> held = changes.held();
        // renewals and claims go out together, then each is awaited with its own bound
        Map<OrderlySlot, CompletableFuture<Claim>> renewals = new LinkedHashMap<>();
        for (OrderlySlot s : held) {
            if (lease == null) {
                renewals.put(s, consumer.claim(s.slot, instanceId, s.epoch, ownershipMillis, 0));
            }
            else {
                // listed at this beat: no other instance takes it before the membership runs out (own.lua)
                s.validUntil = validUntil;
            }
        }
        Map<Integer, CompletableFuture<Claim>> claims = new LinkedHashMap<>();
        for (Map.Entry<Integer, Long> slot : assigned.entrySet()) {
            if (held.stream().noneMatch(s -> s.slot == slot.getKey())) {
                claims.put(slot.getKey(), lease == null
                        ? consumer.claim(slot.getKey(), instanceId, 0, ownershipMillis, slot.getValue())
                        : consumer.claimLeased(slot.getKey(), instanceId, slot.getValue(), lease.live()));
            }
        }
        // a slot whose claim or release had no answer may still be this instance's in Redis: a leased key of a live
        // holder is never taken over, so it is released here once it is neither held nor claimed again
        Map<Integer, CompletableFuture<Boolean>> releases = new LinkedHashMap<>();
        for (Integer slot : orphaned) {
            if (!claims.containsKey(slot) && held.stream().noneMatch(s -> s.slot == slot)) {
                releases.put(slot, consumer.releaseOwnership(slot, instanceId, 0));
            }
        }
        try {
            renewAndGiveUp(renewals, held, assigned.keySet(), validUntil);
        }
        catch (RuntimeException | Error ex) {
            orphaned.addAll(claims.keySet()); // their answers go unread: Redis may have granted them
            throw ex;
        }
        settle(releases, claims, validUntil);
    }

    /** Reads the renewals (timed ownership), marks the slots no longer assigned and gives up those no thread runs. */
    private void renewAndGiveUp(Map<OrderlySlot, CompletableFuture<Claim>> renewals, List<OrderlySlot> held,
            Set<Integer> assigned, long validUntil) {
        for (Map.Entry<OrderlySlot, CompletableFuture<Claim>> renewal : renewals.entrySet()) {
            OrderlySlot s = renewal.getKey();
            Claim claim = RedisGateway.await(renewal.getValue(), "renewing ownership of slot " + s.slot
                    + " of topic '" + topic + "'", commandTimeoutMillis);
            if (claim.held()) {
                if (claim.epoch() != s.epoch) {
                    log.info("ORDERLY container '{}': ownership of slot {} of topic '{}' had run out; claimed again"
                            + " (epoch {})", id, s.slot, topic, claim.epoch());
                    s.epoch = claim.epoch();
                }
                s.validUntil = validUntil;
            }
            else {
                changes.lost(s, s.epoch, "another instance holds it now");
            }
        }
        for (OrderlySlot s : changes.renewed(held, assigned, this::mayStart)) {
            log.debug("ORDERLY container '{}' gives slot {} of topic '{}' up (rebalance)", id, s.slot, topic);
        }
        for (OrderlySlot s : held) {
            if (s.releasing && changes.takeForRelease(s)) {
                giveUp(s);
            }
        }
    }

    /**
     * Reads the releases of orphaned slots and this pass's claims. Each answer is handled on its own: a release without
     * one leaves its slot orphaned, a claim without one (or whose answer is never read, whatever throws) makes its
     * slot orphaned, so that a later pass releases it (a leased key of a live holder is never taken over by time: a
     * granted claim known nowhere here left its slot unserved for the life of this instance). The first failure is
     * thrown once every answer was read.
     */
    void settle(Map<Integer, CompletableFuture<Boolean>> releases, Map<Integer, CompletableFuture<Claim>> claims,
            long validUntil) {
        RuntimeException unanswered = null;
        Set<Integer> unread = new LinkedHashSet<>(claims.keySet());
        try {
            // inside the guard: whatever the releases throw (an Error too), this pass's claims end orphaned
            for (Map.Entry<Integer, CompletableFuture<Boolean>> release : releases.entrySet()) {
                try {
                    RedisGateway.await(release.getValue(), "releasing slot " + release.getKey() + " of topic '"
                            + topic + "'", commandTimeoutMillis);
                }
                catch (RuntimeException ex) {
                    unanswered = unanswered == null ? ex : unanswered; // stays orphaned: released at a later pass
                    continue;
                }
                orphaned.remove(release.getKey());
            }
            for (Map.Entry<Integer, CompletableFuture<Claim>> entry : claims.entrySet()) {
                Claim claim;
                try {
                    claim = RedisGateway.await(entry.getValue(), "claiming slot " + entry.getKey() + " of topic '"
                            + topic + "'", commandTimeoutMillis);
                }
                catch (RuntimeException ex) {
                    unanswered = unanswered == null ? ex : unanswered; // it may have been granted: stays in unread
                    continue;
                }
                orphaned.remove(entry.getKey());
                if (claim.held()) {
                    if (claim.tookOver() && instrumented) {
                        instrumentation.slotTakenOver(id, topic, entry.getKey());
                    }
                    changes.add(entry.getKey(), claim.epoch(), validUntil);
                    log.debug("ORDERLY container '{}' owns slot {} of topic '{}' (epoch {})", id, entry.getKey(),
                            topic, claim.epoch());
                }
                else if (claim.heldByOlderEngine() && membership instanceof MembershipLease lease) {
                    lease.heldByOlderEngine();
                }
                unread.remove(entry.getKey());
            }
        }
        finally {
            orphaned.addAll(unread);
        }
        if (unanswered != null) {
            throw unanswered;
        }
    }

    /** Slots whose claim or release had no answer (a later pass releases them unless claimed again). */
    Set<Integer> orphanedSlots() {
        return Set.copyOf(orphaned);
    }

    /**
     * How long after a renewal began no other instance can claim this one's slots: the ownership in Redis, or the
     * coordinator's own bound when that is shorter (a ZooKeeper session shorter than the ownership: the next owner's
     * claim follows the session and overrides the Redis one).
     */
    private long guardMillis() {
        Duration coordinated = membership.assignmentTimeout();
        return coordinated == null || coordinated.toMillis() <= 0 ? ownershipMillis
                : Math.min(ownershipMillis, coordinated.toMillis());
    }

    /** True while handlers may start on {@code s} (invariant 1); read before every handler start. */
    boolean mayStart(OrderlySlot s) {
        return !slots.isStopping() && !s.releasing && System.currentTimeMillis() < s.validUntil
                && membership.assured();
    }

    /**
     * Reports what was handled (acks, failures) and releases the slot; the next owner gets what was taken and not
     * started, in order. The caller has marked the slot stepping, with none of its lanes running (no handler thread
     * takes it meanwhile). Throws
     * nothing: whatever fails, the slot leaves the owned ones (else, marked running, it stayed owned for ever).
     */
    void giveUp(OrderlySlot s) {
        try {
            if (steps.hasReport(s)) {
                sender.send(s, 0);
            }
            RedisGateway.await(consumer.releaseOwnership(s.slot, instanceId, s.epoch), "releasing slot " + s.slot
                    + " of topic '" + topic + "'", commandTimeoutMillis);
        }
        catch (RuntimeException ex) {
            orphaned.add(s.slot); // released again at a later pass, if this instance is still running
            log.warn("ORDERLY container '{}' could not release slot {} of topic '{}' cleanly; it is taken over when"
                    + " its ownership runs out: {}", id, s.slot, topic, String.valueOf(ex));
        }
        catch (Throwable ex) {
            log.error("ORDERLY container '{}' (topic '{}'): unexpected error releasing slot {}; it is taken over when"
                    + " its ownership runs out", id, topic, s.slot, ex);
        }
        finally {
            changes.remove(s);
        }
        try {
            membership.released(s.slot);
        }
        catch (RuntimeException ex) {
            log.warn("ORDERLY container '{}': the coordinator failed to note the release of slot {}: {}", id,
                    s.slot, String.valueOf(ex));
        }
        catch (Throwable ex) {
            log.error("ORDERLY container '{}' (topic '{}'): unexpected error as the coordinator noted the release of"
                    + " slot {}", id, topic, s.slot, ex);
        }
    }
}
