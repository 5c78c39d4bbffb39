package io.rmq.consumer.internal;

import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqBatchFailure;
import io.rmq.consumer.RmqConsumer;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.RmqRedisOrderly;
import io.rmq.redis.internal.MembersBeat;
import org.jspecify.annotations.Nullable;

/**
 * What the listener containers need of a topic's consumer, beside what any {@link RmqConsumer} offers: a pop per
 * slot, the slot shares, cluster topology, handling and settling with instrumentation scopes, the ORDERLY steps and
 * ownership claims. The containers talk to this port only; {@link DefaultRmqConsumer} implements it. Thread-safe.
 */
public interface SlotConsumer extends RmqConsumer {

    /** What this consumer and the containers built on it report to ({@link RmqInstrumentation#NONE}: nothing). */
    RmqInstrumentation instrumentation();

    /**
     * How late {@code delivery} is now, for {@link RmqInstrumentation#handleStarted}: Redis's clock (estimated from
     * its pop's reply and the local time since) minus its due time; {@link Long#MIN_VALUE} for PRIORITY topics; 0
     * when the instrumentation is not {@link RmqInstrumentation#timed()} (no clock read).
     */
    long latenessMillis(Delivery delivery);

    /**
     * Leases up to {@code batch} due messages from one slot: a pop of its own, so that a container can hand each
     * slot's deliveries to its handlers as soon as that slot's reply is back (a slot on a dead or frozen node then
     * holds back only itself).
     */
    CompletableFuture<PollResult> pollSlotAsync(int slot, int batch);

    /**
     * Per slot of the topic, whether it holds anything at all (waiting messages, leases, PRIORITY retries): 0 means
     * nothing can fall due there until something is written to it. Cheap (plain {@code EXISTS}, see
     * {@link io.rmq.redis.internal.RmqRedisLeases#occupied}): an idle listener's periodic check of the slots it has no news of.
     * On a standalone server it waits up to {@code foldMillis} for the checks of the engine's other listeners, which
     * one command then answers with it.
     */
    CompletableFuture<long[]> occupiedSlotsAsync(long foldMillis);

    /** As {@link #occupiedSlotsAsync(long)}, for these slots only: the counts in their order. */
    CompletableFuture<long[]> occupiedSlotsAsync(int[] slots, long foldMillis);

    /**
     * Lists a CONCURRENT container among this topic's consumers until {@link #leaveShares}, by the engine's one
     * heartbeat for all its containers ({@link io.rmq.redis.internal.ConsumerRoster}): {@code answer} gets the live
     * member ids after every beat (each container prefers the slots it hashes to among them), or the beat's failure.
     */
    void joinShares(String memberId, long ttlMillis,
            java.util.function.BiConsumer<@Nullable List<String>, @Nullable Throwable> answer);

    /** Takes a container off this topic's consumers (stop, pause): at the engine's next beat, right away. */
    void leaveShares(String memberId);

    /**
     * The cluster node that serves {@code slot} in the client's current view of the topology (its node id), or null
     * on a standalone or Sentinel deployment. A pop sent to a node that no longer serves its slot (a failover) gets
     * no reply until it times out: comparing the node a pop went to with this one tells when to send it again.
     */
    @Nullable String nodeOf(int slot);

    /** Asks the cluster client to look at the topology again now (see {@link io.rmq.redis.internal.RedisNodes#refreshTopology()}). */
    CompletableFuture<Void> refreshTopology();

    /** Resolves the conversion to {@code payloadType} ahead of the first message (see {@link io.rmq.core.BodyCodec#prepare}). */
    void preparePayloadType(Type payloadType);

    /**
     * Converts and handles one delivery on the calling thread, then settles it: ack (batched, asynchronous) on a
     * normal return, nack on an exception (retry or dead), dead queue when the body cannot be converted. Reports to
     * {@code scope} (opened by the caller with {@link RmqInstrumentation#handleStarted} right before):
     * {@link HandleScope#handlerReturned} right after the handler (conversion included), {@link HandleScope#settled}
     * once Redis answered the ack or nack (not when the settlement itself failed). The end of the settlement goes to
     * {@code whenSettled}, not a future: called exactly once, with null once the outcome is written to Redis or
     * with the error that kept it from being written (a {@link CompletionException} once the ack's retries gave up).
     * It runs on the thread that ends the settlement (Lettuce's event loop for an ack, the calling thread for a nack),
     * so it must be short and must not throw. For a listener container, which otherwise adds a future and a dependent
     * stage per message to the event loop's ack path. When this method itself throws, {@code whenSettled} is not
     * called.
     */
    <T> void handle(Delivery delivery, Type payloadType, MessageHandler<T> handler, HandleScope scope,
            Consumer<@Nullable Throwable> whenSettled);

