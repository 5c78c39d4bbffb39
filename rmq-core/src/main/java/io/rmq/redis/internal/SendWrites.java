package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.ScoredValueListOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.redis.internal.RmqRedis.BatchPart;
import org.jspecify.annotations.Nullable;

import static io.rmq.redis.internal.Replies.ZERO;
import static io.rmq.redis.internal.Replies.bytes;

/**
 * Used by senders' threads and Lettuce's event-loop threads (completions run there); its only state is
 * {@link RedisClock}'s per-slot readings, which are thread-safe.
 * <p>
 * {@link RmqRedis}'s sends of messages without an envelope or with a body's trace context alone (its trace record,
 * one more field in an {@code HSET}) instead of send.lua: the lone send in one small script (send_one.lua), the batch
 * send in native commands; each with the merge rule of its topic type, and the wake-ups they announce to sleeping
 * consumers when they write a slot's first message.
 */
final class SendWrites {

    private static final byte[] NX = bytes("NX");
    private static final byte[] WITHSCORES = bytes("WITHSCORES");
    /** send_one.lua's ARGV[1]: RANGE_MERGE, FIXED_TIME, PRIORITY. */
    private static final byte[] MODE_RANGE = bytes("r");
    private static final byte[] MODE_TIME = bytes("t");
    private static final byte[] MODE_PRIORITY = bytes("p");

    private final RedisGateway gateway;
    private final RedisClock clock;
    /** {@code <prefix>:wake}, where the scripts and {@link #announce} tell sleepers of a new first message. */
    private final byte[] wakeChannel;

    SendWrites(RedisGateway gateway, RedisClock clock, String prefix) {
        this.gateway = gateway;
        this.clock = clock;
        this.wakeChannel = bytes(prefix + ":wake");
    }

    /**
     * One message without an envelope, or with a body's trace context alone (a single synchronous sender's call), in
     * one small script call, send_one.lua: the {@code ZADD} with the type's merge rule ({@code NX} for RANGE_MERGE, due
     * at Redis's own now plus the time range: no clock estimate), the trace record's {@code HSET} before it, and the
     * wake-up decision (the message is the slot's first: {@code PUBLISH} as the other scripts do) in one command and
     * one round trip. The two native commands it replaced ({@code ZADD}, then a {@code ZRANK} from the connection's
     * thread) cost Redis a read, a parse and a reply more per send, and the sender a second command competing with its
     * next send (BENCHMARKS.md / the issue 32 notes measure both).
     *
     * @param traceRecord { field, value } of the body's trace record, or null
     * @return 1 when the message was added, 0 when it merged into a waiting one
     */
    CompletableFuture<Long> sendOne(SlotKeys slot, boolean rangeMerge, boolean priority, byte[] member,
            long parameter, byte @Nullable [][] traceRecord) {
        byte[] mode = rangeMerge ? MODE_RANGE : priority ? MODE_PRIORITY : MODE_TIME;
        if (traceRecord == null) {
            return gateway.eval(RmqScript.SEND_ONE, ScriptOutputType.INTEGER, new byte[][] {slot.store()}, mode,
                    bytes(parameter), member);
        }
        return gateway.eval(RmqScript.SEND_ONE, ScriptOutputType.INTEGER, new byte[][] {slot.store(), slot.trace()},
                mode, bytes(parameter), member, traceRecord[0], traceRecord[1]);
    }

    /**
     * Tells sleeping consumers that the slot has a new first message due at {@code due} (Redis ms), as the scripts'
     * {@code PUBLISH <prefix>:wake "<store key>|<due>"} does; not waited for (a lost announcement delays sleepers
     * until their next check, {@code max-idle}).
     */
    private void announce(SlotKeys slot, long due) {
        gateway.dispatchAll(List.of(publish(wakeUp(slot, bytes(due)))));
    }

    /**
     * Writes each part into its slot with a native multi-member ZADD (a script pays per argument: about twice the
     * Redis time per message, and ~10-20 µs per call), all parts' commands written to the connection in one go. Merge
     * rules as send.lua: RANGE_MERGE keeps a waiting duplicate's due time (NX; due = Redis now, estimated by
     * {@link RedisClock}, + timeRange), PRIORITY and FIXED_TIME take the latest value.
     * <p>
     * Wake-ups as send.lua gives them, without a script: a PRIORITY part publishes right behind its ZADD (due now);
     * a time part's ZADD is followed by a native {@code ZRANGE store 0 0 WITHSCORES}, and when the slot's first
     * score is not below the part's lowest (the part holds the slot's first message) the announcement is published
     * from here before the part's future completes. A lost wake-up only delays sleepers until their next full poll
     * (max-idle); the batch itself is written.
     *
     * @return per part, in order: how many of its members were new
     */
    List<CompletableFuture<Long>> sendBatch(List<BatchPart> parts) {
        List<CompletableFuture<Long>> clocks = null;
        for (BatchPart part : parts) {
            if (part.rangeMerge() || part.priority()) {
                CompletableFuture<Long> now = clock.now(part.slot());
                if (!now.isDone() || now.isCompletedExceptionally()) {
                    if (clocks == null) {
                        clocks = new ArrayList<>();
                    }
                    clocks.add(now);
                }
            }
        }
        if (clocks == null) {
            return writeBatch(parts); // the common case: every clock estimate at hand, no hop to another thread
        }
        // the first batch to a slot (or after a failed reading) waits for Redis's clock
        CompletableFuture<List<CompletableFuture<Long>>> written = CompletableFuture
                .allOf(clocks.toArray(CompletableFuture[]::new)).thenApply(v -> writeBatch(parts));
        List<CompletableFuture<Long>> results = new ArrayList<>(parts.size());
        for (int i = 0; i < parts.size(); i++) {
            int index = i;
            results.add(written.thenCompose(list -> list.get(index)));
        }
        return results;
    }

