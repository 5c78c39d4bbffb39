package io.rmq.observe;

import java.util.ArrayList;
import java.util.List;

import io.rmq.observe.RmqInstrumentation.HandleScope;
import io.rmq.observe.internal.HistoryCounter;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whether a composite asks the engine to measure (if any of its parts uses what the engine measures), and how it hands
 * a delivery that went back unstarted to its parts.
 */
class CompositeInstrumentationTest {

    private static final RmqInstrumentation TIMED = new RmqInstrumentation() {
    };

    private static final RmqInstrumentation UNTIMED = new RmqInstrumentation() {
        @Override
        public boolean timed() {
            return false;
        }
    };

    @Test
    void aCompositeIsTimedIfAnyPartIsTimed() {
        assertThat(CompositeInstrumentation.of(List.of(UNTIMED, TIMED)).timed()).isTrue();
        assertThat(CompositeInstrumentation.of(List.of(TIMED, UNTIMED)).timed()).isTrue();
        assertThat(CompositeInstrumentation.of(List.of(new HistoryCounter(), TIMED)).timed()).isTrue();
    }

    @Test
    void aCompositeOfUntimedPartsIsNotTimed() {
        assertThat(CompositeInstrumentation.of(List.of(UNTIMED, new HistoryCounter())).timed()).isFalse();
        assertThat(CompositeInstrumentation.guarded(UNTIMED).timed()).as("a guarded part keeps its answer").isFalse();
        assertThat(CompositeInstrumentation.guarded(TIMED).timed()).isTrue();
    }

    @Test
    void theHistoryCounterAndNoneAreNotTimedWhileTheDefaultIs() {
        assertThat(new HistoryCounter().timed()).isFalse();
        assertThat(RmqInstrumentation.NONE.timed()).isFalse();
        assertThat(TIMED.timed()).as("an instrumentation that says nothing is measured for").isTrue();
    }

    @Test
    void aDeliveryThatWentBackUnstartedEndsEachPartsScopeInReverseOrderAndABrokenPartHarmsNoOther() {
        List<String> calls = new ArrayList<>();
        RmqInstrumentation plain = recording("plain", calls, false); // ends by the default: as if its handler returned
        RmqInstrumentation own = recording("own", calls, true);
        RmqInstrumentation broken = new RmqInstrumentation() {
            @Override
            public HandleScope handleStarted(String listenerId, io.rmq.consumer.Delivery delivery, long lateness) {
                return new HandleScope() {
                    @Override
                    public void notStarted() {
                        throw new IllegalStateException("broken notStarted");
                    }
                };
            }
        };
        try (LogCapture log = LogCapture.rmq().expecting("broken notStarted")) {
            HandleScope scope = CompositeInstrumentation.of(List.of(plain, broken, own)).handleStarted("l", null, 0);
            scope.notStarted();
            scope.settled(RmqInstrumentation.Outcome.CANCELLED);

            assertThat(calls).containsExactly("own notStarted", "plain handlerReturned null", "plain settled CANCELLED",
                    "own settled CANCELLED");
            assertThat(log.messages()).as("the broken part's failure, logged").hasSize(1);
        }
    }

    private static RmqInstrumentation recording(String name, List<String> calls, boolean ownNotStarted) {
        return new RmqInstrumentation() {
            @Override
            public HandleScope handleStarted(String listenerId, io.rmq.consumer.Delivery delivery, long lateness) {
                return new HandleScope() {
                    @Override
                    public void handlerReturned(Throwable error) {
                        calls.add(name + " handlerReturned " + error);
                    }

                    @Override
                    public void notStarted() {
                        if (ownNotStarted) {
                            calls.add(name + " notStarted");
                        }
                        else {
                            HandleScope.super.notStarted();
                        }
                    }

                    @Override
                    public void settled(Outcome outcome) {
                        calls.add(name + " settled " + outcome);
                    }
                };
            }
        };
    }
}
