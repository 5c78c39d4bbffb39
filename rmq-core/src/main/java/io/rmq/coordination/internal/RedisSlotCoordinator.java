package io.rmq.coordination.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.RmqException;
import io.rmq.core.internal.Timeouts;
import io.rmq.redis.internal.ConsumerRoster;
import io.rmq.redis.internal.MembersBeat;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default coordinator: live instances are listed by their engine's one heartbeat ({@link ConsumerRoster}, under
 * {@code <prefix>:{rmq-consumers}}; an instance whose engine misses its heartbeats for the ownership timeout drops
 * out) and every instance computes the same round-robin share of the slots from that list. Ownership itself is the
 * slot's owner key in Redis, leased by that membership: the key has no deadline to renew, another instance takes the
 * slot over only once the holder has dropped out of the list, and a holder whose heartbeat finds it dropped gives up
 * every slot (see own.lua and consumers_beat.lua). So an idle engine costs Redis one heartbeat per beat, whatever the
 * number of its ORDERLY listeners and of the slots they hold.
 * <p>
 * Engines before the roster listed their ORDERLY instances in {@code <prefix>:{<topic>}:members} and read only that.
 * So that they see this one (and never take its slots over as if it were gone), an instance also lists itself there
 * for 2.5 times its listing interval, and reads who else is: every {@link #PRESENCE_EVERY_MILLIS} times the number of
 * this engine's ORDERLY memberships (at most {@link #PRESENCE_SPREAD_MAX} times), so that an engine's listings cost
 * Redis one call a minute however many ORDERLY listeners it runs. While an instance of an
 * older engine is listed there (an id without {@link ConsumerRoster#ROSTER_MARK}), it beats that key at every pass with the ownership
 * timeout, as they do, and counts them in its live list; an older instance that holds a slot is taken over only on such
 * a list (own.lua refuses a claim made on the roster alone).
 */
public final class RedisSlotCoordinator implements SlotCoordinator {

    /**
     * How often an engine lists one of its instances in the topic's own membership key for older engines: each lists
     * itself every this many ms times the engine's number of ORDERLY memberships (up to {@link #PRESENCE_SPREAD_MAX}).
     */
    static final long PRESENCE_EVERY_MILLIS = 60_000;
    /** The most memberships an engine's listings are spread over (a listing interval of at most 10 minutes). */
    static final int PRESENCE_SPREAD_MAX = 10;

    /** This engine's ORDERLY memberships (its listeners' instances) with this coordinator: they share the listings. */
    private final AtomicInteger memberships = new AtomicInteger();

    private static final Logger log = LoggerFactory.getLogger(RedisSlotCoordinator.class);

    private final RmqRedis redis;

    /** Made by the {@link io.rmq.Rmq} facade, the default coordinator of its ORDERLY listeners. */
    public RedisSlotCoordinator(RmqRedis redis) {
        this.redis = redis;
    }

    @Override
    public Membership join(String topic, String instanceId, int slotAmount, Duration ownershipTimeout) {
        return new Lease(topic, instanceId, slotAmount, ownershipTimeout.toMillis());
    }

    /**
     * One instance's membership, which is also the lease of its slots ({@link MembershipLease}). Coordination thread,
     * but for the roster's answers (Lettuce's threads, kept in volatile fields) and close (the container's stop, once
     * that thread has ended).
     */
    private final class Lease implements Membership, MembershipLease {

        private final String topic;
        private final String instanceId;
        private final int slotAmount;
        private final long ttl;
        private final CompletableFuture<Void> answeredOnce = new CompletableFuture<>();
        private volatile ConsumerRoster.@Nullable Answer latest;
        private volatile boolean dropped;
        /** An older engine's instance is listed in the topic's membership key: beat it at every pass too. */
        private boolean withOlder;
        /** Listed in the topic's membership key (for older engines). */
        private boolean present;
        /** When this instance lists itself in the topic's membership key again (0: at its next pass). */
        private long listAgainAt;
        /** Counted among the engine's memberships (until it closes or is lost). */
        private boolean counted = true;
        private MembersBeat live;
        private long renewedAt;

        Lease(String topic, String instanceId, int slotAmount, long ttl) {
            this.topic = topic;
            this.instanceId = instanceId;
            this.slotAmount = slotAmount;
            this.ttl = ttl;
            memberships.incrementAndGet();
            redis.roster().joinOrderly(topic, instanceId, ttl, this::answered);
        }

        private void answered(ConsumerRoster.@Nullable Answer answer, @Nullable Throwable error) {
            if (answer != null) {
                if (answer.dropped()) {
                    dropped = true;
                }
                latest = answer;
                answeredOnce.complete(null);
            }
        }

        @Override
        public Map<Integer, Long> assignedSlots() {
            ConsumerRoster.Answer answer = latest;
            if (answer == null) {
                try {
                    answeredOnce.get(ttl, TimeUnit.MILLISECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new RmqException("interrupted while joining the ordered consumers of topic '" + topic + "'");
                }
                catch (Exception ex) {
                    throw new RmqException("no heartbeat of the ordered consumers of topic '" + topic + "' answered"
                            + " within " + ttl + " ms");
                }
                answer = latest;
            }
            if (dropped) {
                throw lost("missed its heartbeats for the ownership timeout (" + ttl + " ms) and was dropped from"
                        + " the membership");
            }
            List<String> ids = new ArrayList<>(answer.live());
            long renewed = answer.sentMillis();
            long now = System.currentTimeMillis();
            boolean read = withOlder || now >= listAgainAt;
            if (read) {
                // spread over the engine's memberships: an engine lists one a minute, however many it has
                long every = PRESENCE_EVERY_MILLIS * Math.min(PRESENCE_SPREAD_MAX, Math.max(1, memberships.get()));
                long listed = every * 5 / 2;
                boolean beat = withOlder && present;
                MembersBeat topicBeat = RedisGateway.await(redis.members(topic, instanceId,
                        withOlder ? ttl : listed,
                        beat ? RmqRedis.MembersAction.BEAT : RmqRedis.MembersAction.JOIN),
                        "renewing membership of ordered consumers of topic '" + topic + "'", ttl);
                if (beat && !topicBeat.listed()) {
                    throw lost("missed its heartbeats in the membership that older engines read for the ownership"
                            + " timeout (" + ttl + " ms) and was dropped from it");
                }
                present = true;
                // after an instance's first listing the next comes in the interval's second half, at random: the
                // listings of an engine's instances spread over the interval instead of coming together
                boolean first = listAgainAt == 0 && !withOlder;
                listAgainAt = now + (first ? every / 2 + ThreadLocalRandom.current().nextLong(every) / 2 : every);
                List<String> older = ConsumerRoster.olderInstances(topicBeat.live());
                if (older.isEmpty()) {
                    if (withOlder) {
                        withOlder = false;
                        // on the roster alone again: stay listed for an older instance that starts later
                        RedisGateway.await(redis.members(topic, instanceId, listed,
                                RmqRedis.MembersAction.JOIN), "listing an ordered consumer of topic '" + topic + "'",
                                ttl);
                        log.info("ORDERLY instance {} of topic '{}': no instance of an older RMQ is listed any more;"
                                + " the engine's heartbeat alone renews its slots", instanceId, topic);
                    }
                }
                else {
                    if (!withOlder) {
                        withOlder = true;
                        log.info("ORDERLY instance {} of topic '{}': instances of an older RMQ are listed ({}); it also"
                                + " beats {}'s membership key at every pass until they are gone", instanceId, topic,
                                older, topic);
                    }
                    ids.addAll(older);
                    renewed = Math.min(renewed, now);
                }
            }
            // a list that read the topic's membership key may take a slot over from an older engine's instance missing there
            live = new MembersBeat(true, answer.redisNow(), ids, read);
            renewedAt = renewed;
            Map<Integer, Long> slots = new LinkedHashMap<>();
            for (int slot : SlotCoordinator.share(ids, slotAmount, instanceId)) {
                slots.put(slot, 0L);
            }
            return slots;
        }

        /**
         * Takes this id off wherever it is listed (it is never live again: others take its owner keys over) and says
         * why it is lost; the container joins again under a new id.
         */
        private MembershipLost lost(String why) {
            uncount();
            redis.roster().leave(instanceId);
            if (present) {
                present = false;
                try {
                    redis.members(topic, instanceId, ttl, RmqRedis.MembersAction.LEAVE); // a lost leave runs out
                }
                catch (RuntimeException ex) {
                    // runs out with its time
                }
            }
            return new MembershipLost("ORDERLY instance " + instanceId + " of topic '" + topic + "' " + why
                    + "; it gives up its slots and joins again under a new id");
        }

        @Override
        public MembersBeat live() {
            return live;
        }

        @Override
        public long renewedAt() {
            return renewedAt;
        }

        @Override
        public void heldByOlderEngine() {
            if (!withOlder) {
                listAgainAt = 0; // the next pass reads the topic's membership key at once
            }
        }

        /** No longer one of the engine's memberships that share the listings (once). */
        private void uncount() {
            if (counted) {
                counted = false;
                memberships.decrementAndGet();
            }
        }

        @Override
        public void leaveAfterTimeout() {
            uncount();
            // listed until its timeout runs out from now, as a membership that stopped beating: then taken off
            redis.roster().linger(instanceId, ttl);
            if (present) {
                Timeouts.after(ttl, () -> redis.members(topic, instanceId, ttl, RmqRedis.MembersAction.LEAVE));
            }
        }

        @Override
        public void close() {
            uncount();
            redis.roster().leave(instanceId);
            if (present) {
                RedisGateway.await(redis.members(topic, instanceId, ttl, RmqRedis.MembersAction.LEAVE),
                        "leaving the ordered consumers of topic '" + topic + "'", ttl);
            }
        }
    }

    @Override
    public String toString() {
        return "Redis";
    }
}
