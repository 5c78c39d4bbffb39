package io.rmq.consumer;

import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.TopicDefinition;
import org.jspecify.annotations.Nullable;

/**
 * Two-phase consumption of one topic: {@link #poll()} leases due messages; each then ends in {@link #ack},
 * {@link #nack} (retry after backoff, or dead past max retries) or lease expiry (found by {@link #sweep()}).
 * Calls for many slots are pipelined. Get one from {@link io.rmq.Rmq#consumer}; listener containers drive one of
 * their own. Thread-safe; no threads of its own.
 */
public interface RmqConsumer {

    /** The slot numbers of the topic, 0 to slotAmount - 1. */
    int[] allSlots();

    /** The topic this consumer takes from. */
    TopicDefinition topic();

    /** What it was made with: batch size, lease, retries, failure policy. */
    ConsumerSettings settings();

    /** Leases up to {@code batchSize} due messages from every slot of the topic. */
    PollResult poll();

    /**
     * Leases up to {@code batchPerSlot} due messages from each of the given slots, one pipelined script call per
     * slot.
     */
    CompletableFuture<PollResult> pollAsync(int[] slotNumbers, int batchPerSlot);

    /** Acknowledges one delivery; false when the lease was no longer held (nothing was removed). */
    boolean ack(Delivery delivery);

    /** Acknowledges many deliveries, one pipelined call per slot; returns how many were still held and removed. */
    int ackAll(List<Delivery> deliveries);

    /** As {@link #ackAll}; the future completes with how many were still held and removed. */
    CompletableFuture<Integer> ackAllAsync(List<Delivery> deliveries);

    /**
     * Acknowledges one delivery, batched with other acks to the same slot that are under way; true when acked, false
     * when the lease was no longer held. Retries when a lease extension changed the token meanwhile, and, backing
     * off for up to half the lease, when the call failed (an ack is fenced by its token: a repeated one settles
     * nothing else).
     */
    CompletableFuture<Boolean> ackAsync(Delivery delivery);

    /** Fails one attempt: retried after its backoff, or dead past max retries. */
    NackOutcome nack(Delivery delivery, Throwable error);

    /** As {@link #nack(Delivery, Throwable)}, with the reason kept with the message. */
    NackOutcome nack(Delivery delivery, String reason);

    /** Sends a delivery straight to the dead queue (e.g. its body cannot be read, so retrying cannot help). */
    NackOutcome deadLetter(Delivery delivery, String reason);

    /** Fails one attempt with an explicit decision ({@link FailureDecision#standard()} counts as {@code retry()}). */
    NackOutcome fail(Delivery delivery, String reason, @Nullable FailureDecision decision);

    /** As {@link #fail}; the future completes once Redis recorded the failure. */
    CompletableFuture<NackOutcome> failAsync(Delivery delivery, String reason, FailureDecision decision);

    /**
     * Returns deliveries that were fetched but will not be handled (shutdown) to the store at once, with the score
     * they were popped with; no attempt is counted. Returns how many were still held and moved.
     */
    int release(List<Delivery> deliveries);

    /** As {@link #release}. */
    CompletableFuture<Integer> releaseAsync(List<Delivery> deliveries);

    /** Extends the lease of a delivery still being handled; false when it was no longer held. */
    boolean extend(Delivery delivery);

    /** Extends many leases, pipelined per slot; each held delivery gets its new token (a later deadline). */
    int extendAll(List<Delivery> deliveries);

    /** As {@link #extendAll}. */
    CompletableFuture<Integer> extendAllAsync(List<Delivery> deliveries);

    /**
     * Moves every expired lease of the topic back as a failed attempt (or to dead past max retries). Safe to call
     * from any number of consumers at once.
     *
     * @return {retried, dead}
     */
    long[] sweep();

    /** As {@link #sweep}, for the given slots only. */
    CompletableFuture<long[]> sweepAsync(int[] slotNumbers);

    /**
     * Polls once and handles every delivery on the calling thread: converts the body to {@code payloadType}
     * (unreadable → dead queue with the reason), calls the handler, then acks (normal return) or nacks (exception).
     *
     * @return how many deliveries were handled (whatever their outcome)
     */
    <T> int pollAndHandle(Class<T> payloadType, MessageHandler<T> handler);

    /** As {@link #pollAndHandle(Class, MessageHandler)}, for generic payload types such as {@code List<Order>}. */
    <T> int pollAndHandle(Type payloadType, MessageHandler<T> handler);

    /** Converts, handles and settles one delivery (see {@link #pollAndHandle}). */
    <T> void handle(Delivery delivery, Type payloadType, MessageHandler<T> handler);
}
