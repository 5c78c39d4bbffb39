package io.rmq.consumer.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.DeadLetterForwarder;
import io.rmq.consumer.DeadLetterStory;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.SlotConsumer.Outcome;
import io.rmq.core.DeadLetterRetention;
import io.rmq.core.RetryPolicy;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.internal.Timeouts;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.observe.RmqInstrumentation.HandleScope;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisLeases;
import io.rmq.redis.internal.SlotBatcher;
import org.jspecify.annotations.Nullable;

/**
 * Writes what became of leased deliveries: acks (batched per slot), failures (nack or dead, then the log line and the
 * dead-letter forward), releases and lease extensions, each fenced by the delivery's token and sent again when a
 * lease extension changed that token meanwhile. Not API: {@link RmqConsumer}'s part. Called on the handler threads
 * (a container's workers, the caller of {@code RmqConsumer.handle}); its callbacks and futures complete on Lettuce's
 * event loop and {@link Timeouts}' timer. Thread-safe: its only mutable state is the ack batcher's, which is.
 */
final class Settlement {

    /** Under RmqConsumer's name: that is the logger users configure and the README names. */
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqConsumer.class);

    /** Wait before the first retry of an ack that failed; it doubles with every further failure. */
    private static final long FIRST_ACK_RETRY_MILLIS = 100;

    private final RmqRedisLeases leases;
    private final TopicDefinition topic;
    private final ConsumerSettings settings;
    private final boolean priority;
    /** The retry policy as the slots' scripts apply it ({@link #perSlot}). */
    private final RetryPolicy slotRetry;
    /** Acks to a slot that arrive while one is under way go out together. */
    private final SlotBatcher<Delivery, Long> acks;
    /** Sends the bodies of messages that died here to the dead-letter topic, if one is set. */
    private final @Nullable DeadLetterForwarder deadLetters;
    private final RmqInstrumentation instrumentation;
    /**
     * False for an instrumentation that is not {@link RmqInstrumentation#timed()} (NONE among them): no clock reads,
     * no operation reports (outcomes still reach the handle scopes).
     */
    private final boolean timed;

    Settlement(RmqRedisLeases leases, TopicDefinition topic, ConsumerSettings settings,
            @Nullable DeadLetterForwarder deadLetters, RmqInstrumentation instrumentation) {
        this.leases = leases;
        this.topic = topic;
        this.settings = settings;
        this.priority = topic.type() == TopicType.PRIORITY;
        this.slotRetry = perSlot(settings.retry(), topic.slotAmount());
        this.deadLetters = deadLetters;
        this.instrumentation = instrumentation;
        this.timed = instrumentation.timed(); // NONE is not timed
        this.acks = new SlotBatcher<>(1000, RedisGateway.CALL_TIMEOUT_MILLIS,
                (slot, group) -> timed("ack", leases.ack(slot, priority, bodies(group), tokens(group), envelopeKeys(group))));
    }

    /**
     * Reports one Redis call ({@code operation} ack, nack, extend) when it ends; untimed, the call as it is
     * (the clock read at the start is the caller's: {@code System.nanoTime()} only when timed).
     */
    private <R> CompletableFuture<R> timed(String operation, CompletableFuture<R> call) {
        if (!timed) {
            return call;
        }
        long started = System.nanoTime();
        return call.whenComplete((r, error) -> instrumentation.operation(operation, topic.name(),
                System.nanoTime() - started, RedisGateway.unwrap(error)));
    }

    // ---------------------------------------------------------------- one handled delivery

    /**
     * Settles a delivery {@link DeliveryHandler} handled (see {@code SlotConsumer.handle} with {@code whenSettled}):
     * fails it (on this thread) or acks it (batched; {@code whenSettled} then runs on the thread that ends the ack).
     */
    void settle(Delivery delivery, Outcome outcome, HandleScope scope, Consumer<@Nullable Throwable> whenSettled) {
        if (outcome.failed()) {
            NackOutcome[] result = {NackOutcome.FENCED};
            retryFenced(delivery, d -> (result[0] = fail(d, outcome.reason(), outcome.decision()))
                    != NackOutcome.FENCED);
            afterFailure(delivery, result[0], outcome);
            // after its log line (and a dead-letter forward): whoever sees the count sees the line written
            scope.settled(SlotConsumer.outcomeOf(result[0]));
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

    // ---------------------------------------------------------------- a handled batch

    /**
     * Settles a batch {@link DeliveryHandler#invokeBatch} handled: the acks go out first (asynchronously, one call
     * per slot), the failures meanwhile, pipelined, then are waited for one by one on this thread. Completes when
     * the acks are written.
     */
    CompletableFuture<Void> settleBatch(List<Delivery> deliveries, Outcome[] outcomes, List<HandleScope> scopes) {
        int size = deliveries.size();
        List<Delivery> handled = new ArrayList<>(size);
        List<HandleScope> handledScopes = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            if (!outcomes[i].failed()) {
                handled.add(deliveries.get(i));
                handledScopes.add(scopes.get(i));
            }
        }
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
                    DefaultDelivery.of(delivery).extension().exceptionally(ex -> null).join();
                    if (delivery.token() != sentTokens.get(k)) {
                        retryFenced(delivery, d -> (result[0] = fail(d, outcome.reason(), outcome.decision()))
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
            scopes.get(i).settled(SlotConsumer.outcomeOf(result[0]));
        }
        return acked;
    }

    // ---------------------------------------------------------------- acks

    CompletableFuture<Integer> ackAllAsync(List<Delivery> deliveries) {
        return perSlot(deliveries, (slot, group) -> timed("ack", leases.ack(slot, priority, bodies(group), tokens(group), envelopeKeys(group))))
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

    /** See {@link RmqConsumer#ackAsync(Delivery)}. */
    CompletableFuture<Boolean> ackAsync(Delivery delivery) {
        return ackAsync(delivery, System.currentTimeMillis(), FIRST_ACK_RETRY_MILLIS);
    }

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
        acks.submit(DefaultDelivery.of(delivery).slotKeys(), delivery).whenComplete((code, error) -> {
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

    /**
     * Acknowledges many deliveries at once: one pipelined call per slot, each delivery fenced by its token. A delivery
     * Redis refused because a lease extension changed its token meanwhile, or whose call failed, is acked again on
     * its own ({@link #ackAsync(Delivery)}: retried, backing off). Completes with, per delivery, whether it was
     * acked (false: its lease had ended).
     */
    CompletableFuture<boolean[]> ackBatchAsync(List<Delivery> deliveries) {
        Map<SlotKeys, List<Integer>> bySlot = new LinkedHashMap<>();
        for (int i = 0; i < deliveries.size(); i++) {
            SlotKeys keys = DefaultDelivery.of(deliveries.get(i)).slotKeys();
            bySlot.computeIfAbsent(keys, s -> new ArrayList<>()).add(i);
        }
        @SuppressWarnings("unchecked")
        CompletableFuture<Boolean>[] each = new CompletableFuture[deliveries.size()];
        bySlot.forEach((slot, indexes) -> {
            List<Delivery> group = new ArrayList<>(indexes.size());
            indexes.forEach(i -> group.add(deliveries.get(i)));
            List<Long> sentTokens = tokens(group);
            CompletableFuture<List<Long>> call;
            try {
                call = timed("ack", leases.ack(slot, priority, bodies(group), sentTokens, envelopeKeys(group)));
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

    // ---------------------------------------------------------------- failures

    NackOutcome fail(Delivery delivery, String reason, @Nullable FailureDecision decision) {
        return RedisGateway.await(failAsync(delivery, reason, decision), "failing a delivery on topic '" + topic.name() + "'");
    }

    CompletableFuture<NackOutcome> failAsync(Delivery delivery, String reason, FailureDecision decision) {
        SlotKeys keys = DefaultDelivery.of(delivery).slotKeys();
        return timed("nack", leases.nack(keys, priority, slotRetry, List.of(delivery.member()),
                List.of(delivery.token()), List.of(Reasons.truncate(reason)),
                List.of(Settlement.actionOf(decision)))).thenApply(codes -> Settlement.nackOutcome(codes.get(0)));
    }

    /** See {@link SlotConsumer#afterFailure}. */
    void afterFailure(Delivery delivery, NackOutcome result, Outcome outcome) {
        logFailure(delivery, result, outcome);
        String deadLetterTopic = settings.failures().deadLetterTopic();
        if (result == NackOutcome.DEAD && deadLetterTopic != null && deadLetters != null) {
            try {
                RedisGateway.await(deadLetters.forward(delivery, deadLetterTopic, storyOf(delivery, outcome)),
                        "sending " + delivery + " to dead-letter topic '" + deadLetterTopic + "'");
                log.info("{} sent on to dead-letter topic '{}'", delivery, deadLetterTopic);
            }
            catch (RuntimeException ex) {
                log.error("{} stays in the dead queue of topic '{}': sending it to dead-letter topic '{}' failed: {}",
                        delivery, topic.name(), deadLetterTopic, Reasons.describe(ex));
            }
        }
    }

    private static DeadLetterStory storyOf(Delivery delivery, Outcome outcome) {
        Throwable error = outcome.error();
        Throwable root = error;
        while (root != null && root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        // Redis's clock, as every due time (estimated from the pop: no call to Redis; the engine's forwarder tells the
        // dead queue's died-at instead)
        return new DeadLetterStory(root == null ? null : root.getClass().getName(), outcome.reason(), delivery.attempt(),
                DefaultDelivery.of(delivery).redisNowEstimate());
    }

    /**
     * Logs what became of a failed delivery: one line, with the stack trace only where it helps (the last failure;
     * retries show it at DEBUG).
     */
    private static void logFailure(Delivery delivery, NackOutcome result, Outcome outcome) {
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

    // ---------------------------------------------------------------- releases and extensions

    /** See {@link RmqConsumer#releaseAsync}. */
    CompletableFuture<Integer> releaseAsync(List<Delivery> deliveries) {
        // a lease extension under way changes the tokens: releasing with the old ones would be fenced and leave the
        // deliveries leased until they expire (seen at a container's stop with a short lease); extensions are bounded
        CompletableFuture<?>[] extensions = new CompletableFuture<?>[deliveries.size()];
        for (int i = 0; i < extensions.length; i++) {
            extensions[i] = DefaultDelivery.of(deliveries.get(i)).extension().exceptionally(ex -> null);
        }
        return CompletableFuture.allOf(extensions).thenCompose(v -> releaseNow(deliveries));
    }

    private CompletableFuture<Integer> releaseNow(List<Delivery> deliveries) {
        return perSlot(deliveries, (slot, group) -> {
            List<Double> scores = new ArrayList<>(group.size());
            for (Delivery d : group) {
                scores.add(d.score());
            }
            return leases.release(slot, priority, bodies(group), tokens(group), scores);
        }).thenApply(results -> results.values().stream().mapToInt(Long::intValue).sum());
    }

    /** See {@link RmqConsumer#extendAllAsync}. */
    CompletableFuture<Integer> extendAllAsync(List<Delivery> deliveries) {
        long leaseMillis = settings.lease().toMillis();
        CompletableFuture<Void> applied = new CompletableFuture<>();
        for (Delivery delivery : deliveries) {
            DefaultDelivery.of(delivery).extensionUnderWay(applied);
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
        return perSlot(deliveries, (slot, group) -> timed("extend", leases.extend(slot, leaseMillis, bodies(group),
                tokens(group))).thenApply(tokens -> {
                    int extended = 0;
                    for (int i = 0; i < group.size(); i++) {
                        if (tokens.get(i) > 0) {
                            DefaultDelivery.of(group.get(i)).leaseExtendedTo(tokens.get(i));
                            extended++;
                        }
                    }
                    return List.of((long) extended);
                })).thenApply(results -> results.values().stream().mapToInt(r -> r.get(0).intValue()).sum());
    }

    // ---------------------------------------------------------------- fencing

    /**
     * Nacks or dead-letters, retrying when a lease extension changed the token while the call was under way (waiting
     * for an extension still under way to store its new token first).
     */
    private static boolean retryFenced(Delivery delivery, Predicate<Delivery> call) {
        while (true) {
            long token = delivery.token();
            if (call.test(delivery)) {
                return true;
            }
            DefaultDelivery.of(delivery).extension().exceptionally(ex -> null).join();
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
            Supplier<CompletableFuture<R>> retry, R fenced) {
        return DefaultDelivery.of(delivery).extension().handle((v, ex) -> null).thenCompose(v -> delivery.token() != token
                ? retry.get()
                : CompletableFuture.completedFuture(fenced));
    }

    // ---------------------------------------------------------------- helpers

    private <R> CompletableFuture<Map<SlotKeys, R>> perSlot(List<Delivery> deliveries,
            BiFunction<SlotKeys, List<Delivery>, CompletableFuture<R>> call) {
        Map<SlotKeys, List<Delivery>> bySlot = new LinkedHashMap<>();
        for (Delivery delivery : deliveries) {
            bySlot.computeIfAbsent(DefaultDelivery.of(delivery).slotKeys(), s -> new ArrayList<>()).add(delivery);
        }
        Map<SlotKeys, CompletableFuture<R>> calls = new LinkedHashMap<>();
        bySlot.forEach((slot, group) -> calls.put(slot, call.apply(slot, group)));
        return CompletableFuture.allOf(calls.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<SlotKeys, R> out = new LinkedHashMap<>();
            calls.forEach((slot, future) -> out.put(slot, future.join()));
            return out;
        });
    }

    static List<byte[]> bodies(List<Delivery> group) {
        List<byte[]> out = new ArrayList<>(group.size());
        for (Delivery d : group) {
            out.add(d.member());
        }
        return out;
    }

    /**
     * The envelope keys of the bodies of {@code group} that came with an envelope or a trace record
     * ({@link DefaultDelivery#envelopeKey}), empty for the others; null when none did (then the ack carries none, and
     * Redis derives what it must forget itself).
     */
    static @Nullable List<byte[]> envelopeKeys(List<Delivery> group) {
        List<byte[]> out = null;
        for (int i = 0; i < group.size(); i++) {
            byte[] field = DefaultDelivery.of(group.get(i)).envelopeKey();
            if (field != null && out == null) {
                out = new ArrayList<>(group.size());
                for (int k = 0; k < i; k++) {
                    out.add(NO_FIELD);
                }
            }
            if (out != null) {
                out.add(field == null ? NO_FIELD : field);
            }
        }
        return out;
    }

    private static final byte[] NO_FIELD = new byte[0];

    private static List<Long> tokens(List<Delivery> group) {
        List<Long> out = new ArrayList<>(group.size());
        for (Delivery d : group) {
            out.add(d.token());
        }
        return out;
    }

    /** What became of a failed delivery, from the scripts' code for it. */
    static NackOutcome nackOutcome(long code) {
        return code == 3 ? NackOutcome.DROPPED : code == 2 ? NackOutcome.DEAD : code == 1 ? NackOutcome.RETRY
                : NackOutcome.FENCED;
    }

    /**
     * The scripts' action code for a decision (see fail() in _common.lua): '' the retry policy (also for null and
     * {@link FailureDecision#standard()}, which the consumer resolves before it writes), 'd' dead, 'x' drop, or the
     * delay in ms.
     */
    static String actionOf(@Nullable FailureDecision decision) {
        if (decision == null || decision == FailureDecision.standard() || decision == FailureDecision.retry()) {
            return "";
        }
        if (decision == FailureDecision.dead()) {
            return "d";
        }
        if (decision == FailureDecision.drop()) {
            return "x";
        }
        return Long.toString(java.util.Objects.requireNonNull(decision.retryDelay()).toMillis());
    }

    /**
     * {@code retry} as one of {@code slotAmount} slots applies it: a script sees one slot's dead queue, so each keeps
     * its share of the topic's dead-letter count bound (rounded up); the age bound is the topic's.
     */
    static RetryPolicy perSlot(RetryPolicy retry, int slotAmount) {
        DeadLetterRetention retention = retry.deadLetters();
        return retry.withDeadLetters(
                new DeadLetterRetention(retention.maxCountPerSlot(slotAmount), retention.maxAge(),
                        retention.keepExpired()));
    }
}
