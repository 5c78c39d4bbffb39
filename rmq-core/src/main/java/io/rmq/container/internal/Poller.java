package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.consumer.internal.TopicRateLimiter;
import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.PollerEvents.Event;
import io.rmq.container.internal.PollerEvents.Members;
import io.rmq.container.internal.PollerEvents.PopFinished;
import io.rmq.container.internal.PollerEvents.Resync;
import io.rmq.container.internal.PollerEvents.SlotsChecked;
import io.rmq.container.internal.PollerEvents.TopologyChecked;
import io.rmq.container.internal.PollerEvents.Wake;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.redis.internal.WakeUpSubscriber;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A CONCURRENT container's poller: one thread that leases due messages into the {@link HandoffBuffer} (rounds of
 * pops, {@link PopRounds}), has the {@link LeaseKeeper} extend every third of the lease, and sleeps when idle: until
 * the earliest due time it knows of, until a wake-up announcement names a sooner one, or at most {@code maxIdle}.
 * <p>
 * Threads: the poller thread owns the scheduling state (here, in {@link SlotSchedule} and {@link PopRounds}); other
 * threads never touch it, they post to {@link PollerEvents}, which the poller drains completely at the top of every
 * pass. {@link #throttledUntil}, {@link #lastPassMillis}, {@link #passes} and the counts at stop are volatile, for the
 * watchdog ({@link PollerCheck}) and the container. Invariants kept here:
 * <ol>
 * <li>The sleep is bounded by {@code maxIdle}, so no lost unpark can stop the poller for longer than that. Every
 * {@code maxIdle} it checks which slots hold anything at all (plain {@code EXISTS}, no script) and pops those at once:
 * what no announcement told it about (a lost one, another consumer's expired lease) is found within {@code maxIdle};
 * an empty slot has nothing that could fall due.</li>
 * <li>It waits on Redis with a deadline only (pops, the idle check: {@code commandTimeout}; the rate limit's
 * permits), and fetches for room in the buffer: its capacity minus what is unhandled or asked for ({@link #room}).</li>
 * <li>While paused on purpose it takes nothing, but goes on draining its events and extending leases.</li>
 * <li>With other containers on the topic it prefers its own share of the slots and steals from theirs only when its
 * own have nothing due ({@link SlotShares}, {@link SlotSchedule#dueSlots}); the idle check, and a full poll in its
 * stead (start, resync, failed idle check), still cover every slot.</li>
 * </ol>
 */
final class Poller {

    private static final Logger log = LoggerFactory.getLogger(ContainerLoggers.CONCURRENT);

    private static final long ERROR_PAUSE_MILLIS = SlotSchedule.ERROR_PAUSE_MILLIS;

    private final SlotConsumer consumer;
    private final ContainerOptions options;
    private final String id;
    private final String topic;
    private final RunFlags flags;
    private final HandoffBuffer buffer;
    private final LeaseKeeper leases;
    private final RedisClock clock;
    final PollerEvents events;
    final SlotSchedule schedule;
    /** The topic's consumers and this container's preferred share of the slots. */
    final SlotShares shares;
    private final int capacity;
    /**
     * The most one pop round asks for, and the room the poller waits for before sending one (half the buffer: a
     * round can be under way while the handlers work through the other half; each fetch is a decent batch).
     */
    final int roundSize;
    private final long extendEveryMillis;
    private final long commandTimeoutMillis;
    private final long lookAheadMillis;
    /** The topic's cluster-wide rate limit, or null. */
    private final TopicRateLimiter limiter;
    private final RmqInstrumentation instrumentation;
    private final boolean instrumented;

    /** The rounds of pops, and the pops under way. */
    final PopRounds pops;

    // ---------------------------------------------------------------- poller thread only

    /**
     * Local ms of the next pop of every slot not busy: 0 at start, after a {@link Resync} and a failed idle check;
     * else never (Long.MAX_VALUE once that poll is taken, even with nothing to send).
     */
    private long nextFullPoll;
    /** Local ms of the next idle check ({@link #checkSlots}): every {@code maxIdle}. */
    private long nextIdleCheck;
    /** Whether an idle check is under way (its {@link SlotsChecked} event not drained yet). */
    private boolean idleCheckUnderWay;
    /** Pauses every slot (the topic's rate limit could not be read); a failed pop pauses only its slot. */
    private long errorPauseUntil;

    // ---------------------------------------------------------------- written by the poller, read by others

    /** Rate-limited: local ms when the shared bucket has a permit again. */
    volatile long throttledUntil;
    /** Local ms of the poller's last pass. */
    volatile long lastPassMillis;
    /** Passes the poller began (only the poller writes it; {@code pause()} waits for it to move). */
    volatile long passes;
    volatile int handedBackOnStop;
    volatile int abandonedOnStop;

    final WakeUpSubscriber.Listener wakeListener = new WakeUpSubscriber.Listener() {
        @Override
        public void wake(int slot, long due) {
            // with a look-ahead the slot needs its pop that much before the announced message is due
            due -= lookAheadMillis;
            events.add(new Wake(slot, due));
            long planned = events.plannedWake();
            if (planned != 0 && due - clock.offset() < planned) {
                events.unpark();
            }
        }

        @Override
        public void resubscribed() {
            // announcements sent while the subscription was down are lost: look at every slot
            events.post(new Resync(false));
        }
    };

    Poller(SlotConsumer consumer, ContainerOptions options, RunFlags flags, HandoffBuffer buffer, LeaseKeeper leases,
            RedisClock clock, int capacity, long extendEveryMillis) {
        this.consumer = consumer;
        this.options = options;
        this.id = options.id();
        this.topic = consumer.topic().name();
        this.flags = flags;
        this.buffer = buffer;
        this.leases = leases;
        this.clock = clock;
        this.events = new PollerEvents();
        this.commandTimeoutMillis = options.commandTimeout().toMillis();
        this.shares = new SlotShares(consumer, id, events, options.ownershipTimeout().toMillis());
        this.schedule = new SlotSchedule(id, topic, clock, shares);
        this.capacity = capacity;
        this.roundSize = capacity / 2;
        this.extendEveryMillis = extendEveryMillis;
        this.lookAheadMillis = consumer.topic().type().isTimeOrdered() ? consumer.settings().lookAhead().toMillis() : 0;
        this.limiter = options.rateLimit() == null ? null : consumer.rateLimiter(options.rateLimit());
        this.pops = new PopRounds(consumer, id, events, schedule, buffer, limiter, commandTimeoutMillis);
        this.instrumentation = consumer.instrumentation();
        this.instrumented = instrumentation != RmqInstrumentation.NONE;
    }

    /** A new run; before the thread starts (which publishes this to it). Nothing runs yet that could post. */
    void reset(int slots, long now) {
        shares.start(slots);
        schedule.start(slots, now);
        pops.reset();
        events.clear();
        nextFullPoll = 0;
        errorPauseUntil = 0;
        throttledUntil = 0;
        nextIdleCheck = IdleCheckTimes.nextAfter(now, options.maxIdle().toMillis());
        idleCheckUnderWay = false;
        lastPassMillis = now;
    }

    /** Starts a poller thread (at start, or the watchdog's restart of a dead one). */
    void startThread() {
        Thread thread = options.threadFactory().newThread(this::loop);
        thread.setName(id + "-poller");
        events.poller(thread);
        thread.start();
    }

    private void loop() {
        long nextExtension = System.currentTimeMillis() + extendEveryMillis;
        while (!flags.stopping) {
            try {
                long now = System.currentTimeMillis();
                lastPassMillis = now;
                passes++;
                drainEvents(now);
                long nextBeat = shares.beat(now, flags.paused);
                leases.takeIn();
                if (now >= nextExtension) {
                    leases.extend();
                    nextExtension = now + extendEveryMillis;
                }
                long slowPopsCheck = pops.checkSlow(now);
                int free = room();
                boolean paused = now < errorPauseUntil || now < throttledUntil;
                boolean pausedOnPurpose = flags.paused;
                boolean fullPoll = now >= nextFullPoll;
                if (!fullPoll && now >= nextIdleCheck && !paused && !pausedOnPurpose && free >= roundSize) {
                    checkSlots(now);
                }
                int[] due = paused || pausedOnPurpose ? new int[0]
                        : schedule.dueSlots(fullPoll, System.currentTimeMillis() + clock.offset());
                if (fullPoll && free >= roundSize && !paused && !pausedOnPurpose) {
                    // taken even when every slot is busy (their pops report for them): a full poll left pending
                    // would keep nextFullPoll in the past, and the poller would spin without sleeping
                    nextFullPoll = Long.MAX_VALUE; // the idle check takes over (checkSlots)
                    nextIdleCheck = IdleCheckTimes.nextAfter(now, options.maxIdle().toMillis());
                }
                if (free >= roundSize && due.length > 0) {
                    int[] slots = fullPoll ? due : schedule.pick(due, Math.max(1, Math.min(due.length,
                            Math.min(free, roundSize) / consumer.settings().batchSize())));
                    if (limiter != null) {
                        free = permits(now, free);
                        if (free == 0) {
                            continue;
                        }
                        slots = Arrays.copyOf(slots, Math.min(slots.length, free));
                    }
                    pops.send(slots, free);
                    continue;
                }
                long wakeAt = Math.min(Math.min(leases.outstanding() == 0 ? Long.MAX_VALUE : nextExtension,
                        slowPopsCheck), nextBeat);
                boolean full = free < roundSize;
                if (pausedOnPurpose) {
                    full = false; // nothing to wait for but resume() (an event), extensions and pops under way
                }
                else if (paused) {
                    wakeAt = Math.min(wakeAt, Math.max(errorPauseUntil, throttledUntil));
                }
                else if (!full) {
                    wakeAt = Math.min(wakeAt, Math.min(Math.min(nextFullPoll, nextIdleCheck),
                            schedule.earliestDueLocal()));
                }
                // with the buffer full, a handler finishing or a round ending wakes the poller; the sleep is bounded
                // by maxIdle whatever happens
                park(Math.min(wakeAt, now + options.maxIdle().toMillis()), full);
            }
            catch (Throwable ex) {
                if (flags.stopping) {
                    break;
                }
                log.error("RMQ listener container '{}' hit an unexpected error in its poller (topic '{}'); going on"
                        + " in {} ms", id, topic, ERROR_PAUSE_MILLIS, ex);
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(ERROR_PAUSE_MILLIS));
            }
        }
        drainOnStop();
    }

    /**
     * Takes rate-limit permits for up to {@code free} messages: how many it got, or 0 when there are none (polling
     * waits for the bucket) or they could not be read (every slot pauses).
     */
    private int permits(long now, int free) {
        long[] permits;
        try {
            permits = limiter.acquire(Math.min(free, roundSize), commandTimeoutMillis);
        }
        catch (RuntimeException ex) {
            errorPauseUntil = now + ERROR_PAUSE_MILLIS;
            log.warn("RMQ listener container '{}' could not take rate-limit permits of topic '{}';"
                    + " retrying in {} ms: {}", id, topic, ERROR_PAUSE_MILLIS, String.valueOf(ex));
            return 0;
        }
        if (permits[0] == 0) {
            throttledUntil = now + permits[1]; // no polling until a permit is free
            if (instrumented) {
                instrumentation.rateLimitWaited(id, topic, TimeUnit.MILLISECONDS.toNanos(permits[1]));
            }
            return 0;
        }
        return (int) permits[0];
    }

    /** Takes in everything other threads reported: finished pops first, then announcements. */
    private void drainEvents(long now) {
        Event event;
        List<Wake> wakes = null;
        while ((event = events.next()) != null) {
            if (event instanceof PopFinished finished) {
                schedule.popFinished(finished.pop(), finished.result(), finished.error(), now);
            }
            else if (event instanceof Wake wake) {
                if (wakes == null) {
                    wakes = new ArrayList<>();
                }
                wakes.add(wake);
            }
            else if (event instanceof Resync resync) {
                resync(resync.abandonOldPops(), now);
            }
            else if (event instanceof TopologyChecked) {
                pops.resendMoved();
            }
            else if (event instanceof SlotsChecked checked) {
                slotsChecked(checked, now);
            }
            else if (event instanceof Members members) {
                for (int slot : shares.membersAnswered(members)) {
                    // won from a member that left or died: look at once, its messages may be due
                    schedule.applyWake(new Wake(slot, 0));
                }
            }
        }
        schedule.applyDeferredWakes();
        if (wakes != null) {
            wakes.forEach(schedule::applyWake);
        }
    }

    /**
     * The idle check, every {@code maxIdle}: the safety net for what no announcement told the poller (a lost one, a
     * writer that does not announce, another consumer's lease that expires because it died). Instead of a pop of
     * every slot it asks which slots hold anything at all ({@link SlotConsumer#occupiedSlotsAsync(long)}: one plain
     * {@code EXISTS} on a standalone server whose slots are all empty, shared with the engine's other listeners that
     * check at the same grid point ({@link IdleCheckTimes}); one per slot on a cluster) and pops only those, at once.
     * Its answer comes back as a {@link SlotsChecked} event; one check at a time, bounded by the command timeout.
     */
    private void checkSlots(long now) {
        nextIdleCheck = IdleCheckTimes.nextAfter(now, options.maxIdle().toMillis());
        if (idleCheckUnderWay) {
            return;
        }
        idleCheckUnderWay = true;
        CompletableFuture<long[]> check;
        try {
            check = consumer.occupiedSlotsAsync(IdleCheckTimes.foldMillis(options));
        }
        catch (RuntimeException ex) {
            check = CompletableFuture.failedFuture(ex);
        }
        check.orTimeout(commandTimeoutMillis, TimeUnit.MILLISECONDS).whenComplete((occupied, error) ->
                events.post(new SlotsChecked(occupied, error)));
    }

    /**
     * Pops at once every slot the idle check found something in (a busy slot after its pop under way, as for an
     * announcement; another container's slot when its own have nothing due, after its steal delay); empty slots, and
     * occupied slots of other containers, that are not busy count as polled (for the watchdog). A failed check polls
     * every slot.
     */
    private void slotsChecked(SlotsChecked checked, long now) {
        idleCheckUnderWay = false;
        long[] occupied = checked.occupied();
        if (occupied == null) {
            log.debug("RMQ listener container '{}': the idle check of topic '{}' failed; polling every slot: {}",
                    id, topic, String.valueOf(checked.error()));
            nextFullPoll = 0;
            return;
        }
        long redisNow = now + clock.offset();
        for (int slot = 0; slot < occupied.length; slot++) {
            if (occupied[slot] > 0) {
                // due at once (a pop brings the slot's exact next due time); a foreign slot as of now, so that its
                // steal delay runs from here and its owner, which looks at once, keeps its head start
                schedule.applyWake(new Wake(slot, shares.mine(slot) ? 0 : redisNow));
            }
            if (occupied[slot] == 0 || !shares.mine(slot)) {
                schedule.foundEmpty(slot, now);
            }
        }
    }

    /** Polls every slot at once; with {@code abandonOldPops}, also gives up pops long past their deadline. */
    private void resync(boolean abandonOldPops, long now) {
        nextFullPoll = 0;
        errorPauseUntil = 0;
        if (!abandonOldPops) {
            return;
        }
        pops.abandonOld(now);
    }

    /**
     * How many more messages to fetch: the buffer's capacity minus those not yet handled or still on their way,
     * but never more than twice the capacity outstanding in all (handled ones wait for their batched ack).
     */
    int room() {
        int coming = pops.requested();
        return Math.min(capacity - buffer.unhandled() - coming, 2 * capacity - leases.outstanding() - coming);
    }

    /** Wakes a sleeping poller when the buffer has room for a round (any thread; after a handling or settlement). */
    void wakeIfRoom() {
        // the first thread that finds room takes the planned wake and unparks; the others see the poller awake (one
        // unpark per sleep, not one per message handled while it sleeps)
        if (events.plannedWake() != 0 && room() >= roundSize) {
            events.takeWake();
        }
    }

    /**
     * Sleeps until {@code wakeAtMillis}, an event, or (when {@code full}) room in the buffer. Others unpark the poller
     * only while its wake is planned ({@link PollerEvents#planWake}): an unpark while it is awake would only wake it
     * for nothing later.
     */
    private void park(long wakeAtMillis, boolean full) {
        events.planWake(Math.max(1, wakeAtMillis));
        long now = System.currentTimeMillis();
        if (wakeAtMillis > now && !flags.stopping && events.isEmpty() && !(full && room() >= roundSize)) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(wakeAtMillis - now));
        }
        events.planWake(0);
    }

    /** Stop: give back what was fetched but not started, then keep running handlers' leases alive until they end. */
    private void drainOnStop() {
        shares.leave(); // the others take this share over at their next heartbeat
        long deadline = System.currentTimeMillis() + options.shutdownTimeout().toMillis();
        // pops under way bring deliveries that must be given back too (bounded: pops time out, late ones are
        // released by the buffer)
        long popDeadline = Math.min(deadline, System.currentTimeMillis() + commandTimeoutMillis);
        while (pops.underWay() > 0 && System.currentTimeMillis() < popDeadline) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
        }
        handedBackOnStop = 0;
        abandonedOnStop = 0;
        handedBackOnStop = buffer.giveBackAtStop();
        long nextExtension = System.currentTimeMillis() + extendEveryMillis;
        while (leases.outstanding() > 0 && System.currentTimeMillis() < deadline) {
            if (System.currentTimeMillis() >= nextExtension) {
                leases.extend();
                nextExtension = System.currentTimeMillis() + extendEveryMillis;
            }
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(Math.min(20, extendEveryMillis)));
        }
        int left = leases.outstanding();
        if (left > 0) {
            abandonedOnStop = left;
            log.warn("Container '{}' stopped with {} handlers still running after {}; their messages will be"
                    + " redelivered when their leases expire", id, left, options.shutdownTimeout());
        }
    }
}
