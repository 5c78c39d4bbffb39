package io.rmq.observe;

import java.util.Map;

import io.rmq.consumer.Delivery;
import org.jspecify.annotations.Nullable;

/**
 * What the engine reports about its work, for metrics, observations and tracing. Every method has a no-op default,
 * so an implementation overrides only what it records. Implementations are called on hot paths (send, pop, handle,
 * settle) and on Lettuce's event-loop threads: they must be cheap, must not block and must not throw (the engine
 * catches and logs what they throw, but a throwing instrumentation costs a log line per call).
 *
 * <p>The engine holds one instrumentation ({@code RmqOptions#instrumentation}); {@link CompositeInstrumentation#of}
 * combines several (the Spring layer combines every {@code RmqInstrumentation} bean: meters, observations, the user's own).
 */
public interface RmqInstrumentation {

    /** Records nothing. */
    RmqInstrumentation NONE = new RmqInstrumentation() {
        @Override
        public boolean timed() {
            return false;
        }
    };

    /**
     * Whether this instrumentation uses the durations and lateness the engine measures ({@code nanos},
     * {@code latenessMillis}) and its {@link #operation} reports. False lets the engine skip its clock reads on the
     * hot paths: it then passes 0 for durations and lateness (still {@link Long#MIN_VALUE} for PRIORITY topics) and
     * reports no {@link #operation} (that report is a timing), while every other event and every scope is called as
     * with a timed one. The engine asks once, when it builds its producer and consumers; a composite is timed if any
     * of its parts is. Default true.
     */
    default boolean timed() {
        return true;
    }

    // ---------------------------------------------------------------- producing

    /**
     * A send call starts: {@code messages} messages (1 for a single send, the batch's count of this topic for a batch;
     * a batch over several topics reports once per topic). Called on the sending thread before anything is encoded,
     * so an observation opened here sees the sender's current trace context.
     *
     * @return the scope that ends with the send's outcome; never null ({@link SendScope#NONE})
     */
    default SendScope sendStarted(String topic, int messages) {
        return SendScope.NONE;
    }

    /** One send call (single message or one topic's part of a batch), from its start to Redis's answer. */
    interface SendScope {

        SendScope NONE = new SendScope() {
        };

        /**
         * Trace context to store beside every message of this send (propagation on), e.g. {@code traceparent}; empty
         * when nothing is to be propagated (the default: nothing is stored).
         */
        default Map<String, String> context() {
            return Map.of();
        }

        /**
         * The send completed. {@code added} messages were new, {@code merged} merged into a waiting duplicate;
         * {@code error} is null on success. May run on a Lettuce thread.
         */
        default void finished(int added, int merged, @Nullable Throwable error) {
        }
    }

    // ---------------------------------------------------------------- consuming

    /**
     * A listener's pop round of one slot answered: {@code messages} deliveries taken (0 for an empty round),
     * {@code nanos} from request to reply. May run on a Lettuce thread. ORDERLY: a step that takes messages; what it
     * hands out again (taken by the slot's previous step and not started, behind a failure) is not counted again.
     */
    default void popped(String listenerId, String topic, int slot, int messages, long nanos) {
    }

    /** A listener's pop round of one slot failed (timeout, node down, script error); the slot pauses and retries. */
    default void popFailed(String listenerId, String topic, int slot, Throwable error) {
    }

