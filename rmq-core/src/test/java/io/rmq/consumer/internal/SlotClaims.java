package io.rmq.consumer.internal;

import java.util.concurrent.CompletableFuture;

import io.rmq.consumer.RmqConsumer;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.RmqRedisOrderly;
import io.rmq.redis.internal.MembersBeat;

/**
 * Ownership claims on the ordered slots of a consumer made by {@link io.rmq.Rmq#consumer}, for tests that claim by
 * hand what an ORDERLY container claims through its {@link SlotConsumer}. Stateless.
 */
public final class SlotClaims {

    private SlotClaims() {
    }

    /** {@link SlotConsumer#claim} of {@code consumer}. */
    public static CompletableFuture<RmqRedisOrderly.Claim> claim(RmqConsumer consumer, int slot, String instanceId,
            long heldEpoch, long ownershipMillis, long decidedEpoch) {
        return ((SlotConsumer) consumer).claim(slot, instanceId, heldEpoch, ownershipMillis, decidedEpoch);
    }

    /** {@link SlotConsumer#claimLeased} of {@code consumer}. */
    public static CompletableFuture<RmqRedisOrderly.Claim> claimLeased(RmqConsumer consumer, int slot, String instanceId,
            long decidedEpoch, MembersBeat live) {
        return ((SlotConsumer) consumer).claimLeased(slot, instanceId, decidedEpoch, live);
    }
}
