package io.rmq.coordination.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.rmq.coordination.SlotCoordinator;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.MembersBeat;

/**
 * The default coordinator: live instances are listed in {@code <prefix>:{<topic>}:members} (a heartbeat per tick;
 * an instance that misses its heartbeats for the ownership timeout drops out) and every instance computes the same
 * round-robin share of the slots from that list. Ownership itself is the slot's owner key in Redis, leased by that
 * membership: the key has no deadline to renew, another instance takes the slot over only once the holder has dropped
 * out of the list, and a holder whose heartbeat finds it dropped gives up every slot (see own.lua and members.lua).
 * So an idle instance costs Redis one heartbeat per tick, whatever number of slots it holds.
 */
public final class RedisSlotCoordinator implements SlotCoordinator {

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
     * One instance's membership, which is also the lease of its slots ({@link MembershipLease}). Coordination thread
     * (close: the container's stop, once that thread has ended).
     */
    private final class Lease implements Membership, MembershipLease {

        private final String topic;
        private final String instanceId;
        private final int slotAmount;
        private final long ttl;
        private boolean joined;
        private MembersBeat live;

        Lease(String topic, String instanceId, int slotAmount, long ttl) {
            this.topic = topic;
            this.instanceId = instanceId;
            this.slotAmount = slotAmount;
            this.ttl = ttl;
        }

        @Override
        public Map<Integer, Long> assignedSlots() {
            MembersBeat beat = RedisGateway.await(redis.members(topic, instanceId, ttl,
                    joined ? RmqRedis.MembersAction.BEAT : RmqRedis.MembersAction.JOIN),
                    "renewing membership of ordered consumers of topic '" + topic + "'", ttl);
            if (!beat.listed()) {
                joined = false;
                throw new MembershipLost("ORDERLY instance " + instanceId + " of topic '" + topic + "' missed its"
                        + " heartbeats for the ownership timeout (" + ttl + " ms) and was dropped from the membership;"
                        + " it gives up its slots and joins again under a new id");
            }
            joined = true;
            live = beat;
            Map<Integer, Long> slots = new LinkedHashMap<>();
            for (int slot : SlotCoordinator.share(beat.live(), slotAmount, instanceId)) {
                slots.put(slot, 0L);
            }
            return slots;
        }

        @Override
        public MembersBeat live() {
            return live;
        }

        @Override
        public void close() {
            RedisGateway.await(redis.members(topic, instanceId, ttl, RmqRedis.MembersAction.LEAVE),
                    "leaving the ordered consumers of topic '" + topic + "'", ttl);
        }
    }

    @Override
    public String toString() {
        return "Redis";
    }
}