    /**
     * A handler call is about to start, on the thread that runs it. {@code latenessMillis} is the handler's start
     * minus the message's due time for time-typed topics (RANGE_MERGE, FIXED_TIME; may be negative when hosts' clocks
     * differ), or {@link Long#MIN_VALUE} for PRIORITY topics (no due time). {@link Delivery#context()} holds the
     * sender's propagated trace context, if any. A batch listener's call reports each delivery of the batch: this for
     * each one, in the batch's order, right before the call (so scopes opened here nest, and the call runs inside the
     * last one's), then each one's {@link HandleScope#handlerReturned} in reverse order and its own
     * {@link HandleScope#settled}: counts stay counts of messages.
     *
     * @return the scope that ends with the handler and then with the settlement; never null
     */
    default HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
        return HandleScope.NONE;
    }

    /**
     * One delivery in a handler: {@link #handlerReturned} (same thread) then {@link #settled} (any thread); or, for one
     * that went back before its handler was called, {@link #notStarted} then {@link #settled}.
     */
    interface HandleScope {

        HandleScope NONE = new HandleScope() {
        };

        /**
         * The handler returned ({@code error} null) or threw; called on the handler's thread, right after the call,
         * before the settlement is sent to Redis.
         */
        default void handlerReturned(@Nullable Throwable error) {
        }

        /**
         * The handler was not called after all: the delivery went back unstarted, on the handler's thread, instead of
         * {@link #handlerReturned} (an ORDERLY slot's guard lapsed while the body was converted: another instance
         * may hold the slot by now). {@link #settled} follows with {@link Outcome#CANCELLED}. By default it ends the
         * scope as a handler that returned would, so that what {@link RmqInstrumentation#handleStarted} opened is
         * closed; the built-in meters record no handler time for it.
         */
        default void notStarted() {
            handlerReturned(null);
        }

        /**
         * How the delivery ended once Redis answered the settlement (may run on a Lettuce thread); called at most
         * once, and not at all when the settlement itself failed (the lease expires and the message is redelivered).
         */
        default void settled(Outcome outcome) {
        }
    }

    /**
     * Deliveries a listener had fetched but never handed to its handler, given back to the store when it stopped
     * (no attempt counted): they end as {@link Outcome#CANCELLED} without a {@link HandleScope} (no handler ran, so
     * {@link #handleStarted} was not called for them).
     */
    default void handedBack(String listenerId, String topic, int messages) {
    }

    /** How one delivery ended. */
    enum Outcome {
        /** Handled and acknowledged. */
        ACK,
        /** Failed; back in the store for a retry after its backoff. */
        RETRY,
        /** Failed for the last time (or non-retryable, or unreadable): moved to the dead queue. */
        DEAD,
        /** Failed and dropped by the failure policy (not retried, not kept dead). */
        DROPPED,
        /** The settlement was refused: the lease had ended (expired, re-delivered elsewhere; a fenced token). */
        FENCED,
        /** Not handled: the container stopped or the message was cancelled before its handler ran. */
        CANCELLED
    }

    /**
     * One Redis operation of the engine finished: {@code operation} is one of {@code send}, {@code receive} (a pop),
     * {@code ack}, {@code nack}, {@code extend}; {@code error} null on success. May run on a Lettuce thread. One per
     * Redis call: a script call or a pipelined group (single sends or acks to one slot that go out together are one);
     * an ORDERLY step that takes messages is a {@code receive} (its settlements ride along), one that only settles an
     * {@code ack} or a {@code nack}. Not called when the engine's instrumentation is not {@link #timed()}.
     */
    default void operation(String operation, String topic, long nanos, @Nullable Throwable error) {
    }

    /** A listener waited {@code nanos} for its topic's cluster-wide rate limit before taking more. */
    default void rateLimitWaited(String listenerId, String topic, long nanos) {
    }

    /** A listener container's watchdog found it stalled and repaired it (each one is a bug, also logged). */
    default void watchdogRepaired(String listenerId, String topic) {
    }

    /** ORDERLY: this listener took over a slot that another consumer (live or dead) had owned. */
    default void slotTakenOver(String listenerId, String topic, int slot) {
    }

    /**
     * The dead-letter retention ({@code RetryPolicy#deadLetters}) deleted {@code messages} of the oldest dead messages
     * of a slot of {@code topic}, in a script of this engine that moved a message to the dead queue (a failure, a lease
     * expiry, an ORDERLY failure or take-over). May run on a Lettuce thread.
     */
    default void deadTrimmed(String topic, int slot, long messages) {
    }

    /**
     * {@code messages} of a slot of {@code topic} expired before a handler saw them (see
     * {@code OutgoingMessage#expiresAt}), found by a pop or an ORDERLY step of this engine: dropped, or with
     * {@code toDead} moved to the dead queue (the topic keeps expired messages). May run on a Lettuce thread.
     */
    default void expired(String topic, int slot, long messages, boolean toDead) {
    }

    /**
     * {@code messages} sent to {@code topic} by this engine were dropped, nothing written: they had a deduplication
     * window and a message of their identity was handled within its window (see {@code OutgoingMessage#dedupeFor}).
     * May run on a Lettuce thread.
     */
    default void deduplicated(String topic, long messages) {
    }
}
