package io.rmq.consumer;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

import io.rmq.core.BodyCodec;
import io.rmq.core.DeadLetterRetention;
import io.rmq.core.RetryPolicy;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RedisNodes;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.RmqRedisLeases;
import io.rmq.redis.internal.RmqRedisLeases.PopResult;
import io.rmq.redis.internal.RmqRedisLeases.Popped;
import io.rmq.redis.internal.RmqRedisOrderly;
import org.jspecify.annotations.Nullable;

/**
 * Two-phase consumption of one topic: {@link #poll()} leases due messages; each then ends in {@link #ack},
 * {@link #nack} (retry after backoff, or dead past max retries) or lease expiry (found by {@link #sweep()}).
 * Calls for many slots are pipelined. Thread-safe; no threads of its own (containers drive it).
 * <p>
 * Popping (and the ORDERLY mode's steps) is done here; converting and calling handlers is {@link DeliveryHandler}'s
 * job, writing outcomes (ack, fail, release, extend) {@link Settlement}'s.
 */
public final class RmqConsumer {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqConsumer.class);

    private final RmqRedis redis;
    /** The engine's {@link RmqRedis#leases()} and {@link RmqRedis#orderly()}, kept: called on every pop and step. */
    private final RmqRedisLeases leases;
    private final RmqRedisOrderly orderly;
    /** The gateway's {@link RedisGateway#nodes()}, kept: asked which node serves a slot on every pop. */
    private final RedisNodes nodes;
    private final TopicDefinition topic;
    private final ConsumerSettings settings;
    private final SlotKeys[] slots;
    /** The settings' retry policy with the dead-letter count bound as one slot's share: what the scripts apply. */
    private final RetryPolicy slotRetry;
    private final int[] allSlots;
    private final boolean priority;
    /** How much of a body log lines show (0: none; bodies may hold personal data). */
    private final int logBodyChars;
    /** Whether pops ask for the trace contexts stored beside the messages (propagation on). */
    private final boolean readContexts;
    private final RmqInstrumentation instrumentation;
    /** False for an instrumentation that is not {@link RmqInstrumentation#timed()} (NONE): no lateness clock reads. */
    private final boolean timed;
    private final DeliveryHandler handling;
    private final Settlement settlement;

    /**
     * What a consumer is built with besides its topic and settings.
     *
     * @param codec           converts bodies to the handlers' payload types
     * @param deadLetters     forwards dead messages when {@code settings.failures().deadLetterTopic()} is set (null:
     *                        they stay in the dead queue)
     * @param logBodyChars    how many characters of a body log lines show (0: none; negative counts as 0)
     * @param instrumentation what this consumer and the containers built on it report to
     *                        ({@link RmqInstrumentation#NONE}, or null: nothing)
     * @param readContexts    whether deliveries carry the trace context stored beside their message
     *                        ({@link Delivery#context()}; {@code RmqOptions#propagateContext}); pops pay nothing for
     *                        it when false
     */
    public record Parts(BodyCodec codec, @Nullable DeadLetterForwarder deadLetters, int logBodyChars,
            @Nullable RmqInstrumentation instrumentation, boolean readContexts) {

        public Parts {
            Objects.requireNonNull(codec, "codec must not be null");
            logBodyChars = Math.max(0, logBodyChars);
            instrumentation = instrumentation == null ? RmqInstrumentation.NONE : instrumentation;
        }
    }

    static {
        io.rmq.consumer.internal.ConsumerFactory.SEAM.register(RmqConsumer::new);
        io.rmq.consumer.internal.SlotClaims.SEAM.register(RmqConsumer::claim);
    }

    /**
     * Takes engine internals, so the {@link io.rmq.Rmq} facade makes it through
     * {@link io.rmq.consumer.internal.ConsumerFactory}.
     */
    RmqConsumer(RmqRedis redis, TopicDefinition topic, ConsumerSettings settings, Parts parts) {
        this.readContexts = parts.readContexts();
        this.instrumentation = parts.instrumentation();
        this.timed = this.instrumentation.timed(); // NONE is not timed
        this.logBodyChars = parts.logBodyChars();
        this.redis = redis;
        this.leases = redis.leases();
        this.orderly = redis.orderly();
        this.nodes = redis.gateway().nodes();
        this.topic = topic;
        this.settings = settings;
        this.slots = redis.keys().slots(topic);
        this.slotRetry = perSlot(settings.retry(), slots.length);
        this.allSlots = new int[slots.length];
        for (int i = 0; i < allSlots.length; i++) {
            allSlots[i] = i;
        }
        this.priority = topic.type() == TopicType.PRIORITY;
        this.handling = new DeliveryHandler(topic.name(), settings, parts.codec(), logBodyChars);
        this.settlement = new Settlement(leases, topic, settings, parts.deadLetters(), instrumentation);
    }

    /** What this consumer and the containers built on it report to ({@link RmqInstrumentation#NONE}: nothing). */
    public RmqInstrumentation instrumentation() {
        return instrumentation;
    }

    /**
     * How late {@code delivery} is now, for {@link RmqInstrumentation#handleStarted}: Redis's clock (estimated from
     * its pop's reply and the local time since) minus its due time; {@link Long#MIN_VALUE} for PRIORITY topics; 0
     * when the instrumentation is not {@link RmqInstrumentation#timed()} (no clock read).
     */
    public long latenessMillis(Delivery delivery) {
        if (priority) {
            return Long.MIN_VALUE;
        }
        return timed ? delivery.redisNowEstimate() - (long) delivery.score() : 0;
    }

    /** The slot numbers of the topic, 0 to slotAmount - 1. */
    public int[] allSlots() {
        return allSlots.clone();
    }

    public TopicDefinition topic() {
        return topic;
    }

    public ConsumerSettings settings() {
        return settings;
    }

    // ---------------------------------------------------------------- pop

    /** Leases up to {@code batchSize} due messages from every slot of the topic. */
    public PollResult poll() {
        return RedisGateway.await(pollAsync(allSlots, settings.batchSize()), "polling topic '" + topic.name() + "'");
    }

    /** How long after a failed pop its slot is due again (in a poll result; see {@link #pollAsync}). */
    static final long FAILED_SLOT_PAUSE_MILLIS = 1000;

    /**
     * Leases up to {@code batchPerSlot} due messages from each of the given slots, one pipelined script call per
     * slot.
     */
    public CompletableFuture<PollResult> pollAsync(int[] slotNumbers, int batchPerSlot) {
        List<CompletableFuture<PopResult>> pops = new ArrayList<>(slotNumbers.length);
        long leaseMillis = settings.lease().toMillis();
        for (int slot : slotNumbers) {
            pops.add(leases.pop(slots[slot], priority, batchPerSlot, leaseMillis, slotRetry, readContexts));
        }
        // handle, not thenApply: one failed slot must not hide what the other slots already leased
        return CompletableFuture.allOf(pops.toArray(CompletableFuture[]::new)).handle((v, error) -> {
            List<Delivery> deliveries = new ArrayList<>();
            long nextDue = -1;
            long now = Long.MAX_VALUE;
            long[] slotNextDue = new long[pops.size()];
            RuntimeException firstFailure = null;
            int failed = 0;
            for (int i = 0; i < pops.size(); i++) {
                PopResult result;
                try {
                    result = pops.get(i).join();
                }
                catch (RuntimeException ex) {
                    firstFailure = firstFailure == null ? ex : firstFailure;
                    failed++;
                    slotNextDue[i] = -2; // set below, once Redis's now is known
                    continue;
                }
                slotNextDue[i] = result.nextDue();
                now = Math.min(now, result.redisNow());
                if (result.nextDue() >= 0 && (nextDue < 0 || result.nextDue() < nextDue)) {
                    nextDue = result.nextDue();
                }
                deliveries.addAll(deliveriesOf(result));
            }
            if (failed == pops.size() && firstFailure != null) {
                throw firstFailure;
            }
            for (int i = 0; i < slotNextDue.length; i++) {
                if (slotNextDue[i] == -2) {
                    // a failed slot is polled again after a pause, not at once: RMQ's client fails a pop for a node
                    // that is down in a moment, which would otherwise be sent again in every round until a failover
                    slotNextDue[i] = now == Long.MAX_VALUE ? 0 : now + FAILED_SLOT_PAUSE_MILLIS;
                }
            }
            if (firstFailure != null) {
                log.warn("Polling {} of {} slots of topic '{}' failed; the rest was delivered", failed, pops.size(),
                        topic.name(), firstFailure);
            }
            if (priority) {
                deliveries.sort(Comparator.comparingDouble(Delivery::score).reversed());
            }
            else {
                deliveries.sort(Comparator.comparingDouble(Delivery::score));
            }
            return new PollResult(deliveries, now == Long.MAX_VALUE ? -1 : now, nextDue, slotNumbers.clone(),
                    slotNextDue);
        });
    }

    /**
     * Leases up to {@code batch} due messages from one slot: a pop of its own, so that a container can hand each
     * slot's deliveries to its handlers as soon as that slot's reply is back (a slot on a dead or frozen node then
     * holds back only itself).
     */
    public CompletableFuture<PollResult> pollSlotAsync(int slot, int batch) {
        long leaseMillis = settings.lease().toMillis();
        return leases.pop(slots[slot], priority, batch, leaseMillis, slotRetry, readContexts,
                settings.lookAhead().toMillis()).thenApply(result ->
                new PollResult(deliveriesOf(result), result.redisNow(), result.nextDue(), new int[] {slot},
                        new long[] {result.nextDue()}));
    }

    /**
     * Per slot of the topic, whether it holds anything at all (waiting messages, leases, PRIORITY retries): 0 means
     * nothing can fall due there until something is written to it. Cheap (plain {@code EXISTS}, see
     * {@link RmqRedisLeases#occupied}): an idle listener's periodic check of the slots it has no news of.
     */
    public CompletableFuture<long[]> occupiedSlotsAsync() {
        return leases.occupied(slots, priority);
    }

    /**
     * Heartbeat ({@code leave} false) or departure of a CONCURRENT container among this topic's consumers: one script,
     * which returns the live instance ids (each container prefers the slots it hashes to among them).
     */
    public CompletableFuture<List<String>> sharesAsync(String instanceId, long ttlMillis, boolean leave) {
        return redis.shares(topic.name(), instanceId, ttlMillis, leave);
    }

    /** The leased deliveries of one pop, each fenced by the pop's token. */
    private List<Delivery> deliveriesOf(PopResult result) {
        List<Delivery> deliveries = new ArrayList<>(result.messages().size());
        // for the lateness the instrumentation is told (a clock read per pop, only when it is timed)
        long received = !timed || result.messages().isEmpty() ? 0 : System.nanoTime();
        for (Popped popped : result.messages()) {
            deliveries.add(new Delivery(result.slot(), popped.member(), popped.score(), popped.attempt(),
                    result.token(), true, logBodyChars, result.redisNow(), received, popped.envelope(),
                    popped.traceField()));
        }
        return deliveries;
    }

    /**
     * The cluster node that serves {@code slot} in the client's current view of the topology (its node id), or null
     * on a standalone or Sentinel deployment. A pop sent to a node that no longer serves its slot (a failover) gets
     * no reply until it times out: comparing the node a pop went to with this one tells when to send it again.
     */
    public @Nullable String nodeOf(int slot) {
        return nodes.nodeOf(slots[slot].store());
    }

    /** Asks the cluster client to look at the topology again now (see {@link RedisNodes#refreshTopology()}). */
    public CompletableFuture<Void> refreshTopology() {
        return nodes.refreshTopology();
    }

    // ---------------------------------------------------------------- outcomes (written by Settlement)

    /** Acknowledges one delivery; false when the lease was no longer held (nothing was removed). */
    public boolean ack(Delivery delivery) {
        return ackAll(List.of(delivery)) == 1;
    }

    /** Acknowledges many deliveries, one pipelined call per slot; returns how many were still held and removed. */
    public int ackAll(List<Delivery> deliveries) {
        return RedisGateway.await(ackAllAsync(deliveries), "acknowledging on topic '" + topic.name() + "'");
    }

    public CompletableFuture<Integer> ackAllAsync(List<Delivery> deliveries) {
        return settlement.ackAllAsync(deliveries);
    }

    /**
     * Acknowledges one delivery, batched with other acks to the same slot that are under way; true when acked, false
     * when the lease was no longer held. Retries when a lease extension changed the token meanwhile, and, backing
     * off for up to half the lease, when the call failed (an ack is fenced by its token: a repeated one settles
     * nothing else).
     */
    public CompletableFuture<Boolean> ackAsync(Delivery delivery) {
        return settlement.ackAsync(delivery);
    }

    /** Fails one attempt: retried after its backoff, or dead past max retries. */
    public NackOutcome nack(Delivery delivery, Throwable error) {
        return nack(delivery, describe(error));
    }

    public NackOutcome nack(Delivery delivery, String reason) {
        return fail(delivery, reason, FailureDecision.retry());
    }

    /** Sends a delivery straight to the dead queue (e.g. its body cannot be read, so retrying cannot help). */
    public NackOutcome deadLetter(Delivery delivery, String reason) {
        return fail(delivery, reason, FailureDecision.dead());
    }

    /** Fails one attempt with an explicit decision ({@link FailureDecision#standard()} counts as {@code retry()}). */
    public NackOutcome fail(Delivery delivery, String reason, @Nullable FailureDecision decision) {
        return settlement.fail(delivery, reason, decision);
    }

    public CompletableFuture<NackOutcome> failAsync(Delivery delivery, String reason, FailureDecision decision) {
        return settlement.failAsync(delivery, reason, decision);
    }

    /**
     * Returns deliveries that were fetched but will not be handled (shutdown) to the store at once, with the score
     * they were popped with; no attempt is counted. Returns how many were still held and moved.
     */
    public int release(List<Delivery> deliveries) {
        return RedisGateway.await(releaseAsync(deliveries), "releasing deliveries of topic '" + topic.name() + "'");
    }

    public CompletableFuture<Integer> releaseAsync(List<Delivery> deliveries) {
        return settlement.releaseAsync(deliveries);
    }

    /** Extends the lease of a delivery still being handled; false when it was no longer held. */
    public boolean extend(Delivery delivery) {
        return extendAll(List.of(delivery)) == 1;
    }

    /** Extends many leases, pipelined per slot; each held delivery gets its new token (a later deadline). */
    public int extendAll(List<Delivery> deliveries) {
        return RedisGateway.await(extendAllAsync(deliveries), "extending leases on topic '" + topic.name() + "'");
    }

    public CompletableFuture<Integer> extendAllAsync(List<Delivery> deliveries) {
        return settlement.extendAllAsync(deliveries);
    }

    /**
     * Moves every expired lease of the topic back as a failed attempt (or to dead past max retries). Safe to call
     * from any number of consumers at once.
     *
     * @return {retried, dead}
     */
    public long[] sweep() {
        return RedisGateway.await(sweepAsync(allSlots), "sweeping expired leases of topic '" + topic.name() + "'");
    }

    public CompletableFuture<long[]> sweepAsync(int[] slotNumbers) {
        List<CompletableFuture<long[]>> sweeps = new ArrayList<>(slotNumbers.length);
        for (int slot : slotNumbers) {
            sweeps.add(leases.sweep(slots[slot], priority, slotRetry, 1000));
        }
        return CompletableFuture.allOf(sweeps.toArray(CompletableFuture[]::new)).thenApply(v -> {
            long[] total = new long[2];
            for (CompletableFuture<long[]> sweep : sweeps) {
                total[0] += sweep.join()[0];
                total[1] += sweep.join()[1];
            }
            return total;
        });
    }

    // ---------------------------------------------------------------- a complete step

    /**
     * Polls once and handles every delivery on the calling thread: converts the body to {@code payloadType}
     * (unreadable → dead queue with the reason), calls the handler, then acks (normal return) or nacks (exception).
     *
     * @return how many deliveries were handled (whatever their outcome)
     */
    public <T> int pollAndHandle(Class<T> payloadType, MessageHandler<T> handler) {
        return pollAndHandle((Type) payloadType, handler);
    }

    /** As {@link #pollAndHandle(Class, MessageHandler)}, for generic payload types such as {@code List<Order>}. */
    public <T> int pollAndHandle(Type payloadType, MessageHandler<T> handler) {
        List<Delivery> deliveries = poll().deliveries();
        for (Delivery delivery : deliveries) {
            handle(delivery, payloadType, handler);
        }
        return deliveries.size();
    }

    /** Converts, handles and settles one delivery (see {@link #pollAndHandle}). */
    public <T> void handle(Delivery delivery, Type payloadType, MessageHandler<T> handler) {
        handleAsync(delivery, payloadType, handler).join();
    }

    /** Resolves the conversion to {@code payloadType} ahead of the first message (see {@link BodyCodec#prepare}). */
    public void preparePayloadType(Type payloadType) {
        handling.prepare(payloadType);
    }

    /**
     * Converts and handles one delivery on the calling thread, then settles it: ack (batched, asynchronous) on a
     * normal return, nack on an exception (retry or dead), dead queue when the body cannot be converted. The future
     * completes when the outcome is written to Redis.
     */
    public <T> CompletableFuture<Void> handleAsync(Delivery delivery, Type payloadType, MessageHandler<T> handler) {
        return handleAsync(delivery, payloadType, handler, HandleScope.NONE);
    }

    /**
     * As {@link #handleAsync(Delivery, Type, MessageHandler)}, reporting to {@code scope} (opened by the caller with
     * {@link RmqInstrumentation#handleStarted} right before): {@link HandleScope#handlerReturned} right after the
     * handler (conversion included), {@link HandleScope#settled} once Redis answered the ack or nack (not when the
     * settlement itself failed).
     */
    public <T> CompletableFuture<Void> handleAsync(Delivery delivery, Type payloadType, MessageHandler<T> handler,
            HandleScope scope) {
        CompletableFuture<Void> settled = new CompletableFuture<>();
        handle(delivery, payloadType, handler, scope, error -> {
            if (error != null) {
                settled.completeExceptionally(error);
            }
            else {
                settled.complete(null);
            }
        });
        return settled;
    }

    /**
     * As {@link #handleAsync(Delivery, Type, MessageHandler, HandleScope)}, with the end of the settlement handed to
     * {@code whenSettled} instead of a future: called exactly once, with null once the outcome is written to Redis or
     * with the error that kept it from being written (a {@link CompletionException} once the ack's retries gave up).
     * It runs on the thread that ends the settlement (Lettuce's event loop for an ack, the calling thread for a nack),
     * so it must be short and must not throw. For a listener container, which otherwise adds a future and a dependent
     * stage per message to the event loop's ack path. When this method itself throws, {@code whenSettled} is not
     * called.
     */
    public <T> void handle(Delivery delivery, Type payloadType, MessageHandler<T> handler, HandleScope scope,
            Consumer<@Nullable Throwable> whenSettled) {
        Outcome outcome = handling.invoke(delivery, payloadType, handler);
        scope.handlerReturned(outcome.error());
        settlement.settle(delivery, outcome, scope, whenSettled);
    }

    // ---------------------------------------------------------------- batches

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
    public <T> CompletableFuture<Void> handleBatchAsync(List<Delivery> deliveries, Type payloadType,
            BatchMessageHandler<T> handler, List<HandleScope> scopes) {
        Outcome[] outcomes = handling.invokeBatch(deliveries, payloadType, handler);
        for (int i = deliveries.size() - 1; i >= 0; i--) {
            scopes.get(i).handlerReturned(outcomes[i].error());
        }
        return settlement.settleBatch(deliveries, outcomes, scopes);
    }

    /** As {@link #handleBatchAsync(List, Type, BatchMessageHandler, List)}, reporting to no instrumentation scope. */
    public <T> CompletableFuture<Void> handleBatchAsync(List<Delivery> deliveries, Type payloadType,
            BatchMessageHandler<T> handler) {
        return handleBatchAsync(deliveries, payloadType, handler,
                Collections.nCopies(deliveries.size(), HandleScope.NONE));
    }

    /**
     * Acknowledges many deliveries at once: one pipelined call per slot, each delivery fenced by its token. A delivery
     * Redis refused because a lease extension changed its token meanwhile, or whose call failed, is acked again on
     * its own ({@link #ackAsync(Delivery)}: retried, backing off). Completes with, per delivery, whether it was
     * acked (false: its lease had ended).
     */
    public CompletableFuture<boolean[]> ackBatchAsync(List<Delivery> deliveries) {
        return settlement.ackBatchAsync(deliveries);
    }

    /** The instrumentation's name for what became of a failed delivery. */
    public static RmqInstrumentation.Outcome outcomeOf(NackOutcome result) {
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
    public record Outcome(@Nullable String reason, boolean unreadable, @Nullable Throwable error,
            @Nullable FailureDecision decision) {

        static final Outcome OK = new Outcome(null, false, null, null);

        public boolean failed() {
            return reason != null;
        }
    }

    /**
     * Converts the body to {@code payloadType} and calls the handler on the calling thread; settles nothing. A failure
     * comes with its decision: unreadable bodies go to dead; otherwise the error handler decides (if any), and the
     * standard decision sends non-retryable errors to dead and retries the rest.
     */
    public <T> Outcome invoke(Delivery delivery, Type payloadType, MessageHandler<T> handler) {
        return handling.invoke(delivery, payloadType, handler);
    }

    /**
     * Logs what became of a failed delivery and, when it died and the topic has a dead-letter topic, sends it there.
     * Both containers call this once Redis has recorded the failure.
     */
    public void afterFailure(Delivery delivery, NackOutcome result, Outcome outcome) {
        settlement.afterFailure(delivery, result, outcome);
    }

    // ---------------------------------------------------------------- ordered consumption (ORDERLY mode)

    /**
     * A step of an ordered slot's owner.
     *
     * @param fenced        this instance no longer holds the slot; nothing was changed
     * @param suspended     the slot's head waits for its retry (until {@code nextDue}); nothing was handed over
     * @param nextDue       Redis ms when the slot next has work (the head's retry time while suspended), -1 if empty
     * @param failedOutcome what became of the failed delivery passed in (FENCED when none was)
     * @param redisNow      Redis's clock when the step ran (ms)
     * @param deliveries    the next messages, in the order they must be handled
     */
    public record OrderedStep(boolean fenced, boolean suspended, long nextDue, NackOutcome failedOutcome,
            long redisNow, List<Delivery> deliveries) {
    }

    /**
     * Settles what an ordered slot's owner handled (acks, at most one failure: the head it stopped at) and, with
     * {@code batch > 0}, hands out every held message and then the slot's next ones (see orderly_next.lua, a resync
     * step). Fenced by {@code epoch}. For callers that run the slot one message at a time.
     */
    public CompletableFuture<OrderedStep> orderedStep(int slot, long epoch, int batch, List<Delivery> acked,
            @Nullable Delivery failed, @Nullable String reason, @Nullable FailureDecision decision) {
        List<StepFailure> failures = failed == null ? List.of() : List.of(new StepFailure(failed, reason, decision));
        return laneStep(slot, epoch, batch, true, false, acked, failures, List.of()).thenApply(step -> {
            boolean suspended = batch > 0 && step.deliveries().isEmpty() && step.suspendedLanes() > 0;
            return new OrderedStep(step.fenced(), suspended, suspended ? step.earliestRetry() : step.nextDue(),
                    failed == null || step.fenced() ? NackOutcome.FENCED : step.failedOutcomes().get(0),
                    step.redisNow(), step.deliveries());
        });
    }

    /** A failed delivery an ordered step reports, with what its handler decided. */
    public record StepFailure(Delivery delivery, @Nullable String reason, @Nullable FailureDecision decision) {
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
    public record LaneStep(boolean fenced, long nextDue, long redisNow, int suspendedLanes, long earliestRetry,
            List<NackOutcome> failedOutcomes, List<Delivery> deliveries) {
    }

    /**
     * Settles what an ordered slot's owner handled — acks, failures (each the message its lane stopped at), and
     * {@code returned}: taken and not started (behind a failure, or let go) — and, with {@code batch > 0}, hands out
     * the next messages: with {@code resync} every held one first; with {@code serial} (it holds messages of the
     * slot's common lane: stored without a group, ordered with every other message of the slot) none (see
     * orderly_next.lua). Fenced by {@code epoch}.
     */
    public CompletableFuture<LaneStep> laneStep(int slot, long epoch, int batch, boolean resync, boolean serial,
            List<Delivery> acked, List<StepFailure> failures, List<Delivery> returned) {
        SlotKeys keys = slots[slot];
        List<RmqRedisOrderly.OrderlyFailure> failed = new ArrayList<>(failures.size());
        for (StepFailure failure : failures) {
            failed.add(new RmqRedisOrderly.OrderlyFailure(failure.delivery().member(),
                    Reasons.truncate(failure.reason() == null ? "" : failure.reason()),
                    FailureDecision.actionOf(failure.decision())));
        }
        return orderly.orderlyNext(keys, epoch, priority, batch, slotRetry, resync, serial,
                Settlement.bodies(acked),
                failed, Settlement.bodies(returned), readContexts)
                .thenApply(step -> {
                    List<Delivery> deliveries = new ArrayList<>(step.messages().size());
                    long received = !timed || step.messages().isEmpty() ? 0 : System.nanoTime();
                    for (Popped popped : step.messages()) {
                        deliveries.add(new Delivery(keys, popped.member(), popped.score(), popped.attempt(), epoch,
                                false, logBodyChars, step.redisNow(), received, popped.envelope(), null));
                    }
                    List<NackOutcome> outcomes = new ArrayList<>(failures.size());
                    for (int k = 0; k < failures.size(); k++) {
                        outcomes.add(step.fenced() ? NackOutcome.FENCED : NackOutcome.of(step.failedOutcomes()[k]));
                    }
                    return new LaneStep(step.fenced(), step.nextDue(), step.redisNow(), step.suspendedLanes(),
                            step.earliestRetry(), outcomes, deliveries);
                });
    }

    /**
     * Claims (or, with the epoch held, renews) ownership of an ordered slot: leased with {@code live} (the membership
     * the claimant's heartbeat returned), else timed for {@code ownershipMillis}. Its answer is an engine internal, so
     * the ORDERLY container calls it through {@link io.rmq.consumer.internal.SlotClaims}.
     */
    CompletableFuture<RmqRedisOrderly.Claim> claim(int slot, String instanceId, long heldEpoch, long ownershipMillis,
            long decidedEpoch, RmqRedis.@org.jspecify.annotations.Nullable Beat live) {
        return orderly.claim(slots[slot], instanceId, heldEpoch, ownershipMillis, decidedEpoch, priority,
                slotRetry, live);
    }

    /**
     * {@code retry} as one of {@code slotAmount} slots applies it: a script sees one slot's dead queue, so each keeps
     * its share of the topic's dead-letter count bound (rounded up); the age bound is the topic's.
     */
    static RetryPolicy perSlot(RetryPolicy retry, int slotAmount) {
        DeadLetterRetention retention = retry.deadLetters();
        return retry.withDeadLetters(
                new DeadLetterRetention(retention.maxCountPerSlot(slotAmount), retention.maxAge()));
    }

    /** This consumer's handle on the topic's cluster-wide rate limit. */
    public TopicRateLimiter rateLimiter(io.rmq.core.RateLimit limit) {
        return new TopicRateLimiter(redis, topic.name(), limit);
    }

    /** Gives ownership of an ordered slot up; false when this instance no longer held it. */
    public CompletableFuture<Boolean> releaseOwnership(int slot, String instanceId, long epoch) {
        return orderly.releaseOwnership(slots[slot], instanceId, epoch, priority);
    }

    /** Error text kept with a failed message: exception class and message, and its causes. */
    public static String describe(Throwable error) {
        return Reasons.describe(error);
    }
}
