package io.rmq.coordination.internal;

import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.MembersBeat;

/**
 * A {@link io.rmq.coordination.SlotCoordinator.Membership} that is also the lease of every slot its instance holds
 * (the Redis coordinator's): the owner keys it claims hold no deadline, and its instance keeps its slots while it is
 * listed in the topic's membership (see own.lua). Read by the container's coordination thread only.
 */
public interface MembershipLease {

    /**
     * The live members as the last successful {@code assignedSlots()} read them, with the membership's Redis clock
     * then: a claim takes a slot over only from a holder missing from this list.
     */
    MembersBeat live();

    /**
     * Local time (ms) when the heartbeat behind {@link #live()} began: this instance is listed until at least that
     * time + the ownership timeout, by which its slots are guarded (another instance takes them only once it has
     * dropped out).
     */
    long renewedAt();

    /**
     * A claim was refused because an instance of an older engine holds the slot (own.lua, a list of the roster alone):
     * the next pass reads the topic's own membership key, where such instances are listed.
     */
    void heldByOlderEngine();

    /**
     * Stops renewing the membership while slots stay with handlers still running: this instance stays listed for the
     * ownership timeout from now, and others take its slots over once it has run out (as with a process that died).
     */
    void leaveAfterTimeout();

    /**
     * Thrown by {@code assignedSlots()} when the heartbeat found the instance no longer listed (its time ran out and
     * another instance may have taken its slots over): it gives up every slot at once, and joins again under a new
     * instance id (so that the owner keys of the old one, never live again, are taken over).
     */
    final class MembershipLost extends io.rmq.core.RmqException {

        public MembershipLost(String message) {
            super(message);
        }
    }
}
