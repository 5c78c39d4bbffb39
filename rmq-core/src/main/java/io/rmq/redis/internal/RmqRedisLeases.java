package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.RetryPolicy;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import org.jspecify.annotations.Nullable;

import static io.rmq.redis.internal.Replies.ONE;
import static io.rmq.redis.internal.Replies.ZERO;
import static io.rmq.redis.internal.Replies.bytes;
import static io.rmq.redis.internal.Replies.fillRetryArgs;
import static io.rmq.redis.internal.Replies.nonEmpty;
import static io.rmq.redis.internal.Replies.number;
import static io.rmq.redis.internal.Replies.scoreText;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). Used by CONCURRENT listener containers' threads (their
 * loop, handler and lease-keeping threads) and Lettuce's event-loop threads (completions run there); stateless beyond
 * what it is made with, so thread-safe. Made once by {@link RmqRedis} ({@link RmqRedis#leases()}).
 * <p>
 * The consumer's side of two-phase consumption: popping due messages into leases (pop.lua, with the sweep of expired
 * leases it does first and the trace records it leaves to the consumer), and settling those leases: ack, nack,
 * release, extend, sweep, each fenced by the lease token a delivery holds; plus the idle listener's check of which
 * slots hold anything. Invariant: a token is a prepare score in {@link #TOKEN_UNITS}, unique to its pop or extension,
 * and every settling call names the token it holds. What the scripts trim and expire is told to the {@link SlotReports}.
 */
public final class RmqRedisLeases {

    /** Expired leases a pop sweeps before it pops. */
    private static final int SWEEP_PER_POP = 100;

    private final RedisGateway gateway;
    private final SlotReports reports;
    private final FoldedExists folded;

    RmqRedisLeases(RedisGateway gateway, SlotReports reports) {
        this.gateway = gateway;
        this.reports = reports;
        this.folded = new FoldedExists(gateway);
    }


    /**
     * @param token    the fencing token of every popped message: its prepare score in 1/1024 ms (see
     *                 {@link #TOKEN_UNITS}), unique to this pop; 0 when nothing was popped
     * @param redisNow Redis's clock when the pop ran (ms)
     * @param nextDue  when the slot next has something due (Redis ms; {@code <=} now means more is due), -1 if empty
     */
    public record PopResult(SlotKeys slot, long token, long redisNow, long nextDue, List<Popped> messages) {
    }

    /**
     * A lease token is a prepare score (lease deadline ms + k/1024, see issue_lease in _common.lua) times this: an
     * exact integer, as the scripts reply it and take it back.
     */
    public static final long TOKEN_UNITS = 1024;

    /**
     * Which of the slots hold anything a consumer could have to act on: per slot, how many of its store, prepare
     * (leases, which may expire) and, for PRIORITY, retry keys exist (0: the slot is empty, nothing can fall due there
     * before something is written to it). An idle listener's periodic check, in plain {@code EXISTS} commands instead
     * of a pop script per slot: on a standalone server one {@code EXISTS} of every slot's keys answers when they are
     * all empty (the usual idle case), and per-slot counts are asked only when it finds something; on a cluster one
     * {@code EXISTS} per slot (a slot's keys share its hash tag, so each goes to the slot's node). On a standalone
     * server the first {@code EXISTS} waits up to {@code foldMillis} for the checks of the engine's other listeners,
     * and one command answers them all ({@link FoldedExists}).
     */
    public CompletableFuture<long[]> occupied(SlotKeys[] slots, boolean priority, long foldMillis) {
        Function<SlotKeys, byte[][]> keysOf = slot -> occupiedKeys(slot, priority);
        if (gateway.isCluster()) {
            return existingPerSlot(slots, keysOf);
        }
        return folded.count(keysOfAll(slots, keysOf), foldMillis).thenCompose(count -> count == 0
                ? CompletableFuture.completedFuture(new long[slots.length]) : existingPerSlot(slots, keysOf));
    }

    /**
     * How many of every slot's {@code keysOf} exist, in one {@code EXISTS}: a standalone server only (a cluster
     * refuses the keys of several slots in one command).
     */
    CompletableFuture<Long> existingInAll(SlotKeys[] slots, Function<SlotKeys, byte[][]> keysOf) {
        return gateway.commands().exists(keysOfAll(slots, keysOf)).toCompletableFuture();
    }

    /** Every slot's {@code keysOf}, in slot order. */
    private static byte[][] keysOfAll(SlotKeys[] slots, Function<SlotKeys, byte[][]> keysOf) {
        List<byte[]> all = new ArrayList<>(slots.length * 4);
        for (SlotKeys slot : slots) {
            all.addAll(List.of(keysOf.apply(slot)));
        }
        return all.toArray(byte[][]::new);
    }

    /**
     * Per slot, how many of its {@code keysOf} exist: one {@code EXISTS} per slot, pipelined (a slot's keys share its
     * hash tag, so each goes to the slot's node).
     */
    CompletableFuture<long[]> existingPerSlot(SlotKeys[] slots, Function<SlotKeys, byte[][]> keysOf) {
        long[] counts = new long[slots.length];
        CompletableFuture<?>[] calls = new CompletableFuture<?>[slots.length];
        for (int i = 0; i < slots.length; i++) {
            int index = i;
            calls[i] = gateway.commands().exists(keysOf.apply(slots[i])).toCompletableFuture()
                    .thenAccept(count -> counts[index] = count);
        }
        return CompletableFuture.allOf(calls).thenApply(done -> counts);
    }

    private static byte[][] occupiedKeys(SlotKeys slot, boolean priority) {
        return priority ? new byte[][] {slot.store(), slot.prepare(), slot.retry()}
                : new byte[][] {slot.store(), slot.prepare()};
    }

    /** Sweeps expired leases of the slot (as {@link #sweep}), then pops (see pop.lua). */
    public CompletableFuture<PopResult> pop(SlotKeys slot, boolean priority, int batch, long leaseMillis,
            RetryPolicy retry) {
        return pop(slot, priority, batch, leaseMillis, retry, false);
    }

    /**
     * As {@link #pop(SlotKeys, boolean, int, long, RetryPolicy)}; every message comes with its envelope (headers, the
     * trace context, an id message's payload), and with {@code withContexts} (propagation on) a body without one with
     * the legacy trace context an engine before envelopes stored beside it.
     */
    public CompletableFuture<PopResult> pop(SlotKeys slot, boolean priority, int batch, long leaseMillis,
            RetryPolicy retry, boolean withContexts) {
        return pop(slot, priority, batch, leaseMillis, retry, withContexts, 0);
    }

    /**
     * As {@link #pop(SlotKeys, boolean, int, long, RetryPolicy, boolean)}; a time-ordered topic with
     * {@code lookAheadMillis} &gt; 0 takes messages due up to that long from now, and the next due hint is that long
     * before the first waiting message's due time (PRIORITY ignores it).
     */
    public CompletableFuture<PopResult> pop(SlotKeys slot, boolean priority, int batch, long leaseMillis,
            RetryPolicy retry, boolean withContexts, long lookAheadMillis) {
        boolean ahead = lookAheadMillis > 0 && !priority;
        // ARGV[13]: this client reads the slot's trace records itself (see readTraceRecords)
        byte[][] args = new byte[13][];
        byte[][] retryArgs = new byte[7][];
        fillRetryArgs(retryArgs, priority, retry);
        args[0] = retryArgs[0];
        args[1] = bytes(batch);
        args[2] = bytes(leaseMillis);
        System.arraycopy(retryArgs, 1, args, 3, 6);
        args[9] = bytes(SWEEP_PER_POP);
        args[10] = withContexts ? ONE : ZERO;
        args[11] = ahead ? bytes(lookAheadMillis) : ZERO;
        args[12] = ONE;
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.POP, ScriptOutputType.MULTI, slot.leasing(),
                args);
        return reply.thenCompose(items -> {
            long flags = (long) number(items.get(3));
            reports.trimmed(slot, flags >> 4);
            int first = 4;
            if ((flags & 8) != 0) {
                // the slot has messages with an expiry: what this pop found expired comes first
                reports.expired(slot, (long) number(items.get(4)), (long) number(items.get(5)));
                first = 6;
            }
            boolean withAttempts = (flags & 1) != 0;
            boolean contexts = (flags & 2) != 0;
            int step = 2 + (withAttempts ? 1 : 0) + (contexts ? 1 : 0);
            List<Popped> popped = new ArrayList<>((items.size() - first) / step);
            for (int i = first; i + step - 1 < items.size(); i += step) {
                int attempt = withAttempts ? (int) number(items.get(i + 2)) : 1;
                byte[] envelope = contexts ? nonEmpty((byte[]) items.get(i + step - 1)) : null;
                popped.add(new Popped((byte[]) items.get(i), number(items.get(i + 1)), attempt, envelope));
            }
            PopResult result = new PopResult(slot, (long) number(items.get(0)), (long) number(items.get(1)),
                    (long) number(items.get(2)), popped);
            return (flags & 4) != 0 && !popped.isEmpty() ? readTraceRecords(result)
                    : CompletableFuture.completedFuture(result);
        });
    }

    /**
     * The trace records of the popped bodies that came without an envelope, read with one native {@code HMGET}
     * (pop.lua leaves them to the consumer: the record's field is a digest of the body, which Java computes for a
     * fraction of what Lua pays). A record whose check does not match is another body's: none. Each body's field
     * goes with it to the ack, which forgets the record by it; a body found without one goes with
     * {@link EnvelopeKeys#NOTHING_STORED}, so that the ack looks nothing up for it. When the read fails the pop's
     * deliveries go on without their trace contexts.
     */
    private CompletableFuture<PopResult> readTraceRecords(PopResult result) {
        List<Popped> popped = result.messages();
        List<byte[]> fields = new ArrayList<>(popped.size());
        List<byte[]> digests = new ArrayList<>(popped.size());
        int[] at = new int[popped.size()];
        int count = 0;
        for (int i = 0; i < popped.size(); i++) {
            Popped p = popped.get(i);
            if (p.envelope() == null && !EnvelopeKeys.isIdMember(p.member())) {
                byte[] digest = EnvelopeKeys.sha1(p.member());
                digests.add(digest);
                fields.add(EnvelopeKeys.traceField(digest));
                at[count++] = i;
            }
        }
        if (count == 0) {
            return CompletableFuture.completedFuture(result);
        }
        int found = count;
        // the messages are leased already: a failed read costs their trace links (the ack then names no fields and
        // the script derives them), never the deliveries
        return gateway.commands().hmget(result.slot().trace(), fields.toArray(byte[][]::new)).toCompletableFuture()
                .handle((values, error) -> {
            if (error != null) {
                return result;
            }
            List<Popped> out = new ArrayList<>(popped);
            for (int k = 0; k < found; k++) {
                Popped p = popped.get(at[k]);
                byte[] envelope = EnvelopeKeys.fromTraceRecordOf(digests.get(k), values.get(k).getValueOrElse(null));
                out.set(at[k], new Popped(p.member(), p.score(), p.attempt(), envelope,
                        envelope == null ? EnvelopeKeys.NOTHING_STORED : EnvelopeKeys.keyOf(digests.get(k))));
            }
            return new PopResult(result.slot(), result.token(), result.redisNow(), result.nextDue(), out);
        });
    }

    /**
     * Returns 1 (acked) or 0 (fenced) per member. Consecutive members with the same token share one run.
     *
     * @param tokens per member, the token its delivery holds (in {@link #TOKEN_UNITS})
     */
    public CompletableFuture<List<Long>> ack(SlotKeys slot, boolean priority, List<byte[]> members, List<Long> tokens) {
        return ack(slot, priority, members, tokens, null);
    }

    /**
     * As above, naming each member's envelope key ({@link EnvelopeKeys#of}; empty for an id, or none;
     * {@link EnvelopeKeys#NOTHING_STORED} for a body read with nothing beside it), so that the script forgets its
     * envelope and trace record without a digest per member; {@code envelopeKeys} null: none named.
     */
    public CompletableFuture<List<Long>> ack(SlotKeys slot, boolean priority, List<byte[]> members, List<Long> tokens,
            @Nullable List<byte[]> envelopeKeys) {
        List<byte[]> args = new ArrayList<>(members.size() * (envelopeKeys == null ? 1 : 2) + 5);
        args.add(envelopeKeys == null ? (priority ? ONE : ZERO)
                : bytes((priority ? "1" : "0") + envelopeKeys.size()));
        int runStart = -1;
        for (int i = 0; i < members.size(); i++) {
            long token = tokens.get(i);
            if (runStart < 0 || token != tokens.get(i - 1)) {
                if (runStart >= 0) {
                    args.set(runStart + 1, bytes(args.size() - runStart - 2));
                }
                runStart = args.size();
                args.add(bytes(token));
                args.add(null); // the run's length, known when it ends
            }
            args.add(members.get(i));
        }
        if (runStart >= 0) {
            args.set(runStart + 1, bytes(args.size() - runStart - 2));
        }
        if (envelopeKeys != null) {
            args.addAll(envelopeKeys);
        }
        CompletableFuture<byte[]> flags = gateway.eval(RmqScript.ACK, ScriptOutputType.VALUE, slot.leasing(),
                args.toArray(byte[][]::new));
        return flags.thenApply(Replies::digits);
    }

    /**
     * Returns per member 0 (fenced), 1 (retry scheduled), 2 (dead) or 3 (dropped). The retry policy's dead-letter
     * retention applies to the slot as it is (the caller gives each slot's share of the count bound).
     *
     * @param actions per member: '' the retry policy, 'd' dead at once, 'x' drop, or ms until the retry
     */
    public CompletableFuture<List<Long>> nack(SlotKeys slot, boolean priority, RetryPolicy retry, List<byte[]> members,
            List<Long> tokens, List<String> reasons, List<String> actions) {
        byte[][] args = new byte[7 + members.size() * 4][];
        fillRetryArgs(args, priority, retry);
        for (int i = 0; i < members.size(); i++) {
            args[7 + 4 * i] = members.get(i);
            args[8 + 4 * i] = bytes(tokens.get(i));
            args[9 + 4 * i] = bytes(reasons.get(i));
            args[10 + 4 * i] = bytes(actions.get(i));
        }
        CompletableFuture<List<Long>> reply = gateway.eval(RmqScript.NACK, ScriptOutputType.MULTI, slot.leasing(),
                args);
        return reply.thenApply(out -> {
            // the script's last element: what the retention trimmed
            reports.trimmed(slot, out.get(out.size() - 1));
            return out.subList(0, out.size() - 1);
        });
    }

    /** Returns deliveries to store without counting an attempt (see release.lua); returns how many moved. */
    public CompletableFuture<Long> release(SlotKeys slot, boolean priority, List<byte[]> members, List<Long> tokens,
            List<Double> scores) {
        byte[][] args = new byte[1 + members.size() * 3][];
        args[0] = priority ? ONE : ZERO;
        for (int i = 0; i < members.size(); i++) {
            args[1 + 3 * i] = members.get(i);
            args[2 + 3 * i] = bytes(tokens.get(i));
            args[3 + 3 * i] = bytes(scoreText(scores.get(i)));
        }
        return gateway.eval(RmqScript.RELEASE, ScriptOutputType.INTEGER, slot.leasing(), args);
    }

    /** Returns per member the new token (in {@link #TOKEN_UNITS}: it fences the old one), or 0 when fenced. */
    public CompletableFuture<List<Long>> extend(SlotKeys slot, long leaseMillis, List<byte[]> members, List<Long> tokens) {
        byte[][] args = new byte[1 + members.size() * 2][];
        args[0] = bytes(leaseMillis);
        for (int i = 0; i < members.size(); i++) {
            args[1 + 2 * i] = members.get(i);
            args[2 + 2 * i] = bytes(tokens.get(i));
        }
        return gateway.eval(RmqScript.EXTEND, ScriptOutputType.MULTI, slot.leasing(), args);
    }

    /** Moves expired leases back as failed attempts. Returns {retried, dead}. */
    public CompletableFuture<long[]> sweep(SlotKeys slot, boolean priority, RetryPolicy retry, int limit) {
        byte[][] args = new byte[8][];
        fillRetryArgs(args, priority, retry);
        args[7] = bytes(limit);
        CompletableFuture<List<Long>> reply = gateway.eval(RmqScript.SWEEP, ScriptOutputType.MULTI, slot.leasing(), args);
        return reply.thenApply(r -> {
            reports.trimmed(slot, r.get(2));
            return new long[] {r.get(0), r.get(1)};
        });
    }
}