    /** {@link #sendBatch}, every needed clock reading done. */
    private List<CompletableFuture<Long>> writeBatch(List<BatchPart> parts) {
        List<AsyncCommand<byte[], byte[], ?>> commands = new ArrayList<>(2 * parts.size() + 1);
        List<CompletableFuture<Long>> results = new ArrayList<>(parts.size());
        for (BatchPart part : parts) {
            SlotKeys slot = part.slot();
            long now = part.rangeMerge() || part.priority() ? clock.now(slot).join() : 0;
            List<byte[]> members = part.members();
            long[] parameters = part.parameters();
            List<byte[]> args = new ArrayList<>(2 + 2 * members.size());
            args.add(slot.store());
            if (part.rangeMerge()) {
                args.add(NX);
            }
            long lowest = Long.MAX_VALUE;
            long previous = 0;
            byte[] previousBytes = null;
            for (int i = 0; i < members.size(); i++) {
                long score = part.rangeMerge() ? now + parameters[i] : parameters[i];
                lowest = Math.min(lowest, score);
                if (previousBytes == null || score != previous) {
                    // most batches repeat one score (one timeRange, one due time): formatted once
                    previous = score;
                    previousBytes = bytes(score);
                }
                args.add(previousBytes);
                args.add(members.get(i));
            }
            if (part.traceRecords() != null && !part.traceRecords().isEmpty()) {
                // the trace records first (see write): a pop never sees a member before its record
                List<byte[]> hsetArgs = new ArrayList<>(1 + part.traceRecords().size());
                hsetArgs.add(slot.trace());
                hsetArgs.addAll(part.traceRecords());
                commands.add(hset(slot, hsetArgs));
            }
            AsyncCommand<byte[], byte[], Long> zadd = zadd(slot, args);
            commands.add(zadd);
            CompletableFuture<Long> added = gateway.namingDisconnection(zadd.toCompletableFuture(), slot.store(),
                    "a batch send (ZADD)");
            if (part.priority()) {
                // due at once, as send.lua announces it
                commands.add(publish(wakeUp(slot, bytes(now))));
                results.add(added);
                continue;
            }
            AsyncCommand<byte[], byte[], List<ScoredValue<byte[]>>> first = firstOf(slot);
            commands.add(first);
            long batchLowest = lowest;
            CompletableFuture<Void> woke = first.toCompletableFuture().handle((reply, error) -> {
                // the first score can only be at or below the part's lowest; equal means the part holds the first
                if (error == null && !reply.isEmpty() && reply.get(0).getScore() >= batchLowest) {
                    announce(slot, (long) reply.get(0).getScore());
                }
                return null;
            });
            results.add(added.thenCombine(woke, (count, ignored) -> count));
        }
        gateway.dispatchAll(commands);
        return results;
    }

    /** {@code HSET <trace> field value ...} (trace records): {@code args} from the trace key on. */
    private static AsyncCommand<byte[], byte[], Long> hset(SlotKeys slot, List<byte[]> args) {
        return new AsyncCommand<>(new Command<>(CommandType.HSET, new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new EncodedArgs(slot.trace(), args)));
    }

    /** {@code ZADD <store> [NX] score member ...}: {@code args} from the store key on; replies how many were new. */
    private static AsyncCommand<byte[], byte[], Long> zadd(SlotKeys slot, List<byte[]> args) {
        return new AsyncCommand<>(new Command<>(CommandType.ZADD, new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new EncodedArgs(slot.store(), args)));
    }

    /**
     * The slot's first message with its score: {@code ZRANGE store 0 0 WITHSCORES}; Lettuce's own reply reader (RESP2
     * answers a flat list, RESP3 pairs).
     */
    private static AsyncCommand<byte[], byte[], List<ScoredValue<byte[]>>> firstOf(SlotKeys slot) {
        return new AsyncCommand<>(new Command<>(CommandType.ZRANGE,
                new ScoredValueListOutput<>(ByteArrayCodec.INSTANCE),
                new EncodedArgs(slot.store(), List.of(slot.store(), ZERO, ZERO, WITHSCORES))));
    }

    /** {@code <store>|<due>}: what send.lua publishes on the wake channel. */
    private static byte[] wakeUp(SlotKeys slot, byte[] due) {
        byte[] store = slot.store();
        byte[] message = new byte[store.length + 1 + due.length];
        System.arraycopy(store, 0, message, 0, store.length);
        message[store.length] = '|';
        System.arraycopy(due, 0, message, store.length + 1, due.length);
        return message;
    }

    private AsyncCommand<byte[], byte[], Long> publish(byte[] message) {
        return new AsyncCommand<>(new Command<>(CommandType.PUBLISH, new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new EncodedArgs(null, List.of(wakeChannel, message))));
    }

}
