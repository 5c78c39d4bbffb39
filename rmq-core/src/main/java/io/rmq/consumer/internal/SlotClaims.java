package io.rmq.consumer.internal;

import java.util.concurrent.CompletableFuture;

import io.rmq.consumer.RmqConsumer;
import io.rmq.core.internal.Seam;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import org.jspecify.annotations.Nullable;

/**
 * Ownership claims on a consumer's ordered slots, for the ORDERLY container (and tests): the claim's answer is an
 * engine internal, so {@link RmqConsumer} keeps the method off its public API and registers it in {@link #SEAM} when
 * it is initialized. Stateless.
 */
public final class SlotClaims {

    /** What {@link RmqConsumer} registers. */
    @FunctionalInterface
    public interface Access {

        CompletableFuture<Claim> claim(RmqConsumer consumer, int slot, String instanceId, long heldEpoch,
                long ownershipMillis, long decidedEpoch, RmqRedis.@Nullable Beat live);
    }

    public static final Seam<Access> SEAM = new Seam<>(RmqConsumer.class);

    private SlotClaims() {
    }

    /**
     * Claims (or, with the epoch held, renews) {@code consumer}'s ordered slot {@code slot} for
     * {@code ownershipMillis}; {@code decidedEpoch} is the epoch the slot coordinator decided on (0: none).
     */
    public static CompletableFuture<Claim> claim(RmqConsumer consumer, int slot, String instanceId,
            long heldEpoch, long ownershipMillis, long decidedEpoch) {
        return SEAM.get().claim(consumer, slot, instanceId, heldEpoch, ownershipMillis, decidedEpoch, null);
    }

    /**
     * Claims {@code consumer}'s ordered slot {@code slot} leased by the membership: taken over only from a holder
     * missing from {@code live}, the list the claimant's own heartbeat returned (see own.lua).
     */
    public static CompletableFuture<Claim> claimLeased(RmqConsumer consumer, int slot, String instanceId,
            long decidedEpoch, RmqRedis.Beat live) {
        return SEAM.get().claim(consumer, slot, instanceId, 0, 0, decidedEpoch, live);
    }
}
