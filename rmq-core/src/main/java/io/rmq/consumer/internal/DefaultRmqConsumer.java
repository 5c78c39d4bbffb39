package io.rmq.consumer.internal;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.DeadLetterForwarder;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqConsumer;
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
import io.rmq.redis.internal.Popped;
import io.rmq.redis.internal.RmqRedisOrderly;
import io.rmq.redis.internal.MembersBeat;
import org.jspecify.annotations.Nullable;

/**
 * The {@link RmqConsumer} of an engine, and the {@link SlotConsumer} port its listener containers drive. Thread-safe;
 * no threads of its own. Popping (and the ORDERLY mode's steps) is done here; converting and calling handlers is
 * {@link DeliveryHandler}'s job, writing outcomes (ack, fail, release, extend) {@link Settlement}'s.
 */
public final class DefaultRmqConsumer implements SlotConsumer {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqConsumer.class);

    private final RmqRedis redis;
    /** The engine's {@link RmqRedis#leases()} and {@link RmqRedis#orderly()}, kept: called on every pop and step. */
    private final RmqRedisLeases leases;
    private final RmqRedisOrderly orderly;
    /** The engine's {@link RmqRedis#nodes()}, kept: asked which node serves a slot on every pop. */
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

    /** Made by the {@link io.rmq.Rmq} facade ({@link io.rmq.Rmq#consumer}). */
    public DefaultRmqConsumer(RmqRedis redis, TopicDefinition topic, ConsumerSettings settings, Parts parts) {
        this.readContexts = parts.readContexts();
        this.instrumentation = parts.instrumentation();
        this.timed = this.instrumentation.timed(); // NONE is not timed
        this.logBodyChars = parts.logBodyChars();
        this.redis = redis;
        this.leases = redis.leases();
        this.orderly = redis.orderly();
        this.nodes = redis.nodes();
        this.topic = topic;
        this.settings = settings;
        this.slots = redis.keys().slots(topic);
        this.slotRetry = Settlement.perSlot(settings.retry(), slots.length);
        this.allSlots = new int[slots.length];
        for (int i = 0; i < allSlots.length; i++) {
            allSlots[i] = i;
        }
        this.priority = topic.type() == TopicType.PRIORITY;
        this.handling = new DeliveryHandler(topic.name(), settings, parts.codec(), logBodyChars);
        this.settlement = new Settlement(leases, topic, settings, parts.deadLetters(), instrumentation);
    }

    @Override
    public RmqInstrumentation instrumentation() {
        return instrumentation;
    }

    @Override
    public long latenessMillis(Delivery delivery) {
        if (priority) {
            return Long.MIN_VALUE;
        }
        return timed ? DefaultDelivery.of(delivery).redisNowEstimate() - (long) delivery.score() : 0;
    }

    @Override
    public int[] allSlots() {
        return allSlots.clone();
    }

    @Override
    public TopicDefinition topic() {
        return topic;
    }

    @Override
    public ConsumerSettings settings() {
        return settings;
    }

    // ---------------------------------------------------------------- pop

    @Override
    public PollResult poll() {
        return RedisGateway.await(pollAsync(allSlots, settings.batchSize()), "polling topic '" + topic.name() + "'");
    }

    /** How long after a failed pop its slot is due again (in a poll result; see {@link #pollAsync}). */
    static final long FAILED_SLOT_PAUSE_MILLIS = 1000;

    @Override
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

    @Override
    public CompletableFuture<PollResult> pollSlotAsync(int slot, int batch) {
        long leaseMillis = settings.lease().toMillis();
        return leases.pop(slots[slot], priority, batch, leaseMillis, slotRetry, readContexts,
                settings.lookAhead().toMillis()).thenApply(result ->
                new PollResult(deliveriesOf(result), result.redisNow(), result.nextDue(), new int[] {slot},
                        new long[] {result.nextDue()}));
    }

    @Override
    public CompletableFuture<long[]> occupiedSlotsAsync(long foldMillis) {
        return leases.occupied(slots, priority, foldMillis);
    }

    @Override
    public CompletableFuture<long[]> occupiedSlotsAsync(int[] which, long foldMillis) {
        SlotKeys[] keys = new SlotKeys[which.length];
        for (int i = 0; i < which.length; i++) {
            keys[i] = slots[which[i]];
        }
        return leases.occupied(keys, priority, foldMillis);
    }

    @Override
    public void joinShares(String memberId, long ttlMillis,
            java.util.function.BiConsumer<@Nullable List<String>, @Nullable Throwable> answer) {
        redis.roster().join(topic.name(), memberId, ttlMillis, answer);
    }

    @Override
    public void leaveShares(String memberId) {
        redis.roster().leave(memberId);
    }

    /** The leased deliveries of one pop, each fenced by the pop's token. */
    private List<Delivery> deliveriesOf(PopResult result) {
        List<Delivery> deliveries = new ArrayList<>(result.messages().size());
        // for the lateness the instrumentation is told (a clock read per pop, only when it is timed)
        long received = !timed || result.messages().isEmpty() ? 0 : System.nanoTime();
        for (Popped popped : result.messages()) {
            deliveries.add(new DefaultDelivery(result.slot(), popped.member(), popped.score(), popped.attempt(),
                    result.token(), true, logBodyChars, result.redisNow(), received, popped.envelope(),
                    popped.envelopeKey()));
        }
        return deliveries;
    }

    @Override
    public @Nullable String nodeOf(int slot) {
        return nodes.nodeOf(slots[slot].store());
    }

    @Override
    public CompletableFuture<Void> refreshTopology() {
        return nodes.refreshTopology();
    }

    // ---------------------------------------------------------------- outcomes (written by Settlement)

    @Override
    public boolean ack(Delivery delivery) {
        return ackAll(List.of(delivery)) == 1;
    }

    @Override
    public int ackAll(List<Delivery> deliveries) {
        return RedisGateway.await(ackAllAsync(deliveries), "acknowledging on topic '" + topic.name() + "'");
    }

    @Override
    public CompletableFuture<Integer> ackAllAsync(List<Delivery> deliveries) {
        return settlement.ackAllAsync(deliveries);
    }

    @Override
    public CompletableFuture<Boolean> ackAsync(Delivery delivery) {
        return settlement.ackAsync(delivery);
    }

    @Override
    public NackOutcome nack(Delivery delivery, Throwable error) {
        return nack(delivery, Reasons.describe(error));
    }

    @Override
    public NackOutcome nack(Delivery delivery, String reason) {
        return fail(delivery, reason, FailureDecision.retry());
    }

    @Override
    public NackOutcome deadLetter(Delivery delivery, String reason) {
        return fail(delivery, reason, FailureDecision.dead());
    }

    @Override
    public NackOutcome fail(Delivery delivery, String reason, @Nullable FailureDecision decision) {
        return settlement.fail(delivery, reason, decision);
    }

    @Override
    public CompletableFuture<NackOutcome> failAsync(Delivery delivery, String reason, FailureDecision decision) {
        return settlement.failAsync(delivery, reason, decision);
    }

    @Override
    public int release(List<Delivery> deliveries) {
        return RedisGateway.await(releaseAsync(deliveries), "releasing deliveries of topic '" + topic.name() + "'");
    }

    @Override
    public CompletableFuture<Integer> releaseAsync(List<Delivery> deliveries) {
        return settlement.releaseAsync(deliveries);
    }

    @Override
    public boolean extend(Delivery delivery) {
        return extendAll(List.of(delivery)) == 1;
    }

    @Override
    public int extendAll(List<Delivery> deliveries) {
        return RedisGateway.await(extendAllAsync(deliveries), "extending leases on topic '" + topic.name() + "'");
    }

    @Override
    public CompletableFuture<Integer> extendAllAsync(List<Delivery> deliveries) {
        return settlement.extendAllAsync(deliveries);
    }

    @Override
    public long[] sweep() {
        return RedisGateway.await(sweepAsync(allSlots), "sweeping expired leases of topic '" + topic.name() + "'");
    }

    @Override
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

    @Override
    public <T> int pollAndHandle(Class<T> payloadType, MessageHandler<T> handler) {
        return pollAndHandle((Type) payloadType, handler);
    }

    @Override
    public <T> int pollAndHandle(Type payloadType, MessageHandler<T> handler) {
        List<Delivery> deliveries = poll().deliveries();
        for (Delivery delivery : deliveries) {
            handle(delivery, payloadType, handler);
        }
        return deliveries.size();
    }

    @Override
    public <T> void handle(Delivery delivery, Type payloadType, MessageHandler<T> handler) {
        CompletableFuture<Void> settled = new CompletableFuture<>();
        handle(delivery, payloadType, handler, HandleScope.NONE, error -> {
            if (error != null) {
                settled.completeExceptionally(error);
            }
            else {
                settled.complete(null);
            }
        });
        settled.join();
    }

    @Override
    public void preparePayloadType(Type payloadType) {
        handling.prepare(payloadType);
    }

    @Override
    public <T> void handle(Delivery delivery, Type payloadType, MessageHandler<T> handler, HandleScope scope,
            Consumer<@Nullable Throwable> whenSettled) {
        Outcome outcome = handling.invoke(delivery, payloadType, handler);
        scope.handlerReturned(outcome.error());
        settlement.settle(delivery, outcome, scope, whenSettled);
    }

    // ---------------------------------------------------------------- batches

    @Override
    public <T> CompletableFuture<Void> handleBatchAsync(List<Delivery> deliveries, Type payloadType,
            BatchMessageHandler<T> handler, List<HandleScope> scopes) {
        Outcome[] outcomes = handling.invokeBatch(deliveries, payloadType, handler);
        for (int i = deliveries.size() - 1; i >= 0; i--) {
            scopes.get(i).handlerReturned(outcomes[i].error());
        }
        return settlement.settleBatch(deliveries, outcomes, scopes);
    }




    @Override
    public <T> @Nullable Outcome invoke(Delivery delivery, Type payloadType, MessageHandler<T> handler,
            BooleanSupplier mayStart) {
        return handling.invoke(delivery, payloadType, handler, mayStart);
    }

    @Override
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



    @Override
    public CompletableFuture<LaneStep> laneStep(int slot, long epoch, int batch, boolean resync, boolean serial,
            List<Delivery> acked, List<StepFailure> failures, List<Delivery> returned) {
        SlotKeys keys = slots[slot];
        List<RmqRedisOrderly.OrderlyFailure> failed = new ArrayList<>(failures.size());
        for (StepFailure failure : failures) {
            failed.add(new RmqRedisOrderly.OrderlyFailure(failure.delivery().member(),
                    Reasons.truncate(failure.reason() == null ? "" : failure.reason()),
                    Settlement.actionOf(failure.decision())));
        }
        return orderly.orderlyNext(keys, epoch, priority, batch, slotRetry, resync, serial, Settlement.bodies(acked),
                Settlement.envelopeKeys(acked), failed, Settlement.bodies(returned), readContexts)
                .thenApply(step -> {
                    List<Delivery> deliveries = new ArrayList<>(step.messages().size());
                    long received = !timed || step.messages().isEmpty() ? 0 : System.nanoTime();
                    for (Popped popped : step.messages()) {
                        deliveries.add(new DefaultDelivery(keys, popped.member(), popped.score(), popped.attempt(), epoch,
                                false, logBodyChars, step.redisNow(), received, popped.envelope(), null));
                    }
                    List<NackOutcome> outcomes = new ArrayList<>(failures.size());
                    for (int k = 0; k < failures.size(); k++) {
                        outcomes.add(step.fenced() ? NackOutcome.FENCED : Settlement.nackOutcome(step.failedOutcomes()[k]));
                    }
                    return new LaneStep(step.fenced(), step.nextDue(), step.redisNow(), step.suspendedLanes(),
                            step.earliestRetry(), outcomes, deliveries);
                });
    }

    @Override
    public CompletableFuture<RmqRedisOrderly.Claim> claim(int slot, String instanceId, long heldEpoch, long ownershipMillis,
            long decidedEpoch) {
        return orderly.claim(slots[slot], instanceId, heldEpoch, ownershipMillis, decidedEpoch, priority, slotRetry,
                null);
    }

    @Override
    public CompletableFuture<RmqRedisOrderly.Claim> claimLeased(int slot, String instanceId, long decidedEpoch,
            MembersBeat live) {
        return orderly.claim(slots[slot], instanceId, 0, 0, decidedEpoch, priority, slotRetry, live);
    }


    @Override
    public TopicRateLimiter rateLimiter(io.rmq.core.RateLimit limit) {
        return new TopicRateLimiter(redis, topic.name(), limit);
    }

    @Override
    public CompletableFuture<Boolean> releaseOwnership(int slot, String instanceId, long epoch) {
        return orderly.releaseOwnership(slots[slot], instanceId, epoch, priority);
    }
}
