package io.rmq.container.internal;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code Throwable} of any kind on an ORDERLY container's threads (its handler threads, its coordination thread) is
 * caught at the thread's top and logged as an ERROR naming the listener and the topic; the thread goes on (no repair
 * by the watchdog is needed), and no slot is stranded: a slot never stays marked running, its messages are handled
 * again, in order. Before, a checked exception thrown sneakily (as Kotlin does) or an Error ended the thread, and a
 * slot being given up when it happened stayed owned and running for ever.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderlyThreadThrowableTest extends ContainerTestSupport {

    OrderlyThreadThrowableTest(RedisTopology topology) {
        super(topology);
    }

    private static ContainerOptions options(String id) {
        return orderlyOptions(id, Duration.ofSeconds(5), OrderlyThreadThrowableTest::quiet);
    }

    @Test
    void aCheckedExceptionThrownSneakilyOnAHandlerThreadIsCaughtAtItsTopAndTheSlotGoesOnInOrder() {
        AtomicBoolean thrown = new AtomicBoolean();
        engine(new RmqInstrumentation() {
            @Override
            public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
                if (delivery.bodyAsString().contains("m1") && thrown.compareAndSet(false, true)) {
                    throw sneaky(new IOException("instrumentation fails on purpose"));
                }
                return HandleScope.NONE;
            }
        }).defineTopic("steps", TopicType.FIXED_TIME, 1);
        sendDue("steps", "m0", "m1", "m2", "m3", "m4");
        List<String> handled = new CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.rmq().expecting("fails on purpose")) {
            startOrderly("steps", (String body, Delivery d) -> handled.add(body), options("stepper"),
                    engine.slotCoordinator());
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() >= 5);
            assertThat(thrown).isTrue();
            assertThat(handled).as("nothing lost, nothing overtaken").containsExactly("m0", "m1", "m2", "m3", "m4");
            assertThat(container.stallsRepaired()).as("the handler thread went on: nothing to repair").isZero();
            assertThat(log.events()).filteredOn(e -> e.getLevel().toString().equals("ERROR"))
                    .as("one ERROR naming the listener and the topic").hasSize(1).first()
                    .satisfies(e -> assertThat(e.getFormattedMessage()).contains("'stepper'", "'steps'"));
        }
    }

    @Test
    void anErrorOnTheCoordinationThreadIsCaughtAtItsTopAndTheContainerGoesOnOwningAndHandling() {
        engine(RmqInstrumentation.NONE).defineTopic("coord", TopicType.FIXED_TIME, 2);
        AtomicInteger passes = new AtomicInteger();
        // the third pass throws an Error: the slots were claimed in the first
        Scripted coordinator = new Scripted(Map.of(0, 0L, 1, 0L), () -> {
            if (passes.incrementAndGet() == 3) {
                throw new ThreadKilled("coordinator fails on purpose");
            }
        });
        List<String> handled = new CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.rmq().expecting("fails on purpose")) {
            startOrderly("coord", (String body, Delivery d) -> handled.add(body), options("coordinated"), coordinator);
            await().atMost(Duration.ofSeconds(10)).until(() -> passes.get() >= 8);
            sendDue("coord", "a", "b", "c");
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() >= 3);
            assertThat(container.ownedSlots()).containsExactly(0, 1);
            assertThat(container.stallsRepaired()).as("the coordination thread went on: nothing to repair").isZero();
            assertThat(log.events()).filteredOn(e -> e.getLevel().toString().equals("ERROR"))
                    .as("one ERROR naming the listener and the topic").hasSize(1).first()
                    .satisfies(e -> assertThat(e.getFormattedMessage()).contains("'coordinated'", "'coord'"));
        }
    }

    /**
     * A slot being given up (a rebalance) whose last report throws an Error on the handler thread: it used to stay
     * owned and marked running for ever (never released, never handled again, even once assigned back).
     */
    @Test
    void aSlotWhoseGivingUpThrowsAnErrorIsNotStrandedAndIsHandledAgainOnceAssignedBack() throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        engine(new RmqInstrumentation() {
            @Override
            public void operation(String operation, String topic, long nanos, @Nullable Throwable error) {
                if (operation.equals("ack") && armed.compareAndSet(true, false)) {
                    throw new ThreadKilled("instrumentation fails on purpose");
                }
            }
        }).defineTopic("rebalanced", TopicType.FIXED_TIME, 1);
        AtomicReference<Map<Integer, Long>> assigned = new AtomicReference<>(Map.of(0, 0L));
        AtomicInteger passes = new AtomicInteger();
        Scripted coordinator = new Scripted(assigned, passes::incrementAndGet);
        sendDue("rebalanced", "m0", "m1", "m2", "m3", "m4");
        CountDownLatch inM2 = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> handled = new CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.rmq().expecting("fails on purpose", "has died")) {
            startOrderly("rebalanced", (String body, Delivery d) -> {
                handled.add(body);
                if (body.equals("m2") && inM2.getCount() > 0) {
                    inM2.countDown();
                    release.await(30, TimeUnit.SECONDS);
                }
            }, options("rebalancing"), coordinator);
            assertThat(inM2.await(30, TimeUnit.SECONDS)).isTrue();
            // taken away while m2 runs: given up by the handler thread once m2 is done; its report throws
            armed.set(true);
            assigned.set(Map.of());
            int seen = passes.get();
            await().atMost(Duration.ofSeconds(10)).until(() -> passes.get() >= seen + 2);
            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> !armed.get());
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(container.ownedSlots())
                    .as("the slot is given up, not stranded").isEmpty());
            assigned.set(Map.of(0, 0L));
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.containsAll(List.of("m3", "m4")));
            assertThat(handled.subList(0, 3)).containsExactly("m0", "m1", "m2");
            assertThat(handled.subList(3, handled.size())).as("in order after m2, m2's ack may have been lost")
                    .containsSubsequence("m3", "m4");
        }
    }

    /** A coordinator that assigns what it is told and runs {@code onPass} at the start of every pass. */
    private static final class Scripted implements SlotCoordinator {

        private final AtomicReference<Map<Integer, Long>> assigned;
        private final Runnable onPass;

        Scripted(Map<Integer, Long> assigned, Runnable onPass) {
            this(new AtomicReference<>(assigned), onPass);
        }

        Scripted(AtomicReference<Map<Integer, Long>> assigned, Runnable onPass) {
            this.assigned = assigned;
            this.onPass = onPass;
        }

        @Override
        public Membership join(String topic, String instanceId, int slotAmount, Duration ownershipTimeout) {
            return new Membership() {
                @Override
                public Map<Integer, Long> assignedSlots() {
                    onPass.run();
                    return assigned.get();
                }

                @Override
                public void close() {
                }
            };
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable error) throws E {
        throw (E) error;
    }

    /** The deliberate deaths are not reported on stderr; any other is. */
    private static Thread quiet(Runnable work) {
        Thread thread = new Thread(work);
        thread.setUncaughtExceptionHandler((t, e) -> {
            if (!(e instanceof ThreadKilled) && !(e instanceof IOException)) {
                e.printStackTrace();
            }
        });
        return thread;
    }

    /** An Error the test throws on purpose (no stack trace: it is expected). */
    static final class ThreadKilled extends Error {
        ThreadKilled(String message) {
            super(message, null, false, false);
        }
    }
}
