package io.rmq.container.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rendezvous hashing of {@link SlotShares#shares}: over the same live list every member computes the same owner
 * per slot, and a member that joins or leaves moves only the slots it wins or held.
 */
class SlotSharesHashingTest {

    private static final int SLOTS = 64;

    private static int[] owners(List<String> members) {
        int[] owner = new int[SLOTS];
        java.util.Arrays.fill(owner, -1);
        for (int m = 0; m < members.size(); m++) {
            boolean[] mine = SlotShares.shares(members, members.get(m), SLOTS);
            for (int slot = 0; slot < SLOTS; slot++) {
                if (mine[slot]) {
                    assertThat(owner[slot]).as("slot %d claimed twice", slot).isEqualTo(-1);
                    owner[slot] = m;
                }
            }
        }
        assertThat(owner).as("every slot has an owner").doesNotContain(-1);
        return owner;
    }

    @Test
    void everySlotHasExactlyOneOwnerAndEveryMemberSomeOfThem() {
        List<String> members = IntStream.range(0, 8).mapToObj(i -> "listener@" + (1000 + i) + "-abcd").toList();
        int[] owner = owners(members);
        assertThat(IntStream.range(0, members.size()).allMatch(m -> IntStream.of(owner).anyMatch(o -> o == m)))
                .as("64 slots over 8 members: each gets some").isTrue();
    }

    @Test
    void aJoinMovesOnlyTheSlotsTheJoinerWinsAndALeaveOnlyTheLeaversSlots() {
        List<String> members = new ArrayList<>(List.of("a@1-x", "b@2-y", "c@3-z"));
        int[] before = owners(members);
        List<String> joined = new ArrayList<>(members);
        joined.add("d@4-w");
        int[] after = owners(joined);
        for (int slot = 0; slot < SLOTS; slot++) {
            assertThat(after[slot] == before[slot] || after[slot] == 3).as("slot %d moved between old members", slot)
                    .isTrue();
        }
        assertThat(IntStream.of(after).filter(o -> o == 3).count()).as("the joiner's share").isPositive();

        List<String> left = List.of("a@1-x", "c@3-z");
        int[] afterLeave = owners(left);
        for (int slot = 0; slot < SLOTS; slot++) {
            if (before[slot] != 1) {
                assertThat(left.get(afterLeave[slot])).as("slot %d of a staying member", slot)
                        .isEqualTo(members.get(before[slot]));
            }
        }
    }

    @Test
    void theOrderOfTheListDoesNotMatter() {
        List<String> members = List.of("x@1-a", "y@2-b", "z@3-c");
        List<String> reversed = List.of("z@3-c", "y@2-b", "x@1-a");
        for (String me : members) {
            assertThat(SlotShares.shares(members, me, SLOTS)).isEqualTo(SlotShares.shares(reversed, me, SLOTS));
        }
    }
}
