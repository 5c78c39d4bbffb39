package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.rmq.admin.MessageRef;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.RmqListenerContainer;
import io.rmq.container.internal.ListenerContainers;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static io.rmq.internal.RmqInternals.wakeUps;

/** The opt-in pop look-ahead of CONCURRENT containers on time-ordered topics (ConsumerSettings.lookAhead). */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class LookAheadTest extends EngineTestSupport {

    /** Redis's clock and the local one are the same host's; the container's estimate may be off by a rounding. */
    private static final long CLOCK_TOLERANCE_MILLIS = 5;

    LookAheadTest(RedisTopology topology) {
        super(topology);
    }

    /** One handler call: the message's due time, when the pop took it (Redis clock), when the handler began (local). */
    record Handled(String body, long due, long popped, long started) {
    }

    private RmqListenerContainer container(String topic, ConsumerSettings settings, BlockingQueue<Handled> handled) {
        long lease = settings.lease().toMillis();
        return ListenerContainers.concurrent(rmq.consumer(topic, settings), wakeUps(rmq), String.class,
                (String body, Delivery d) -> handled.add(new Handled(body, (long) d.score(),
                        d.leaseDeadline() - lease, System.currentTimeMillis())),
                new ContainerOptions("c-" + topic, 4, Duration.ofSeconds(30), Duration.ofSeconds(5), null));
    }

    private List<Handled> sendSpreadAndHandle(ConsumerSettings settings, int count) throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        BlockingQueue<Handled> handled = new LinkedBlockingQueue<>();
        RmqListenerContainer container = container("ft", settings, handled);
        container.start();
        try {
            Thread.sleep(300); // the first full poll is done: from now on the container pops by hints and wake-ups
            // the first due time a full look-ahead away, so that every message has its whole window to be popped in,
            // however slowly a loaded machine runs the sends and the wake-up
            Instant start = Instant.now().plusMillis(1500);
            for (int i = 0; i < count; i++) {
                rmq.producer().sendFixedTime("ft", "m" + i, start.plusMillis(100L * i));
            }
            List<Handled> all = new ArrayList<>();
            while (all.size() < count) {
                Handled next = handled.poll(20, TimeUnit.SECONDS);
                assertThat(next).as("handled %s of %s", all.size(), count).isNotNull();
                all.add(next);
            }
            return all;
        }
        finally {
            container.stop();
        }
    }

    @Test
    void withALookAheadMessagesArePoppedBeforeTheirDueTimeAndHandledNotBeforeIt() throws Exception {
        List<Handled> all = sendSpreadAndHandle(FAST.withLookAhead(Duration.ofSeconds(1)), 20);
        for (Handled h : all) {
            assertThat(h.popped()).as("%s popped ahead of its due time", h).isLessThan(h.due());
            assertThat(h.started()).as("%s handled not before its due time", h)
                    .isGreaterThanOrEqualTo(h.due() - CLOCK_TOLERANCE_MILLIS);
        }
    }

    @Test
    void offByDefaultNothingIsPoppedBeforeItsDueTime() throws Exception {
        assertThat(FAST.lookAhead()).isZero();
        List<Handled> all = sendSpreadAndHandle(FAST, 10);
        for (Handled h : all) {
            assertThat(h.popped()).as("%s popped once due", h).isGreaterThanOrEqualTo(h.due() - 1);
            assertThat(h.started()).as("%s handled not before its due time", h)
                    .isGreaterThanOrEqualTo(h.due() - CLOCK_TOLERANCE_MILLIS);
        }
    }

    @Test
    void aDuplicateSentInsideTheWindowIsDeliveredSeparatelyOneSentBeforeItMerges() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        BlockingQueue<Handled> handled = new LinkedBlockingQueue<>();
        RmqListenerContainer container = container("ft", FAST.withLookAhead(Duration.ofSeconds(1)), handled);
        container.start();
        try {
            Thread.sleep(300);
            Instant due = Instant.now().plusMillis(2500);
            assertThat(rmq.producer().sendFixedTime("ft", "early", due).merged()).isFalse();
            assertThat(rmq.producer().sendFixedTime("ft", "early", due).merged())
                    .as("a duplicate sent before the look-ahead window merges, as always").isTrue();
            assertThat(rmq.producer().sendFixedTime("ft", "late", due).merged()).isFalse();
            // the look-ahead takes both about a second before they are due; they are held in flight until then
            await().atMost(Duration.ofSeconds(10)).until(() -> rmq.admin().stats("ft").inFlight() == 2);
            assertThat(handled).isEmpty();
            assertThat(rmq.producer().sendFixedTime("ft", "late", due).merged())
                    .as("a duplicate sent inside the window does not merge into the message in flight").isFalse();
            List<Handled> all = new ArrayList<>();
            while (all.size() < 3) {
                Handled next = handled.poll(20, TimeUnit.SECONDS);
                assertThat(next).as("handled %s of 3", all.size()).isNotNull();
                all.add(next);
            }
            assertThat(all).extracting(Handled::body).containsExactlyInAnyOrder("early", "late", "late");
            for (Handled h : all) {
                assertThat(h.started()).as("%s handled not before its due time", h)
                        .isGreaterThanOrEqualTo(h.due() - CLOCK_TOLERANCE_MILLIS);
            }
            assertThat(handled.poll(500, TimeUnit.MILLISECONDS)).as("nothing more").isNull();
        }
        finally {
            container.stop();
        }
    }

    @Test
    void aBatchListenerGetsABatchPoppedAheadNotBeforeItsLastMessageIsDue() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 1);
        BlockingQueue<Handled> handled = new LinkedBlockingQueue<>();
        long lease = FAST.lease().toMillis();
        io.rmq.container.ListenerContainer container = rmq.batchContainer("ft",
                FAST.withLookAhead(Duration.ofMillis(500)), String.class,
                (List<String> bodies, List<Delivery> deliveries) -> {
                    long started = System.currentTimeMillis();
                    for (Delivery d : deliveries) {
                        handled.add(new Handled(new String(d.body(), java.nio.charset.StandardCharsets.UTF_8),
                                (long) d.score(), d.leaseDeadline() - lease, started));
                    }
                },
                new ContainerOptions("batch-ft", 2, Duration.ofSeconds(30), Duration.ofSeconds(5), null));
        container.start();
        try {
            Thread.sleep(300);
            Instant start = Instant.now().plusMillis(800);
            for (int i = 0; i < 6; i++) {
                rmq.producer().sendFixedTime("ft", "b" + i, start.plusMillis(50L * i));
            }
            List<Handled> all = new ArrayList<>();
            while (all.size() < 6) {
                Handled next = handled.poll(20, TimeUnit.SECONDS);
                assertThat(next).as("handled %s of 6", all.size()).isNotNull();
                all.add(next);
            }
            assertThat(all).anySatisfy(h -> assertThat(h.popped()).as("popped ahead").isLessThan(h.due()));
            for (Handled h : all) {
                assertThat(h.started()).as("%s handled not before its due time", h)
                        .isGreaterThanOrEqualTo(h.due() - CLOCK_TOLERANCE_MILLIS);
            }
        }
        finally {
            container.stop();
        }
    }

    @Test
    void aCancelInsideTheWindowFindsTheMessageInFlightAndTheHandlerStillGetsItAtItsTime() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        BlockingQueue<Handled> handled = new LinkedBlockingQueue<>();
        RmqListenerContainer container = container("ft", FAST.withLookAhead(Duration.ofSeconds(1)), handled);
        container.start();
        try {
            Instant due = Instant.now().plusMillis(3000);
            rmq.producer().sendFixedTime("ft", "order-7", due);
            await().atMost(Duration.ofSeconds(10)).until(() -> rmq.admin().stats("ft").inFlight() == 1);
            var result = rmq.admin().cancel(MessageRef.body("ft", "order-7"));
            assertThat(result.inFlight()).as("popped ahead: in flight").isTrue();
            assertThat(result.cancelled()).as("nothing waiting to remove").isFalse();
            Handled h = handled.poll(20, TimeUnit.SECONDS);
            assertThat(h).as("the delivery under way goes on").isNotNull();
            assertThat(h.started()).isGreaterThanOrEqualTo(h.due() - CLOCK_TOLERANCE_MILLIS);
            await().atMost(Duration.ofSeconds(10)).until(() -> rmq.admin().stats("ft").pending() == 0);
        }
        finally {
            container.stop();
        }
    }

    @Test
    void stopEndsAHoldAndGivesTheMessageBack() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        BlockingQueue<Handled> handled = new LinkedBlockingQueue<>();
        RmqListenerContainer container = container("ft", FAST.withLookAhead(Duration.ofSeconds(1)), handled);
        container.start();
        Instant due = Instant.now().plusMillis(4000);
        rmq.producer().sendFixedTime("ft", "held", due);
        await().atMost(Duration.ofSeconds(10)).until(() -> rmq.admin().stats("ft").inFlight() == 1);
        container.stop();
        assertThat(Instant.now()).as("stop ended the hold, it did not wait for the due time").isBefore(due);
        assertThat(handled).as("never handled before its due time").isEmpty();
        assertThat(rmq.admin().stats("ft").waiting()).as("given back to the store").isEqualTo(1);
        assertThat(rmq.admin().stats("ft").inFlight()).isZero();

        RmqListenerContainer again = container("ft", FAST.withLookAhead(Duration.ofSeconds(1)), handled);
        again.start();
        try {
            Handled h = handled.poll(20, TimeUnit.SECONDS);
            assertThat(h).isNotNull();
            assertThat(h.body()).isEqualTo("held");
            assertThat(h.started()).isGreaterThanOrEqualTo(h.due() - CLOCK_TOLERANCE_MILLIS);
        }
        finally {
            again.stop();
        }
    }

    @Test
    void aLookAheadOutsideItsRangeIsRefusedNamingFieldValueAndRule() {
        assertThatThrownBy(() -> FAST.withLookAhead(Duration.ofMillis(-1)))
                .isInstanceOfSatisfying(RmqInvalidArgumentException.class, ex -> {
                    assertThat(ex.getField()).isEqualTo("lookAhead");
                    assertThat(ex.getValue()).isEqualTo(Duration.ofMillis(-1));
                })
                .hasMessageContaining("lookAhead").hasMessageContaining("zero or positive");
        assertThatThrownBy(() -> FAST.withLookAhead(Duration.ofMillis(1001)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("lookAhead").hasMessageContaining("PT1.001S").hasMessageContaining("at most 1 s");
        assertThatThrownBy(() -> FAST.withLease(Duration.ofMillis(600)).withLookAhead(Duration.ofMillis(300)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("a third of the lease");
        assertThatThrownBy(() -> FAST.withLookAhead(Duration.ofMillis(300)).withLease(Duration.ofMillis(600)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("lookAhead");
        assertThat(FAST.withLookAhead(Duration.ofSeconds(1)).lookAhead()).isEqualTo(Duration.ofSeconds(1));
    }
}
