package io.rmq.container.internal;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The ORDERLY container's scheduling state (the owned slots, the lane scheduler, the pause gate, ownership changes) on its own, without Redis (the containers' tests cover it with Redis). */
class OrderlySlotsTest {

    private final OrderlySlots slots = new OrderlySlots("orderly-slots-test", "t");
    private final OrderlyPauseGate gate = new OrderlyPauseGate(slots);
    private final LaneScheduler scheduler = new LaneScheduler(slots, gate);
    private final OwnershipChanges changes = new OwnershipChanges(slots);

    @AfterEach
    void stop() {
        slots.markStopping();
        slots.signalChange();
    }

    @Test
    void aSlotIsHandedToOneThreadAtATimeAndAgainOnceItsRunFinished() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        OrderlySlot first = takeStep();
        assertThat(first.slot).isEqualTo(1);

        CompletableFuture<OrderlySlot> second = CompletableFuture.supplyAsync(this::takeStep);
        Thread.sleep(200);
        assertThat(second).isNotDone();

        assertThat(scheduler.finishStep(first, System.currentTimeMillis())).isFalse();
        assertThat(second.get(5, TimeUnit.SECONDS)).isSameAs(first);
    }

    @Test
    void theSlotDueFirstIsHandedOutFirst() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        changes.add(2, 1, Long.MAX_VALUE);
        OrderlySlot one = takeStep();
        OrderlySlot two = takeStep();
        long now = System.currentTimeMillis();
        scheduler.finishStep(one, now);
        scheduler.finishStep(two, now - 1000);
        assertThat(takeStep()).isSameAs(two);
    }

    @Test
    void anAnnouncementWhileTheSlotRunsMakesItDueNoLaterThanAnnounced() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        OrderlySlot s = takeStep();
        long announced = System.currentTimeMillis() - 1;
        scheduler.wake(1, announced);
        scheduler.finishStep(s, Long.MAX_VALUE);
        assertThat(s.dueAt).isEqualTo(announced);
        assertThat(takeStep()).isSameAs(s);
    }

    @Test
    void whilePausedNoStepTakesAndPauseWaitsForTheTakesUnderWay() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        assertThat(gate.beginTake()).isTrue();
        assertThat(gate.pause()).isTrue();
        assertThat(gate.pause()).isFalse();
        assertThat(gate.beginTake()).isFalse();

        CompletableFuture<Void> paused = CompletableFuture.runAsync(
                () -> gate.awaitTakesUnderWay(System.currentTimeMillis() + 30_000));
        Thread.sleep(200);
        assertThat(paused).isNotDone();
        gate.endTake();
        paused.get(5, TimeUnit.SECONDS);

        // a due slot with nothing to report is not handed out while paused
        CompletableFuture<OrderlySlot> taken = CompletableFuture.supplyAsync(this::takeStep);
        Thread.sleep(200);
        assertThat(taken).isNotDone();
        assertThat(gate.resume()).isTrue();
        assertThat(taken.get(5, TimeUnit.SECONDS).slot).isEqualTo(1);
        assertThat(gate.beginTake()).isTrue();
        gate.endTake();
    }

    @Test
    void aSlotNoLongerAssignedIsGivenUpByTheThreadThatFinishesItsRun() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        OrderlySlot s = takeStep();

        List<OrderlySlot> releasing = changes.renewed(changes.held(), Set.of(), slot -> true);
        assertThat(releasing).containsExactly(s);
        assertThat(changes.takeForRelease(s)).as("running: its thread gives it up").isFalse();

        assertThat(scheduler.finishStep(s, System.currentTimeMillis())).isTrue();
        assertThat(s.stepping).as("still marked stepping while it is given up").isTrue();
        changes.remove(s);
        assertThat(slots.ownedSlots()).isEmpty();
    }

    @Test
    void aSlotWhoseGuardARenewalRestoredIsDueAgain() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        OrderlySlot s = takeStep();
        s.guardLapsed = true;
        scheduler.finishStep(s, Long.MAX_VALUE);

        assertThat(changes.renewed(changes.held(), Set.of(1), slot -> false)).isEmpty();
        assertThat(s.guardLapsed).isTrue();
        changes.renewed(changes.held(), Set.of(1), slot -> true);
        assertThat(s.guardLapsed).isFalse();
        assertThat(takeStep()).isSameAs(s);
    }

    @Test
    void aSlotIsForgottenOnlyUnderTheEpochItWasLostWith() {
        changes.add(1, 1, Long.MAX_VALUE);
        OrderlySlot s = changes.held().get(0);
        s.epoch = 2; // claimed anew by a renewal after the fenced step was sent
        changes.lost(s, 1, "fenced");
        assertThat(slots.ownedSlots()).containsExactly(1);
        changes.lost(s, 2, "fenced");
        assertThat(slots.ownedSlots()).isEmpty();
    }

    /** Lost while a thread runs it (e.g. dropped from the membership) and claimed again: one run at a time still. */
    @Test
    void aSlotClaimedAgainWhileItsLostRunGoesOnIsHandedOutOnlyOnceThatRunEnded() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        changes.add(2, 1, Long.MAX_VALUE);
        OrderlySlot lost = takeStep();
        assertThat(lost.slot).isEqualTo(1);
        changes.lost(lost, 1, "this instance dropped out of the membership");
        changes.add(1, 2, Long.MAX_VALUE);
        OrderlySlot again = changes.held().get(0);
        assertThat(takeStep().slot).isEqualTo(2);
        assertThat(changes.takeForRelease(again)).as("nor given up meanwhile").isFalse();
        assertThat(changes.notRunning()).as("nor given up at stop").isEmpty();
        java.util.concurrent.CompletableFuture<OrderlySlot> next = java.util.concurrent.CompletableFuture
                .supplyAsync(this::takeStep);
        Thread.sleep(200);
        assertThat(next).as("slot 1 waits for its lost run").isNotDone();
        assertThat(scheduler.finishStep(lost, System.currentTimeMillis())).isFalse();
        assertThat(next.get(5, java.util.concurrent.TimeUnit.SECONDS)).isSameAs(again);
    }

    /** Lost while being given up (a fenced report): the give-up's end frees the number. */
    @Test
    void aSlotLostWhileGivenUpBlocksItsNumberNoLonger() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        OrderlySlot s = changes.held().get(0);
        assertThat(changes.takeForRelease(s)).isTrue();
        changes.lost(s, 1, "fenced");
        changes.remove(s);
        changes.add(1, 2, Long.MAX_VALUE);
        assertThat(takeStep()).isSameAs(changes.held().get(0));
    }

    @Test
    void noSlotIsHandedOutOnceStopping() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        slots.markStopping();
        slots.signalChange();
        assertThat(takeStep()).isNull();
    }

    /** A handler thread that outlived stop() still has its slot marked running: the next start owns none of them. */
    @Test
    void aStartForgetsTheSlotsThePreviousRunLeftBehind() throws Exception {
        changes.add(1, 1, Long.MAX_VALUE);
        changes.add(2, 1, Long.MAX_VALUE);
        OrderlySlot abandoned = takeStep();
        slots.markStopping();
        slots.signalChange();
        slots.starting();
        assertThat(slots.ownedSlots()).as("owned after a new start").isEmpty();
        assertThat(scheduler.finishStep(abandoned, System.currentTimeMillis())).as("given up by the abandoned thread")
                .isFalse();
        assertThat(slots.ownedSlots()).isEmpty();
    }

    /** The slot of the next work a handler thread gets (here: always a step, no lanes hold anything). */
    private OrderlySlot takeStep() {
        try {
            LaneScheduler.Work work = scheduler.takeWork(slots.generation(), 64, slot -> true);
            return work == null ? null : work.slot();
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
