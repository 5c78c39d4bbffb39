package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.RetryPolicy;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.redis.internal.MembersBeat;
import io.rmq.redis.internal.Popped;
import org.jspecify.annotations.Nullable;

import static io.rmq.redis.internal.Replies.ONE;
import static io.rmq.redis.internal.Replies.ZERO;
import static io.rmq.redis.internal.Replies.bytes;
import static io.rmq.redis.internal.Replies.fillRetryArgs;
import static io.rmq.redis.internal.Replies.maxRetriesArg;
import static io.rmq.redis.internal.Replies.nonEmpty;
import static io.rmq.redis.internal.Replies.number;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). Used by ORDERLY listener containers' threads (slot
 * ownership and step threads, handler threads that report) and Lettuce's event-loop threads (completions run there);
 * stateless beyond what it is made with, so thread-safe. Made once by {@link RmqRedis} ({@link RmqRedis#orderly()}).
 * <p>
 * Ordered consumption's side of RMQ's Redis access (see _orderly.lua): claiming, renewing and giving up the ownership
 * of an ordered slot (own.lua), and the owner's steps that settle what it handled and hand out what comes next
 * (orderly_next.lua). Invariant: every step and release names the owner's epoch, and the scripts change nothing for
 * an epoch that no longer holds the slot. The membership a leased claim relies on is {@link RmqRedis#members}';
 * what the scripts trim and expire is told to the {@link SlotReports}.
 */
public final class RmqRedisOrderly {

    private final RedisGateway gateway;
    private final SlotReports reports;

    RmqRedisOrderly(RedisGateway gateway, SlotReports reports) {
        this.gateway = gateway;
        this.reports = reports;
    }

    /**
     * The outcome of a claim.
     *
     * @param epoch            the epoch now held (the fencing token), or 0 when the slot is held by another
     * @param retryAfterMillis when not held: ms until the holder's time runs out, or -1 when the coordinator's epoch
     *                         was stale (a newer owner exists), or -2 when an older engine's instance holds it and the
     *                         claim's live list did not cover them
     * @param tookOver         held anew from another instance that had not released it (it died, paused, lost Redis,
     *                         or the coordinator gave the slot to this one over it); false for a renewal, a free slot
     *                         or a refused claim
     */
    public record Claim(long epoch, long retryAfterMillis, boolean tookOver) {

        public Claim(long epoch, long retryAfterMillis) {
            this(epoch, retryAfterMillis, false);
        }

        public boolean held() {
            return epoch > 0;
        }

        /** Refused because an older engine's instance holds the slot and the claim's list did not cover them. */
        public boolean heldByOlderEngine() {
            return epoch == 0 && retryAfterMillis == -2;
        }
    }

    /** Claims or renews a timed ownership of an ordered slot for {@code ttlMillis} (see own.lua). */
    public CompletableFuture<Claim> claim(SlotKeys slot, String instanceId, long heldEpoch, long ttlMillis,
            long decidedEpoch, boolean priority, int maxRetries) {
        return claim(slot, instanceId, heldEpoch, ttlMillis, decidedEpoch, priority,
                new RetryPolicy(maxRetries, io.rmq.core.BackoffPolicy.DEFAULT), null);
    }

    /**
     * Claims ownership of an ordered slot (see own.lua): leased with {@code live} (the membership the claimant's own
     * heartbeat returned; {@code ttlMillis} is then ignored), else timed for {@code ttlMillis}.
     */
    public CompletableFuture<Claim> claim(SlotKeys slot, String instanceId, long heldEpoch, long ttlMillis,
            long decidedEpoch, boolean priority, RetryPolicy retry, @Nullable MembersBeat live) {
        List<String> ids = live == null ? List.of() : live.live();
        byte[][] args = new byte[9 + ids.size()][];
        args[0] = bytes("claim");
        args[1] = bytes(instanceId);
        args[2] = bytes(heldEpoch);
        args[3] = bytes(live == null ? ttlMillis : 0);
        args[4] = bytes(decidedEpoch);
        args[5] = priority ? ONE : ZERO;
        args[6] = maxRetriesArg(retry); // a take-over may bury
        args[7] = bytes(live == null ? 0 : live.redisNow());
        args[8] = live == null || live.coversOlder() ? ONE : ZERO;
        for (int i = 0; i < ids.size(); i++) {
            args[9 + i] = bytes(ids.get(i));
        }
        CompletableFuture<List<Long>> reply = gateway.eval(RmqScript.OWN, ScriptOutputType.MULTI, slot.all(), args);
        return reply.thenApply(r -> {
            if (r.size() > 3) {
                reports.trimmed(slot, r.get(3));
            }
            return new Claim(r.get(0), r.get(1), r.size() > 2 && r.get(2) == 1);
        });
    }

    /**
     * Gives up ownership of an ordered slot (what the owner took and did not settle goes back to store, in order, and
     * the owner key is deleted); false when this instance no longer held it. {@code epoch} 0: whatever epoch this
     * instance holds (a slot whose claim or release had no answer).
     */
    public CompletableFuture<Boolean> releaseOwnership(SlotKeys slot, String instanceId, long epoch,
            boolean priority) {
        CompletableFuture<List<Long>> reply = gateway.eval(RmqScript.OWN, ScriptOutputType.MULTI, slot.all(),
                bytes("release"), bytes(instanceId), bytes(epoch), ZERO, ZERO, priority ? ONE : ZERO, ZERO);
        return reply.thenApply(r -> r.get(0) == 1);
    }

    /**
     * One step of an ordered slot's owner (see orderly_next.lua).
     *
     * @param fenced         the epoch no longer holds the slot (nothing was changed)
     * @param nextDue        Redis ms when the slot next has something to hand out, -1 if nothing waits (or batch 0)
     * @param redisNow       Redis's clock when the step ran (ms)
     * @param suspendedLanes how many lanes of the slot wait for a failed head's retry
     * @param earliestRetry  the soonest of those retry times (Redis ms), -1 if none
     * @param failedOutcomes per failed member reported, in order: 0 not held any more, 1 retry scheduled, 2 dead,
     *                       3 dropped
     * @param messages       the messages handed out, in order (each lane's in its handling order)
     */
    public record OrderlyStep(boolean fenced, long nextDue, long redisNow, int suspendedLanes, long earliestRetry,
            int[] failedOutcomes, List<Popped> messages) {
    }

    /** A failed member an ordered step reports: its reason, and its action ('' retry policy, 'd', 'x' or ms). */
    public record OrderlyFailure(byte[] member, String reason, String action) {
    }

    /**
     * One step of an ordered slot's owner: settles {@code acked}, {@code failures} and {@code returned} (taken, not
     * started) and, with {@code batch > 0}, hands out the next messages; with {@code resync} every held message first
     * (the owner's first step, or after a step whose outcome it did not learn); with {@code serial} (the owner holds
     * messages of the slot's common lane) nothing new. Each message comes with its envelope
     * (or none), and with {@code withContexts} (propagation on) with the legacy trace context of a body that has none.
     */
    public CompletableFuture<OrderlyStep> orderlyNext(SlotKeys slot, long epoch, boolean priority, int batch,
            RetryPolicy retry, boolean resync, boolean serial, List<byte[]> acked, List<OrderlyFailure> failures,
            List<byte[]> returned, boolean withContexts) {
        return orderlyNext(slot, epoch, priority, batch, retry, resync, serial, acked, null, failures, returned,
                withContexts);
    }

    /**
     * As above, naming the envelope key of each acked member ({@link EnvelopeKeys#of}; empty for an id or none), so
     * that the step forgets their envelopes without a digest per member; {@code ackedKeys} null: none named.
     */
    public CompletableFuture<OrderlyStep> orderlyNext(SlotKeys slot, long epoch, boolean priority, int batch,
            RetryPolicy retry, boolean resync, boolean serial, List<byte[]> acked, @Nullable List<byte[]> ackedKeys,
            List<OrderlyFailure> failures, List<byte[]> returned, boolean withContexts) {
        int named = ackedKeys == null ? 0 : ackedKeys.size();
        byte[][] args = new byte[15 + acked.size() + 3 * failures.size() + returned.size() + named][];
        byte[][] retryArgs = new byte[7][];
        fillRetryArgs(retryArgs, priority, retry);
        args[0] = bytes(epoch);
        args[1] = retryArgs[0];
        args[2] = bytes(batch);
        System.arraycopy(retryArgs, 1, args, 3, 6);
        args[9] = withContexts ? ONE : ZERO;
        args[10] = resync ? ONE : ZERO;
        args[11] = serial ? ONE : ZERO;
        int at = 12;
        args[at++] = bytes(acked.size());
        for (byte[] member : acked) {
            args[at++] = member;
        }
        args[at++] = bytes(failures.size());
        for (OrderlyFailure failure : failures) {
            args[at++] = failure.member();
            args[at++] = bytes(failure.reason());
            args[at++] = bytes(failure.action());
        }
        args[at++] = bytes(returned.size());
        for (byte[] member : returned) {
            args[at++] = member;
        }
        if (ackedKeys != null) {
            for (byte[] key : ackedKeys) {
                args[at++] = key;
            }
        }
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.ORDERLY_NEXT, ScriptOutputType.MULTI,
                slot.all(), args);
        return reply.thenApply(items -> {
            long status = (long) number(items.get(0));
            // 1 + 2 when the expiry counts follow the outcomes + 4 x trimmed, or 0 when fenced
            reports.trimmed(slot, status >> 2);
            int f = (int) number(items.get(5));
            int[] outcomes = new int[f];
            for (int k = 0; k < f; k++) {
                outcomes[k] = (int) number(items.get(6 + k));
            }
            int first = 6 + f;
            if ((status & 2) != 0) {
                reports.expired(slot, (long) number(items.get(first)), (long) number(items.get(first + 1)));
                first += 2;
            }
            List<Popped> popped = new ArrayList<>(Math.max(0, (items.size() - first) / 4));
            for (int i = first; i + 3 < items.size(); i += 4) {
                popped.add(new Popped((byte[]) items.get(i), number(items.get(i + 1)), (int) number(items.get(i + 2)),
                        nonEmpty((byte[]) items.get(i + 3))));
            }
            return new OrderlyStep(number(items.get(0)) == 0, (long) number(items.get(1)),
                    (long) number(items.get(2)), (int) number(items.get(3)), (long) number(items.get(4)), outcomes,
                    popped);
        });
    }
}
