package io.rmq.faults;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link GroupOrder}'s rules on made-up records (2 groups: even and odd message numbers): it cannot pass vacuously. */
class GroupOrderTest {

    private static FaultRun.Interval handled(String consumer, long start, long end, int index) {
        return new FaultRun.Interval(consumer, 0, start, end, index);
    }

    private static GroupOrder order(FaultRun.Interval... handlings) {
        return new GroupOrder(Map.of(0, List.of(handlings)), 2);
    }

    @Test
    void groupsOfOneSlotMayRunAtOnceButEachInOrderOneAtATime() {
        GroupOrder order = order(handled("a", 0, 10, 0), handled("a", 2, 12, 1), handled("a", 10, 20, 2),
                handled("a", 12, 22, 3));
        assertThat(order.violations(Set.of())).isEmpty();
        assertThat(order.mostAtOnceInASlot()).isEqualTo(2);
        assertThat(order.repeats()).isZero();
    }

    @Test
    void anOverlapOrABackwardStepWithinAGroupIsAViolation() {
        assertThat(order(handled("a", 0, 10, 0), handled("b", 5, 15, 2)).violations(Set.of()))
                .singleElement().asString().contains("group 0", "overlaps");
        assertThat(order(handled("a", 0, 10, 2), handled("a", 10, 20, 0)).violations(Set.of()))
                .singleElement().asString().contains("m-0 first handled after m-2");
    }

    @Test
    void aRepeatIsAllowedOnlyOfAHandlingByAKilledConsumer() {
        GroupOrder order = order(handled("a", 0, 10, 0), handled("a", 10, 20, 2), handled("b", 30, 40, 0),
                handled("b", 40, 50, 2), handled("b", 50, 60, 4));
        assertThat(order.violations(Set.of("a"))).isEmpty();
        assertThat(order.violations(Set.of())).hasSize(2).allSatisfy(v -> assertThat(v).contains("handled again"));
        assertThat(order.repeats()).isEqualTo(2);
    }
}
