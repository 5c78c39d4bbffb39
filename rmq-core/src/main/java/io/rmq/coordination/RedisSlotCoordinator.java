package io.rmq.coordination;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.rmq.coordination.internal.CoordinatorFactory;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;

/**
 * The default coordinator: live instances are listed in {@code <prefix>:{<topic>}:members} (a heartbeat per tick;
 * an instance that misses its heartbeats for the ownership timeout drops out) and every instance computes the same
 * round-robin share of the slots from that list. Ownership itself is the slot's owner key in Redis.
 */
public final class RedisSlotCoordinator implements SlotCoordinator {

    private final RmqRedis redis;

    static {
        CoordinatorFactory.SEAM.register(RedisSlotCoordinator::new);
    }

    /** Takes engine internals, so the {@link io.rmq.Rmq} facade makes it through {@link CoordinatorFactory}. */
    RedisSlotCoordinator(RmqRedis redis) {
        this.redis = redis;
    }

    @Override
    public Membership join(String topic, String instanceId, int slotAmount, Duration ownershipTimeout) {
        long ttl = ownershipTimeout.toMillis();
        return new Membership() {
            @Override
            public Map<Integer, Long> assignedSlots() {
                List<String> live = RedisGateway.await(redis.members(topic, instanceId, ttl, false),
                        "renewing membership of ordered consumers of topic '" + topic + "'", ttl);
                Map<Integer, Long> slots = new LinkedHashMap<>();
                for (int slot : SlotCoordinator.share(live, slotAmount, instanceId)) {
                    slots.put(slot, 0L);
                }
                return slots;
            }

            @Override
            public void close() {
                RedisGateway.await(redis.members(topic, instanceId, ttl, true),
                        "leaving the ordered consumers of topic '" + topic + "'", ttl);
            }
        };
    }

    @Override
    public String toString() {
        return "Redis";
    }
}
