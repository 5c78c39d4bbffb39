package io.rmq.consumer;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

import io.rmq.core.BodyCodec;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import io.rmq.core.RmqPayloadMismatchException;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.core.internal.Timeouts;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.RmqRedis.PopResult;
import io.rmq.redis.internal.RmqRedis.Popped;
import io.rmq.redis.internal.SlotBatcher;
import tools.jackson.core.JacksonException;
import org.jspecify.annotations.Nullable;

/**
 * Two-phase consumption of one topic: {@link #poll()} leases due messages; each then ends in {@link #ack},
 * {@link #nack} (retry after backoff, or dead past max retries) or lease expiry (found by {@link #sweep()}).
 * Calls for many slots are pipelined. Thread-safe; no threads of its own (containers drive it).
 */
public final class RmqConsumer {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqConsumer.class);

    /** Longest error text kept with a failed message. */
    static final int MAX_REASON_CHARS = 2000;

    private final RmqRedis redis;
    private final TopicDefinition topic;
    private final ConsumerSettings settings;
    private final BodyCodec codec;
    private final SlotKeys[] slots;
    private final int[] allSlots;
    private final boolean priority;
    /** Acks to a slot that arrive while one is under way go out together. */
    private final SlotBatcher<Delivery, Long> acks;
    /** Sends the bodies of messages that died here to the dead-letter topic, if one is set. */
    private final @Nullable DeadLetterForwarder deadLetters;
    /** How much of a body log lines show (0: none; bodies may hold personal data). */
    private final int logBodyChars;
    /** Whether pops ask for the trace contexts stored beside the messages (propagation on). */
    private final boolean readContexts;
    private final RmqInstrumentation instrumentation;
    /** False with {@link RmqInstrumentation#NONE}: no clock reads for operation timings. */
    private final boolean instrumented;

    public RmqConsumer(RmqRedis redis, TopicDefinition topic, ConsumerSettings settings, BodyCodec codec) {
        this(redis, topic, settings, codec, null, 0);
    }

    /**
     * @param deadLetters  forwards dead messages when {@code settings.failures().deadLetterTopic()} is set
     * @param logBodyChars how many characters of a body log lines show (0: none)
     */
    public RmqConsumer(RmqRedis redis, TopicDefinition topic, ConsumerSettings settings, BodyCodec codec,
            @Nullable DeadLetterForwarder deadLetters, int logBodyChars) {
        this(redis, topic, settings, codec, deadLetters, logBodyChars, RmqInstrumentation.NONE);
    }

    /**
     * @param instrumentation what this consumer and the containers built on it report to
     *                        ({@link RmqInstrumentation#NONE}: nothing)
     */
    public RmqConsumer(RmqRedis redis, TopicDefinition topic, ConsumerSettings settings, BodyCodec codec,
            @Nullable DeadLetterForwarder deadLetters, int logBodyChars, RmqInstrumentation instrumentation) {
        this(redis, topic, settings, codec, deadLetters, logBodyChars, instrumentation, false);
    }

    /**
     * @param instrumentation what this consumer and the containers built on it report to
     *                        ({@link RmqInstrumentation#NONE}: nothing)
     * @param readContexts    whether deliveries carry the trace context stored beside their message
     *                        ({@link Delivery#context()}; {@code Rmq.Options#propagateContext}); pops pay nothing for
     *                        it when false
     */
    public RmqConsumer(RmqRedis redis, TopicDefinition topic, ConsumerSettings settings, BodyCodec codec,
            @Nullable DeadLetterForwarder deadLetters, int logBodyChars, RmqInstrumentation instrumentation,
            boolean readContexts) {
        this.readContexts = readContexts;
        this.instrumentation = instrumentation == null ? RmqInstrumentation.NONE : instrumentation;
        this.instrumented = this.instrumentation != RmqInstrumentation.NONE;
        this.deadLetters = deadLetters;
        this.logBodyChars = Math.max(0, logBodyChars);
        this.redis = redis;
        this.topic = topic;
        this.settings = settings;
        this.codec = codec;
        this.slots = redis.keys().slots(topic);
        this.allSlots = new int[slots.length];
        for (int i = 0; i < allSlots.length; i++) {
            allSlots[i] = i;
        }
        this.priority = topic.type() == TopicType.PRIORITY;
        this.acks = new SlotBatcher<>(1000, RedisGateway.CALL_TIMEOUT_MILLIS,
                (slot, group) -> timed("ack", redis.ack(slot, priority, bodies(group), tokens(group))));
    }

    /** What this consumer and the containers built on it report to ({@link RmqInstrumentation#NONE}: nothing). */
    public RmqInstrumentation instrumentation() {
        return instrumentation;
    }

    /**
     * How late {@code delivery} is now, for {@link RmqInstrumentation#handleStarted}: Redis's clock (estimated from
     * its pop's reply and the local time since) minus its due time; {@link Long#MIN_VALUE} for PRIORITY topics.
     */
    public long latenessMillis(Delivery delivery) {
        return priority ? Long.MIN_VALUE : delivery.redisNowEstimate() - (long) delivery.score();
    }

    /**
     * Reports one Redis call ({@code operation} ack, nack, extend) when it ends; with NONE, the call as it is
     * (the clock read at the start is the caller's: {@code System.nanoTime()} only when instrumented).
     */
    private <R> CompletableFuture<R> timed(String operation, CompletableFuture<R> call) {
        if (!instrumented) {
            return call;
        }
        long started = System.nanoTime();
        return call.whenComplete((r, error) -> instrumentation.operation(operation, topic.name(),
                System.nanoTime() - started, RedisGateway.unwrap(error)));
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
            pops.add(redis.pop(slots[slot], priority, batchPerSlot, leaseMillis, settings.retry(), readContexts));
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
        return redis.pop(slots[slot], priority, batch, leaseMillis, settings.retry(), readContexts,
                settings.lookAhead().toMillis()).thenApply(result ->
                new PollResult(deliveriesOf(result), result.redisNow(), result.nextDue(), new int[] {slot},
                        new long[] {result.nextDue()}));
    }

    /**
     * Per slot of the topic, whether it holds anything at all (waiting messages, leases, PRIORITY retries): 0 means
     * nothing can fall due there until something is written to it. Cheap (plain {@code EXISTS}, see
     * {@link RmqRedis#occupied}): an idle listener's periodic check of the slots it has no news of.
     */
    public CompletableFuture<long[]> occupiedSlotsAsync() {
        return redis.occupied(slots, priority);
    }

    /** The leased deliveries of one pop, each fenced by the pop's token. */
    private List<Delivery> deliveriesOf(PopResult result) {
        List<Delivery> deliveries = new ArrayList<>(result.messages().size());
        // for the lateness the instrumentation is told (a clock read per pop, only when there is one)
        long received = !instrumented || result.messages().isEmpty() ? 0 : System.nanoTime();
        for (Popped popped : result.messages()) {
            deliveries.add(new Delivery(result.slot(), popped.member(), popped.score(), popped.attempt(),
                    result.token(), true, logBodyChars, result.redisNow(), received, popped.context()));
        }
        return deliveries;
    }

    /**
     * The cluster node that serves {@code slot} in the client's current view of the topology (its node id), or null
     * on a standalone or Sentinel deployment. A pop sent to a node that no longer serves its slot (a failover) gets
     * no reply until it times out: comparing the node a pop went to with this one tells when to send it again.
     */
    public @Nullable String nodeOf(int slot) {
        return redis.gateway().nodeOf(slots[slot].store());
    }

    /** Asks the cluster client to look at the topology again now (see {@link RedisGateway#refreshTopology()}). */
    public CompletableFuture<Void> refreshTopology() {
        return redis.gateway().refreshTopology();
    }

    // ---------------------------------------------------------------- outcomes

    /** Acknowledges one delivery; false when the lease was no longer held (nothing was removed). */
    public boolean ack(Delivery delivery) {
        return ackAll(List.of(delivery)) == 1;
    }

    /** Acknowledges many deliveries, one pipelined call per slot; returns how many were still held and removed. */
    public int ackAll(List<Delivery> deliveries) {
        return RedisGateway.await(ackAllAsync(deliveries), "acknowledging on topic '" + topic.name() + "'");
    }

    public CompletableFuture<Integer> ackAllAsync(List<Delivery> deliveries) {
        return perSlot(deliveries, (slot, group) -> timed("ack", redis.ack(slot, priority, bodies(group), tokens(group))))
                .thenApply(results -> {
                    int acked = 0;
                    for (List<Long> codes : results.values()) {
                        for (long code : codes) {
                            acked += (int) code;
                        }
                    }
                    return acked;
                });
    }

    /**
     * Acknowledges one delivery, batched with other acks to the same slot that are under way; true when acked, false
     * when the lease was no longer held. Retries when a lease extension changed the token meanwhile.
     */
    public CompletableFuture<Boolean> ackAsync(Delivery delivery) {
        return ackAsync(delivery, System.currentTimeMillis(), FIRST_ACK_RETRY_MILLIS);
    }

    /** Wait before the first retry of an ack that failed; it doubles with every further failure. */
    private static final long FIRST_ACK_RETRY_MILLIS = 100;

    /**
     * An ack whose call failed (the cluster refusing commands while a failover is under way, a timeout) is sent
     * again, backing off, for up to half the lease: giving up at once let the lease run out and the message come a
     * second time. Retrying is safe: an ack is fenced by its token, so a repeated one settles nothing else.
     */
    private CompletableFuture<Boolean> ackAsync(Delivery delivery, long firstTriedMillis, long retryInMillis) {
        CompletableFuture<Boolean> acked = new CompletableFuture<>();
        ack(delivery, firstTriedMillis, retryInMillis, (done, error) -> {
            if (error != null) {
                acked.completeExceptionally(error);
            }
            else {
                acked.complete(done);
            }
        });
        return acked;
    }

    /**
     * {@link #ackAsync(Delivery, long, long)} with the outcome handed to {@code then} (on the thread that completes
     * the ack: Lettuce's event loop) instead of a future: the common case, acked at the first try, then costs one
     * dependent stage per message instead of a chain of four (handle, compose, the composed future, the caller's).
     * {@code then} gets whether the delivery was acked, or the error (a {@link CompletionException}) once retries
     * gave up.
     */
    private void ack(Delivery delivery, long firstTriedMillis, long retryInMillis, BiConsumer<Boolean, Throwable> then) {
        long token = delivery.token();
        acks.submit(delivery.slotKeys(), delivery).whenComplete((code, error) -> {
            if (error == null && code == 1) {
                then.accept(true, null);
                return;
            }
            CompletableFuture<Boolean> next;
            if (error == null) {
                next = afterExtension(delivery, token, () -> ackAsync(delivery), false);
            }
            else if (System.currentTimeMillis() + retryInMillis - firstTriedMillis > settings.lease().toMillis() / 2) {
                next = CompletableFuture.failedFuture(error);
            }
            else {
                CompletableFuture<Void> waited = new CompletableFuture<>();
                Timeouts.after(retryInMillis, () -> waited.complete(null));
                next = waited.thenCompose(v -> ackAsync(delivery, firstTriedMillis, retryInMillis * 2));
            }
            next.whenComplete((acked, failure) -> then.accept(acked, failure == null || failure instanceof
                    CompletionException ? failure : new CompletionException(failure)));
        });
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
        return RedisGateway.await(failAsync(delivery, reason, decision), "failing a delivery on topic '" + topic.name() + "'");
    }

    public CompletableFuture<NackOutcome> failAsync(Delivery delivery, String reason, FailureDecision decision) {
        return timed("nack", redis.nack(delivery.slotKeys(), priority, settings.retry(), List.of(delivery.body()),
                List.of(delivery.token()), List.of(truncate(reason)), List.of(FailureDecision.actionOf(decision))))
                .thenApply(codes -> NackOutcome.of(codes.get(0)));
    }

    /**
     * Returns deliveries that were fetched but will not be handled (shutdown) to the store at once, with the score
     * they were popped with; no attempt is counted. Returns how many were still held and moved.
     */
    public int release(List<Delivery> deliveries) {
        return RedisGateway.await(releaseAsync(deliveries), "releasing deliveries of topic '" + topic.name() + "'");
    }

    public CompletableFuture<Integer> releaseAsync(List<Delivery> deliveries) {
        // a lease extension under way changes the tokens: releasing with the old ones would be fenced and leave the
        // deliveries leased until they expire (seen at a container's stop with a short lease); extensions are bounded
        CompletableFuture<?>[] extensions = new CompletableFuture<?>[deliveries.size()];
        for (int i = 0; i < extensions.length; i++) {
            extensions[i] = deliveries.get(i).extension().exceptionally(ex -> null);
        }
        return CompletableFuture.allOf(extensions).thenCompose(v -> releaseNow(deliveries));
    }

    private CompletableFuture<Integer> releaseNow(List<Delivery> deliveries) {
        return perSlot(deliveries, (slot, group) -> {
            List<Double> scores = new ArrayList<>(group.size());
            for (Delivery d : group) {
                scores.add(d.score());
            }
            return redis.release(slot, priority, bodies(group), tokens(group), scores);
        }).thenApply(results -> results.values().stream().mapToInt(Long::intValue).sum());
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
        long leaseMillis = settings.lease().toMillis();
        CompletableFuture<Void> applied = new CompletableFuture<>();
        for (Delivery delivery : deliveries) {
            delivery.extensionUnderWay(applied);
        }
        CompletableFuture<Integer> extended;
        try {
            // bounded: a fenced ack or nack waits for this extension's token (see Delivery#extension)
            extended = Timeouts.within(extendAll(deliveries, leaseMillis), RedisGateway.CALL_TIMEOUT_MILLIS,
                    () -> "extending " + deliveries.size() + " leases of topic '" + topic.name() + "'");
        }
        catch (RuntimeException ex) {
            extended = CompletableFuture.failedFuture(ex);
        }
        return extended.whenComplete((count, error) -> applied.complete(null));
    }

    private CompletableFuture<Integer> extendAll(List<Delivery> deliveries, long leaseMillis) {
        return perSlot(deliveries, (slot, group) -> timed("extend", redis.extend(slot, leaseMillis, bodies(group),
                tokens(group))).thenApply(tokens -> {
                    int extended = 0;
                    for (int i = 0; i < group.size(); i++) {
                        if (tokens.get(i) > 0) {
                            group.get(i).leaseExtendedTo(tokens.get(i));
                            extended++;
                        }
                    }
                    return List.of((long) extended);
                })).thenApply(results -> results.values().stream().mapToInt(r -> r.get(0).intValue()).sum());
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
            sweeps.add(redis.sweep(slots[slot], priority, settings.retry(), 1000));
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
        codec.prepare(payloadType);
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
            java.util.function.Consumer<@Nullable Throwable> whenSettled) {
        Outcome outcome = invoke(delivery, payloadType, handler);
        scope.handlerReturned(outcome.error());
        if (outcome.failed()) {
            NackOutcome[] result = {NackOutcome.FENCED};
            settle(delivery, d -> (result[0] = fail(d, outcome.reason(), outcome.decision())) != NackOutcome.FENCED);
            afterFailure(delivery, result[0], outcome);
            // after its log line (and a dead-letter forward): whoever sees the count sees the line written
            scope.settled(outcomeOf(result[0]));
            whenSettled.accept(null);
            return;
        }
        ack(delivery, System.currentTimeMillis(), FIRST_ACK_RETRY_MILLIS, (acked, error) -> {
            if (error != null) {
                whenSettled.accept(error);
                return;
            }
            Throwable failed = null;
            try {
                if (!acked) {
                    log.warn("{} was handled after its lease had expired (handler slower than the lease and its"
                            + " extension); it may be delivered again", delivery);
                }
                scope.settled(acked ? RmqInstrumentation.Outcome.ACK : RmqInstrumentation.Outcome.FENCED);
            }
            catch (RuntimeException | Error ex) {
                failed = ex;
            }
            whenSettled.accept(failed);
        });
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
        int size = deliveries.size();
        Outcome[] outcomes = new Outcome[size];
        List<T> payloads = new ArrayList<>(size);
        List<Delivery> readable = new ArrayList<>(size);
        int[] positions = new int[size]; // index in what the handler gets -> index in the batch
        for (int i = 0; i < size; i++) {
            Delivery delivery = deliveries.get(i);
            try {
                payloads.add(codec.decode(delivery.body(), payloadType));
                positions[readable.size()] = i;
                readable.add(delivery);
            }
            catch (RuntimeException ex) {
                outcomes[i] = unreadable(delivery, payloadType, ex);
            }
        }
        if (!readable.isEmpty()) {
            invokeBatch(handler, payloads, readable, positions, outcomes);
        }
        for (int i = size - 1; i >= 0; i--) {
            scopes.get(i).handlerReturned(outcomes[i].error());
        }
        List<Delivery> handled = new ArrayList<>(size);
        List<HandleScope> handledScopes = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            if (!outcomes[i].failed()) {
                handled.add(deliveries.get(i));
                handledScopes.add(scopes.get(i));
            }
        }
        // the acks go out first (asynchronously, one call), the failures meanwhile, one after the other
        CompletableFuture<Void> acked = handled.isEmpty() ? CompletableFuture.completedFuture(null)
                : ackBatchAsync(handled).thenAccept(results -> {
                    for (int i = 0; i < results.length; i++) {
                        if (!results[i]) {
                            log.warn("{} was handled after its lease had expired (batch slower than the lease and its"
                                    + " extension); it may be delivered again", handled.get(i));
                        }
                        handledScopes.get(i).settled(results[i] ? RmqInstrumentation.Outcome.ACK
                                : RmqInstrumentation.Outcome.FENCED);
                    }
                });
        // the failures go out together as well (pipelined on the connection), then are waited for one by one
        List<Integer> failedAt = new ArrayList<>();
        List<Long> sentTokens = new ArrayList<>();
        List<CompletableFuture<NackOutcome>> calls = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Outcome outcome = outcomes[i];
            if (outcome.failed()) {
                Delivery delivery = deliveries.get(i);
                failedAt.add(i);
                sentTokens.add(delivery.token());
                CompletableFuture<NackOutcome> call;
                try {
                    call = failAsync(delivery, outcome.reason(), outcome.decision());
                }
                catch (RuntimeException ex) {
                    call = CompletableFuture.failedFuture(ex);
                }
                calls.add(call);
            }
        }
        for (int k = 0; k < failedAt.size(); k++) {
            int i = failedAt.get(k);
            Delivery delivery = deliveries.get(i);
            Outcome outcome = outcomes[i];
            NackOutcome[] result = {NackOutcome.FENCED};
            try {
                result[0] = RedisGateway.await(calls.get(k), "failing " + delivery);
                if (result[0] == NackOutcome.FENCED) {
                    // a lease extension may have changed the token meanwhile: wait for it, and fail again if it did
                    delivery.extension().exceptionally(ex -> null).join();
                    if (delivery.token() != sentTokens.get(k)) {
                        settle(delivery, d -> (result[0] = fail(d, outcome.reason(), outcome.decision()))
                                != NackOutcome.FENCED);
                    }
                }
            }
            catch (RuntimeException ex) {
                // Redis unreachable: the lease expires and the message is redelivered; the others still settle
                log.warn("{} could not be failed; it will be redelivered after its lease: {}", delivery,
                        String.valueOf(ex));
                continue;
            }
            afterFailure(delivery, result[0], outcome);
            scopes.get(i).settled(outcomeOf(result[0]));
        }
        return acked;
    }

    /** As {@link #handleBatchAsync(List, Type, BatchMessageHandler, List)}, reporting to no instrumentation scope. */
    public <T> CompletableFuture<Void> handleBatchAsync(List<Delivery> deliveries, Type payloadType,
            BatchMessageHandler<T> handler) {
        return handleBatchAsync(deliveries, payloadType, handler,
                Collections.nCopies(deliveries.size(), HandleScope.NONE));
    }

    /** Calls a batch handler and records, per delivery, what it made of it (see {@link #handleBatchAsync}). */
    private <T> void invokeBatch(BatchMessageHandler<T> handler, List<T> payloads, List<Delivery> readable,
            int[] positions, Outcome[] outcomes) {
        Throwable failure = null;
        try {
            handler.handle(Collections.unmodifiableList(payloads), Collections.unmodifiableList(readable));
        }
        catch (Exception | Error ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            failure = ex;
        }
        RmqBatchFailure partial = failure instanceof RmqBatchFailure batchFailure ? batchFailure : null;
        if (partial != null && (partial.failedIndexes().first() < 0
                || partial.failedIndexes().last() >= readable.size())) {
            log.error("A batch listener of topic '{}' threw an RmqBatchFailure naming indexes {} of a batch of {};"
                    + " failing the whole batch", topic.name(), partial.failedIndexes(), readable.size());
            partial = null;
        }
        for (int k = 0; k < readable.size(); k++) {
            Throwable error = partial != null
                    ? (partial.failedIndexes().contains(k) ? partial.causeOf(k) : null)
                    : failure;
            outcomes[positions[k]] = error == null ? Outcome.OK
                    : new Outcome(describe(error), false, error, decide(readable.get(k), payloads.get(k), error));
        }
    }

    /**
     * Acknowledges many deliveries at once: one pipelined call per slot, each delivery fenced by its token. A delivery
     * Redis refused because a lease extension changed its token meanwhile, or whose call failed, is acked again on
     * its own ({@link #ackAsync(Delivery)}: retried, backing off). Completes with, per delivery, whether it was
     * acked (false: its lease had ended).
     */
    public CompletableFuture<boolean[]> ackBatchAsync(List<Delivery> deliveries) {
        Map<SlotKeys, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < deliveries.size(); i++) {
            bySlot.computeIfAbsent(deliveries.get(i).slotKeys(), s -> new ArrayList<>()).add(i);
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<Boolean>[] each = new CompletableFuture[deliveries.size()];
        bySlot.forEach((slot, indexes) -> {
            List<Delivery> group = new ArrayList<>(indexes.size());
            indexes.forEach(i -> group.add(deliveries.get(i)));
            List<Long> sentTokens = tokens(group);
            CompletableFuture<List<Long>> call;
            try {
                call = timed("ack", redis.ack(slot, priority, bodies(group), sentTokens));
            }
            catch (RuntimeException ex) {
                call = CompletableFuture.failedFuture(ex);
            }
            for (int k = 0; k < group.size(); k++) {
                Delivery delivery = group.get(k);
                long token = sentTokens.get(k);
                int at = k;
                each[indexes.get(k)] = call.handle((codes, error) -> error != null ? ackAsync(delivery)
                        : codes.get(at) == 1 ? CompletableFuture.completedFuture(true)
                                : afterExtension(delivery, token, () -> ackAsync(delivery), false))
                        .thenCompose(next -> next);
            }
        });
        return CompletableFuture.allOf(each).thenApply(v -> {
            boolean[] acked = new boolean[each.length];
            for (int i = 0; i < each.length; i++) {
                acked[i] = each[i].join();
            }
            return acked;
        });
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
        T payload;
        try {
            payload = codec.decode(delivery.body(), payloadType);
        }
        catch (RuntimeException ex) {
            return unreadable(delivery, payloadType, ex);
        }
        try {
            handler.handle(payload, delivery);
            return Outcome.OK;
        }
        catch (Exception | Error ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return new Outcome(describe(ex), false, ex, decide(delivery, payload, ex));
        }
    }

    private Outcome unreadable(Delivery delivery, Type payloadType, RuntimeException ex) {
        if (ex instanceof RmqPayloadMismatchException mismatch) {
            return new Outcome(truncate(mismatch.reason(delivery.body(), logBodyChars)), true, ex,
                    FailureDecision.dead());
        }
        return new Outcome("unreadable message: cannot convert body to " + payloadType.getTypeName() + ": "
                + (logBodyChars > 0 ? describe(ex) : describeWithoutBody(ex)), true, ex, FailureDecision.dead());
    }

    private FailureDecision decide(Delivery delivery, Object payload, Throwable error) {
        FailurePolicy policy = settings.failures();
        boolean retryable = !policy.nonRetryable(error);
        FailureDecision decision = FailureDecision.standard();
        if (policy.errorHandler() != null) {
            try {
                decision = policy.errorHandler().handle(new FailedMessage(delivery, payload, error,
                        settings.retry().maxRetries(), retryable));
            }
            catch (RuntimeException ex) {
                log.error("The error handler of topic '{}' failed on {}; the standard decision applies", topic.name(),
                        delivery, ex);
            }
            if (decision == null) {
                decision = FailureDecision.standard();
            }
        }
        if (decision.isStandard()) {
            decision = retryable ? FailureDecision.retry() : FailureDecision.dead();
        }
        return decision;
    }

    /**
     * Logs what became of a failed delivery and, when it died and the topic has a dead-letter topic, sends it there.
     * Both containers call this once Redis has recorded the failure.
     */
    public void afterFailure(Delivery delivery, NackOutcome result, Outcome outcome) {
        logFailure(delivery, result, outcome);
        String deadLetterTopic = settings.failures().deadLetterTopic();
        if (result == NackOutcome.DEAD && deadLetterTopic != null && deadLetters != null) {
            try {
                RedisGateway.await(deadLetters.forward(delivery, deadLetterTopic), "sending " + delivery
                        + " to dead-letter topic '" + deadLetterTopic + "'");
                log.info("{} sent on to dead-letter topic '{}'", delivery, deadLetterTopic);
            }
            catch (RuntimeException ex) {
                log.error("{} stays in the dead queue of topic '{}': sending it to dead-letter topic '{}' failed: {}",
                        delivery, topic.name(), deadLetterTopic, describe(ex));
            }
        }
    }

    /**
     * Logs what became of a failed delivery: one line, with the stack trace only where it helps (the last failure;
     * retries show it at DEBUG).
     */
    static void logFailure(Delivery delivery, NackOutcome result, Outcome outcome) {
        Throwable ex = outcome.error();
        switch (result) {
            case RETRY -> log.warn("{} failed; {}: {}", delivery, outcome.decision() == FailureDecision.retry()
                    ? "retrying after its backoff" : outcome.decision(), outcome.reason(), log.isDebugEnabled() ? ex : null);
            case DEAD -> {
                if (outcome.unreadable()) {
                    log.error("{} moved to the dead queue: {}", delivery, outcome.reason());
                }
                else if (outcome.decision() == FailureDecision.dead()) {
                    log.error("{} failed and will not be retried (non-retryable, or the error handler said so);"
                            + " moved to the dead queue: {}", delivery, outcome.reason(), log.isDebugEnabled() ? ex : null);
                }
                else {
                    log.error("{} failed for the last time; moved to the dead queue", delivery, ex);
                }
            }
            case DROPPED -> log.warn("{} failed and was dropped (cancelled while in flight, or the error handler said"
                    + " so): {}", delivery, outcome.reason());
            case FENCED -> log.warn("{} failed after its lease had expired; its redelivery decides its fate: {}",
                    delivery, outcome.reason());
        }
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
     * Settles what an ordered slot's owner handled (acks in order, at most one failure: the head it stopped at) and,
     * with {@code batch > 0}, takes the slot's next messages (see orderly_next.lua). Fenced by {@code epoch}.
     */
    public CompletableFuture<OrderedStep> orderedStep(int slot, long epoch, int batch, List<Delivery> acked,
            @Nullable Delivery failed, @Nullable String reason, @Nullable FailureDecision decision) {
        SlotKeys keys = slots[slot];
        List<byte[]> ackedBodies = bodies(acked);
        return redis.orderlyNext(keys, epoch, priority, batch, settings.retry(), ackedBodies,
                failed == null ? null : failed.body(), failed == null ? null : truncate(reason),
                failed == null ? "" : FailureDecision.actionOf(decision), readContexts)
                .thenApply(step -> {
                    List<Delivery> deliveries = new ArrayList<>(step.messages().size());
                    long received = !instrumented || step.messages().isEmpty() ? 0 : System.nanoTime();
                    for (Popped popped : step.messages()) {
                        deliveries.add(new Delivery(keys, popped.member(), popped.score(), popped.attempt(), epoch,
                                false, logBodyChars, step.redisNow(), received, popped.context()));
                    }
                    return new OrderedStep(step.fenced(), step.suspended(), step.nextDue(),
                            failed == null ? NackOutcome.FENCED : NackOutcome.of(step.failedOutcome()),
                            step.redisNow(), deliveries);
                });
    }

    /** Claims (or, with the epoch held, renews) ownership of an ordered slot for {@code ownershipMillis}. */
    public CompletableFuture<RmqRedis.Claim> claim(int slot, String instanceId, long heldEpoch, long ownershipMillis,
            long decidedEpoch) {
        return redis.claim(slots[slot], instanceId, heldEpoch, ownershipMillis, decidedEpoch, priority,
                settings.retry().maxRetries());
    }

    /** This consumer's handle on the topic's cluster-wide rate limit. */
    public TopicRateLimiter rateLimiter(io.rmq.core.RateLimit limit) {
        return new TopicRateLimiter(redis, topic.name(), limit);
    }

    /** Gives ownership of an ordered slot up; false when this instance no longer held it. */
    public CompletableFuture<Boolean> releaseOwnership(int slot, String instanceId, long epoch) {
        return redis.releaseOwnership(slots[slot], instanceId, epoch, priority);
    }

    /**
     * Nacks or dead-letters, retrying when a lease extension changed the token while the call was under way (waiting
     * for an extension still under way to store its new token first).
     */
    private static boolean settle(Delivery delivery, java.util.function.Predicate<Delivery> call) {
        while (true) {
            long token = delivery.token();
            if (call.test(delivery)) {
                return true;
            }
            delivery.extension().exceptionally(ex -> null).join();
            if (delivery.token() == token) {
                return false;
            }
        }
    }

    /**
     * After Redis fenced an ack sent with {@code token}: retries when a lease extension has changed the token
     * meanwhile (waiting for an extension still under way to store its token first), else gives {@code fenced}.
     */
    private static <R> CompletableFuture<R> afterExtension(Delivery delivery, long token,
            java.util.function.Supplier<CompletableFuture<R>> retry, R fenced) {
        return delivery.extension().handle((v, ex) -> null).thenCompose(v -> delivery.token() != token
                ? retry.get()
                : CompletableFuture.completedFuture(fenced));
    }

    // ---------------------------------------------------------------- helpers

    private <R> CompletableFuture<Map<SlotKeys, R>> perSlot(List<Delivery> deliveries,
            BiFunction<SlotKeys, List<Delivery>, CompletableFuture<R>> call) {
        Map<SlotKeys, List<Delivery>> bySlot = new LinkedHashMap<>();
        for (Delivery delivery : deliveries) {
            bySlot.computeIfAbsent(delivery.slotKeys(), s -> new ArrayList<>()).add(delivery);
        }
        Map<SlotKeys, CompletableFuture<R>> calls = new LinkedHashMap<>();
        bySlot.forEach((slot, group) -> calls.put(slot, call.apply(slot, group)));
        return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<SlotKeys, R> out = new LinkedHashMap<>();
            calls.forEach((slot, future) -> out.put(slot, future.join()));
            return out;
        });
    }

    private static List<byte[]> bodies(List<Delivery> group) {
        List<byte[]> out = new ArrayList<>(group.size());
        for (Delivery d : group) {
            out.add(d.body());
        }
        return out;
    }

    private static List<Long> tokens(List<Delivery> group) {
        List<Long> out = new ArrayList<>(group.size());
        for (Delivery d : group) {
            out.add(d.token());
        }
        return out;
    }

    /** Error text kept with a failed message: exception class and message, and its causes. */
    public static String describe(Throwable error) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = error; t != null && text.length() < MAX_REASON_CHARS; t = t.getCause()) {
            if (!text.isEmpty()) {
                text.append("; caused by ");
            }
            text.append(t.getClass().getName());
            if (t.getMessage() != null) {
                text.append(": ").append(t.getMessage());
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return truncate(text.toString());
    }

    /**
     * Why a body could not be read, without quoting the body: a parser's message quotes the offending content
     * (Jackson: "Unrecognized token 'SECRET…'", "from String \"…\"", "Numeric value (…)"), so only the description
     * before the first quote or parenthesis is kept, with the position where reading stopped. Used for the log line
     * and for the reason kept in the dead queue unless bodies may be logged ({@code logBodyChars > 0}).
     */
    static String describeWithoutBody(Throwable error) {
        StringBuilder text = new StringBuilder(error.getClass().getName());
        String message = error instanceof JacksonException jackson ? jackson.getOriginalMessage() : error.getMessage();
        if (message != null) {
            int cut = message.length();
            for (char c : new char[] {'\'', '"', '(', '[', '\n'}) {
                int at = message.indexOf(c);
                if (at >= 0) {
                    cut = Math.min(cut, at);
                }
            }
            String kept = message.substring(0, cut).strip();
            text.append(": ").append(kept.isEmpty() ? "(details not shown)" : kept);
            if (cut < message.length()) {
                text.append(" (details not shown: they quote the body; rmq.log-bodies shows them)");
            }
        }
        if (error instanceof JacksonException jackson && jackson.getLocation() != null
                && jackson.getLocation().getLineNr() > 0) {
            text.append(" at line ").append(jackson.getLocation().getLineNr()).append(", column ")
                    .append(jackson.getLocation().getColumnNr());
        }
        return truncate(text.toString());
    }

    private static String truncate(String reason) {
        String text = reason == null ? "(no reason given)" : reason;
        return text.length() > MAX_REASON_CHARS ? text.substring(0, MAX_REASON_CHARS) + "..." : text;
    }
}
