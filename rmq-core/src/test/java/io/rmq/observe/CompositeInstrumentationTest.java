package io.rmq.observe;

import java.util.List;

import io.rmq.observe.internal.HistoryCounter;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Whether a composite asks the engine to measure: if any of its parts uses what the engine measures. */
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
}
