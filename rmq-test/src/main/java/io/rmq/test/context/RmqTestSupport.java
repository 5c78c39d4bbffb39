package io.rmq.test.context;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import io.rmq.Rmq;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.TopicStats;
import io.rmq.observe.RmqInstrumentation.Outcome;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * What a test of an RMQ application awaits and reads; a bean of every {@link RmqTest} context ({@code @Autowired}).
 * <p>
 * Bodies are compared as RMQ stores them: {@code body} is encoded with the application's codec (the same JSON a send
 * writes), so {@code awaitHandled("orders", new OrderPlaced(42))} matches the delivery of that record.
 */
public final class RmqTestSupport {

    /** How long the awaits without a timeout wait: generous, for loaded build machines. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    private static final Duration POLL = Duration.ofMillis(50);
    private static final int DEAD_PAGE = 1000;

    private final Rmq rmq;
    private final HandledRecorder recorder;

    RmqTestSupport(Rmq rmq, HandledRecorder recorder) {
        this.rmq = rmq;
        this.recorder = recorder;
    }

    /**
     * One delivery as it ended in a listener of this context.
     *
     * @param listenerId the listener's id
     * @param topic      topic name
     * @param body       the body as stored (RMQ's JSON)
     * @param attempt    its attempt (1 for the first delivery)
     * @param outcome    {@link Outcome#ACK} when handled, else how it failed
     */
    public record Handled(String listenerId, String topic, byte[] body, int attempt, Outcome outcome) {

        /** The stored body as text. */
        public String bodyAsString() {
            return new String(body, java.nio.charset.StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "Handled[listener=" + listenerId + ", topic=" + topic + ", body=" + bodyAsString() + ", attempt="
                    + attempt + ", outcome=" + outcome + "]";
        }
    }

    /** {@link #awaitDrained(String, Duration)} with {@link #DEFAULT_TIMEOUT}. */
    public TopicStats awaitDrained(String topic) {
        return awaitDrained(topic, DEFAULT_TIMEOUT);
    }

    /**
     * Waits until nothing of {@code topic} is waiting, in flight or backing off for a retry ({@link TopicStats#pending()}
     * is 0; dead messages do not count), and returns the figures then.
     *
     * @throws AssertionError naming the last figures when the topic is not drained within {@code timeout}
     */
    public TopicStats awaitDrained(String topic, Duration timeout) {
        AtomicReference<TopicStats> last = new AtomicReference<>();
        try {
            return Awaitility.await("topic " + topic + " drained").atMost(timeout).pollInterval(POLL)
                    .until(() -> {
                        last.set(rmq.admin().stats(topic));
                        return last.get();
                    }, stats -> stats.pending() == 0);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("topic " + topic + " was not drained within " + timeout + ": " + last.get(), e);
        }
    }

    /** {@link #awaitHandled(String, Object, Duration)} with {@link #DEFAULT_TIMEOUT}. */
    public Handled awaitHandled(String topic, Object body) {
        return awaitHandled(topic, body, DEFAULT_TIMEOUT);
    }

    /**
     * Waits until a listener of this context has handled {@code body} of {@code topic} (its handler returned and the
     * ack reached Redis), and returns that delivery. A delivery handled earlier in the context's life counts too: use
     * bodies of the test's own, or {@link #clearHandled()}.
     *
     * @throws AssertionError listing the topic's outcomes seen so far when it is not handled within {@code timeout}
     */
    public Handled awaitHandled(String topic, Object body, Duration timeout) {
        return awaitOutcome(topic, body, Outcome.ACK, timeout);
    }

    /**
     * Waits until a delivery of {@code body} of {@code topic} ended with {@code outcome} (e.g. {@link Outcome#RETRY}
     * after a failure, {@link Outcome#DEAD}), and returns it.
     */
    public Handled awaitOutcome(String topic, Object body, Outcome outcome, Duration timeout) {
        byte[] encoded = rmq.options().codec().encode(body);
        Predicate<Handled> wanted = h -> h.topic().equals(topic) && h.outcome() == outcome
                && Arrays.equals(h.body(), encoded);
        try {
            return Awaitility.await("body handled on " + topic).atMost(timeout).pollInterval(POLL)
                    .until(() -> recorder.snapshot().stream().filter(wanted).findFirst().orElse(null),
                            java.util.Objects::nonNull);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no delivery of " + new String(encoded, java.nio.charset.StandardCharsets.UTF_8)
                    + " on topic " + topic + " ended " + outcome + " within " + timeout + "; outcomes on the topic: "
                    + handled(topic), e);
        }
    }

    /** Every recorded delivery outcome of {@code topic}, oldest first (the latest {@value HandledRecorder#CAPACITY} of all topics are kept). */
    public List<Handled> handled(String topic) {
        List<Handled> out = new ArrayList<>();
        for (Handled h : recorder.snapshot()) {
            if (h.topic().equals(topic)) {
                out.add(h);
            }
        }
        return out;
    }

    /** Forgets the recorded outcomes. */
    public void clearHandled() {
        recorder.clear();
    }

    /** The dead messages of {@code topic} (the first thousand), slot by slot, oldest death first in a slot. */
    public List<DeadMessage> deadMessages(String topic) {
        return rmq.admin().deadMessages(topic, 0, DEAD_PAGE);
    }

    /** {@link #awaitDead(String, Object, Duration)} with {@link #DEFAULT_TIMEOUT}. */
    public DeadMessage awaitDead(String topic, Object body) {
        return awaitDead(topic, body, DEFAULT_TIMEOUT);
    }

    /** Waits until {@code body} is in the dead queue of {@code topic} and returns it (with its last error). */
    public DeadMessage awaitDead(String topic, Object body, Duration timeout) {
        byte[] encoded = rmq.options().codec().encode(body);
        try {
            return Awaitility.await("body dead on " + topic).atMost(timeout).pollInterval(POLL)
                    .until(() -> deadMessages(topic).stream().filter(d -> Arrays.equals(d.body(), encoded))
                            .findFirst().orElse(null), java.util.Objects::nonNull);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no dead message " + new String(encoded, java.nio.charset.StandardCharsets.UTF_8)
                    + " on topic " + topic + " within " + timeout + "; dead there: " + deadMessages(topic), e);
        }
    }

    /** Deletes the waiting and dead messages of {@code topic} (deliveries in flight end as they will); returns how many. */
    public long purge(String topic) {
        return rmq.admin().purge(topic) + rmq.admin().purgeDead(topic);
    }

    /** The RMQ engine of this context (admin operations: {@code rmq().admin()}). */
    public Rmq rmq() {
        return rmq;
    }
}