    /**
     * Converts a batch (one slot's deliveries, in taking order) and hands it to {@code handler} on the calling thread,
     * then settles every delivery once (see {@link BatchMessageHandler}): a normal return acks them all in one
     * pipelined call; an {@link RmqBatchFailure} fails the deliveries at its indexes and acks the others; any other
     * exception fails them all. Each failure is decided per delivery, as a single delivery's would be (non-retryable
     * errors, the error handler with that delivery's payload, max retries). A body that cannot be converted goes to
     * the dead queue at once with the reason and is left out of the lists the handler gets (not called when none is
     * left). The future completes when every outcome is written to Redis.
     *
     * @param scopes one per delivery (same order), opened by the caller right before; each gets
     *               {@link HandleScope#handlerReturned} after the handler (in reverse order, so that scopes opened
     *               one inside the other close innermost first) and {@link HandleScope#settled} once Redis answered
     */
    <T> CompletableFuture<Void> handleBatchAsync(List<Delivery> deliveries, Type payloadType,
            BatchMessageHandler<T> handler, List<HandleScope> scopes);

    /**
     * Converts the body to {@code payloadType} and calls the handler on the calling thread; settles nothing. A failure
     * comes with its decision: unreadable bodies go to dead; otherwise the error handler decides (if any), and the
     * standard decision sends non-retryable errors to dead and retries the rest. {@code mayStart} is asked once the
     * body is converted, right before the handler: when it says no, the handler is not called and null is returned
     * (an ORDERLY slot's guard, checked as late as it can be: a thread paused between the check and the handler
     * starts a handler its slot may no longer allow).
     */
    <T> @Nullable Outcome invoke(Delivery delivery, Type payloadType, MessageHandler<T> handler,
            BooleanSupplier mayStart);

    /**
     * Logs what became of a failed delivery and, when it died and the topic has a dead-letter topic, sends it there.
     * Both containers call this once Redis has recorded the failure.
     */
    void afterFailure(Delivery delivery, NackOutcome result, Outcome outcome);

    /**
     * Settles what an ordered slot's owner handled — acks, failures (each the message its lane stopped at), and
     * {@code returned}: taken and not started (behind a failure, or let go) — and, with {@code batch > 0}, hands out
     * the next messages: with {@code resync} every held one first; with {@code serial} (it holds messages of the
     * slot's common lane: stored without a group, ordered with every other message of the slot) none (see
     * orderly_next.lua). Fenced by {@code epoch}.
     */
    CompletableFuture<LaneStep> laneStep(int slot, long epoch, int batch, boolean resync, boolean serial,
            List<Delivery> acked, List<StepFailure> failures, List<Delivery> returned);

    /** This consumer's handle on the topic's cluster-wide rate limit. */
    TopicRateLimiter rateLimiter(io.rmq.core.RateLimit limit);

    /** Gives ownership of an ordered slot up; false when this instance no longer held it. */
    CompletableFuture<Boolean> releaseOwnership(int slot, String instanceId, long epoch);

    /**
     * Claims (or, with the epoch held, renews) ownership of an ordered slot for {@code ownershipMillis};
     * {@code decidedEpoch} is the epoch the slot coordinator decided on (0: none).
     */
    CompletableFuture<RmqRedisOrderly.Claim> claim(int slot, String instanceId, long heldEpoch, long ownershipMillis,
            long decidedEpoch);

    /**
     * Claims an ordered slot leased by the membership: taken over only from a holder missing from {@code live}, the
     * list the claimant's own heartbeat returned (see own.lua).
     */
    CompletableFuture<RmqRedisOrderly.Claim> claimLeased(int slot, String instanceId, long decidedEpoch, MembersBeat live);

    /** The instrumentation's name for what became of a failed delivery. */
    static RmqInstrumentation.Outcome outcomeOf(NackOutcome result) {
        return switch (result) {
            case RETRY -> RmqInstrumentation.Outcome.RETRY;
            case DEAD -> RmqInstrumentation.Outcome.DEAD;
            case DROPPED -> RmqInstrumentation.Outcome.DROPPED;
            case FENCED -> RmqInstrumentation.Outcome.FENCED;
        };
    }

    /**
     * What a handler made of a delivery.
     *
     * @param reason     null on success; else why it failed (kept with the message)
     * @param unreadable the body could not be converted (retrying cannot help: it goes to dead at once)
     * @param error      the exception, when the handler threw
     * @param decision   what becomes of a failure (resolved: never {@link FailureDecision#standard()}); null on success
     */
    record Outcome(@Nullable String reason, boolean unreadable, @Nullable Throwable error,
            @Nullable FailureDecision decision) {

        /** A success. */
        public static final Outcome OK = new Outcome(null, false, null, null);

        public boolean failed() {
            return reason != null;
        }
    }

    /** A failed delivery an ordered step reports, with what its handler decided. */
    record StepFailure(Delivery delivery, @Nullable String reason, @Nullable FailureDecision decision) {
    }

    /**
     * A step of an ordered slot whose lanes (groups) run in parallel.
     *
     * @param fenced         this instance no longer holds the slot; nothing was changed
     * @param nextDue        Redis ms when the slot next has something to hand out, -1 if nothing waits (or batch 0)
     * @param redisNow       Redis's clock when the step ran (ms)
     * @param suspendedLanes how many of the slot's lanes wait for a failed head's retry
     * @param earliestRetry  the soonest of those retries (Redis ms), -1 if none
     * @param failedOutcomes what became of each failure reported, in order (FENCED when fenced)
     * @param deliveries     the messages handed out, each lane's in its handling order
     */
    record LaneStep(boolean fenced, long nextDue, long redisNow, int suspendedLanes, long earliestRetry,
            List<NackOutcome> failedOutcomes, List<Delivery> deliveries) {
    }
}
