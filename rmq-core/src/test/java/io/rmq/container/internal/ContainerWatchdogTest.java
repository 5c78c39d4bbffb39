package io.rmq.container.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.core.internal.BackgroundTask;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The watchdog both container modes share, driven round by round (no timer): checks run each round, a JVM pause
 * skips a round's checks, a check that throws is logged with the listener's id without stopping the others, and
 * repairs are counted (and reported to the instrumentation).
 */
class ContainerWatchdogTest {

    private final List<String> seen = new CopyOnWriteArrayList<>();
    private final List<String> reported = new CopyOnWriteArrayList<>();
    private final RmqInstrumentation instrumentation = new RmqInstrumentation() {
        @Override
        public void watchdogRepaired(String listenerId, String topic) {
            reported.add(listenerId + "/" + topic);
        }
    };
    private final ContainerWatchdog watchdog = new ContainerWatchdog("dog", "jobs",
            LoggerFactory.getLogger(RmqListenerContainer.class), instrumentation);

    private ContainerWatchdog.Check recording(String name) {
        return new ContainerWatchdog.Check() {
            @Override
            public void check(long now) {
                seen.add(name + "@" + now);
            }

            @Override
            public void jvmPaused(long now) {
                seen.add(name + " paused@" + now);
            }
        };
    }

    @Test
    void eachRoundRunsEveryCheckAndAGapOfOverThreePeriodsIsAJvmPause() {
        watchdog.add(recording("a"));
        watchdog.add(recording("b"));
        watchdog.round(10_000); // the first round after construction: no earlier check, counts as a pause
        watchdog.round(11_000);
        watchdog.round(14_000); // exactly three periods: still a check
        watchdog.round(17_001); // over three: the JVM stood still
        watchdog.round(18_000);
        assertThat(seen).containsExactly("a paused@10000", "b paused@10000", "a@11000", "b@11000", "a@14000",
                "b@14000", "a paused@17001", "b paused@17001", "a@18000", "b@18000");
    }

    @Test
    void aCheckThatThrowsIsLoggedWithTheListenerIdAndTheOthersGoOn() {
        watchdog.add(now -> {
            throw new CheckBroke();
        });
        watchdog.add(recording("after"));
        try (LogCapture log = LogCapture.rmq().expecting("watchdog check failed")) {
            watchdog.round(10_000); // the first round: counts as a pause, checks nothing
            watchdog.round(11_000);
            watchdog.round(12_000);
            assertThat(seen).containsExactly("after paused@10000", "after@11000", "after@12000");
            assertThat(log.messages()).hasSize(2).allMatch(m -> m.contains("'dog'") && m.contains("'jobs'"));
        }
    }

    @Test
    void itsScheduleOutlivesARunThatThrowsAnError() {
        String task = ContainerWatchdog.task("dog");
        watchdog.add(recording("on-schedule"));
        try (LogCapture log = LogCapture.of(BackgroundTask.class.getName()).expecting("'" + task + "'")) {
            BackgroundTask.failNextRun(task, new AssertionError("thrown on purpose by the test"));
            watchdog.start(); // on the timer every engine of the JVM shares, once a second
            await().atMost(Duration.ofSeconds(20)).until(() -> !BackgroundTask.injectionPending(task)
                    && seen.size() >= 2);
            assertThat(log.messages()).containsExactly("RMQ background task '" + task
                    + "' failed; it keeps its schedule and runs again", "RMQ background task '" + task
                    + "' runs again");
        }
        finally {
            watchdog.stop();
            BackgroundTask.clearInjection(task);
        }
    }

    @Test
    void repairsAreCountedAndReported() {
        watchdog.add(now -> watchdog.repaired());
        watchdog.round(10_000); // the first round: counts as a pause, checks nothing
        watchdog.round(11_000);
        watchdog.round(12_000);
        assertThat(watchdog.repairs()).isEqualTo(2);
        assertThat(reported).containsExactly("dog/jobs", "dog/jobs");
    }

    @Test
    void noCheckRunsOnceStopped() throws InterruptedException {
        watchdog.add(recording("a"));
        watchdog.start();
        watchdog.stop();
        Thread.sleep(Duration.ofMillis(1500).toMillis());
        assertThat(seen).isEmpty();
    }

    /** Thrown on purpose (no stack trace: it is expected in the log). */
    static final class CheckBroke extends Error {
        CheckBroke() {
            super("check broke", null, false, false);
        }
    }
}
