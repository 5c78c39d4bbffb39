package io.rmq.coordination;

import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Decides which ORDERLY consumer instance of a topic should own which of its slots. It only decides; the fence is in
 * Redis either way: an instance takes a slot by claiming its owner key ({@code own.lua}), and every ordered script
 * refuses an instance whose epoch no longer holds the slot. Implementations: {@link io.rmq.coordination.internal.RedisSlotCoordinator} (the
 * default, nothing else to run) and {@code ZooKeeperSlotCoordinator} (Apache Curator, optional).
 */
public interface SlotCoordinator {

    /**
     * Joins the ordered consumers of {@code topic} as {@code instanceId}.
     *
     * @param ownershipTimeout how long an instance that stops renewing (died, paused) keeps counting as alive
     */
    Membership join(String topic, String instanceId, int slotAmount, Duration ownershipTimeout);

    /** One instance's membership; the container calls it from its coordination thread only. */
    interface Membership extends AutoCloseable {

        /**
         * Renews this instance's liveness and returns the slots it should own now, each with the epoch to claim it
         * with: 0 lets Redis number the epoch (the slot is claimed once its holder has released it or its time has
         * run out, or, with {@link io.rmq.coordination.internal.RedisSlotCoordinator}, whose membership leases the slots, once the holder dropped
         * out of the membership); above 0 is the coordinator's own fencing epoch, which takes over from any lower one.
         */
        Map<Integer, Long> assignedSlots();

        /**
         * How long the slots of a successful {@link #assignedSlots()} stay this instance's as far as the coordinator
         * is concerned, counted from when that call began: no other instance can be given them sooner (for
         * ZooKeeper, the negotiated session timeout: the owner nodes outlive the session by nothing). Null (the
         * default): the coordinator sets no such bound, another instance takes a slot only once this one's
         * ownership in Redis has run out. The container starts no handler on a slot past the shorter of the two,
         * whatever each is set to, and renews five times within it.
         */
        default java.time.@Nullable Duration assignmentTimeout() {
            return null;
        }

        /**
         * False from the moment the coordinator can no longer vouch for its last assignment (for ZooKeeper: the
         * connection is suspended or the session lost) until {@link #assignedSlots()} has succeeded again: the
         * container starts no handler meanwhile.
         */
        default boolean assured() {
            return true;
        }

        /** This instance gave {@code slot} up (after finishing its running handler). */
        default void released(int slot) {
        }

        /** Leaves: the other instances take this one's slots over. */
        @Override
        void close();
    }

    /**
     * The slots {@code me} gets when {@code members} (the same list on every instance, sorted) share
     * {@code slotAmount} slots: round robin, so counts differ by at most one.
     */
    static java.util.Set<Integer> share(java.util.List<String> members, int slotAmount, String me) {
        java.util.List<String> sorted = members.stream().sorted().distinct().toList();
        int index = sorted.indexOf(me);
        java.util.Set<Integer> mine = new java.util.TreeSet<>();
        if (index < 0) {
            return mine;
        }
        for (int slot = index; slot < slotAmount; slot += sorted.size()) {
            mine.add(slot);
        }
        return mine;
    }
}
