package io.rmq.coordination;

import java.time.Duration;
import java.util.Map;

/**
 * Decides which ORDERLY consumer instance of a topic should own which of its slots. It only decides; the fence is in
 * Redis either way: an instance takes a slot by claiming its owner key ({@code own.lua}), and every ordered script
 * refuses an instance whose epoch no longer holds the slot. Implementations: {@link RedisSlotCoordinator} (the
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
         * run out); above 0 is the coordinator's own fencing epoch, which takes over from any lower one.
         */
        Map<Integer, Long> assignedSlots();

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
