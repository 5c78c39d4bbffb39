package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScoredValue;
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
 * {@link RmqRedis}'s sends in native commands instead of send.lua: the lone send and the batch send of messages
 * without an envelope or with a body's trace context alone (its trace record, one more field in an {@code HSET}), each with the merge rule of its topic type, and the wake-ups they announce to sleeping consumers when
 * they write a slot's first message.
 */
final class SendWrites {

    private static final byte[] NX = bytes("NX");
    private static final byte[] WITHSCORES = bytes("WITHSCORES");

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
     * One message without a trace context (a single synchronous sender's call), in native commands instead of
     * send.lua: a script call costs Redis several times a plain command (its arguments, the Lua VM), which is most of
     * what a lone send costs. The same merge rules: {@code ZADD NX} for RANGE_MERGE (a waiting duplicate keeps its
     * due time; the due time is Redis's now, as {@link RedisClock} estimates it for batches, plus the time range),
     * plain {@code ZADD} for PRIORITY and FIXED_TIME (the latest priority or time wins).
     * <p>
     * The send is the {@code ZADD} alone, one command written and flushed in one hand-off to the connection's thread,
     * and completes on its reply. Then, from the connection's thread and off the sender's wait, the message's rank in
     * the slot is read ({@code ZRANK}; PRIORITY: from the highest, {@code ZREVRANK}): rank 0 means it is the slot's
     * first, and sleepers are told ({@code PUBLISH} as the scripts do it, not waited for). A RANGE_MERGE message that
     * merged changed nothing and reads and announces nothing. Whatever happens to the slot between the {@code ZADD}
     * and the read, no sleeper misses the message: if it is first when its check runs, it is announced; if something
     * sent meanwhile is due sooner, that message's own check announces it, and a consumer that takes the message (or
     * one before it) learns the slot's next due time from its pop.
     *
     * @return 1 when the message was added, 0 when it merged into a waiting one
     */
    CompletableFuture<Long> sendOne(SlotKeys slot, boolean rangeMerge, boolean priority, byte[] member,
            long parameter, byte @Nullable [][] traceRecord) {
        if (!rangeMerge) {
            return write(slot, false, priority, member, parameter, traceRecord);
        }
        long now = clock.nowIfKnown(slot);
        if (now != RedisClock.UNKNOWN) {
            return write(slot, true, false, member, now + parameter, traceRecord);
        }
        // the first send to a slot (or after a failed reading) waits for Redis's clock
        return clock.now(slot).thenCompose(redisNow -> write(slot, true, false, member, redisNow + parameter,
                traceRecord));
    }

    /**
     * {@link #sendOne} with its score (the due time or priority) at hand. With a trace record ({ field, value }: a
     * body that carries its trace context alone), an {@code HSET} of it goes just before the {@code ZADD}, in one
     * write to the connection: a pop never sees the member before its record. Not atomic, and it need not be: a record
     * can only be lost (a failover between the two, or an ack of a copy of the same body in flight that lands between
     * them and forgets the record), which loses a trace link, never a message, a payload or a user header.
     */
    private CompletableFuture<Long> write(SlotKeys slot, boolean rangeMerge, boolean priority, byte[] member,
            long score, byte @Nullable [][] traceRecord) {
        byte[] store = slot.store();
        List<byte[]> parts = rangeMerge ? List.of(store, NX, bytes(score), member)
                : List.of(store, bytes(score), member);
        AsyncCommand<byte[], byte[], Long> zadd = zadd(slot, parts);
        CompletableFuture<Long> added = new CompletableFuture<>();
        zadd.whenComplete((count, error) -> {
            if (error != null) {
                added.completeExceptionally(gateway.unavailableIfDisconnected(error, store, "a send (ZADD)"));
                return;
            }
            added.complete(count); // releases the sender first: the check below is not part of its wait
            if (count == 1 || !rangeMerge) {
                wakeIfFirst(slot, priority, member, score);
            }
        });
        if (traceRecord == null) {
            gateway.dispatch(zadd);
        }
        else {
            gateway.dispatchAll(List.of(hset(slot, List.of(slot.trace(), traceRecord[0], traceRecord[1])), zadd));
        }
        return added;
    }

    /** Announces {@code member} when it is the slot's first message (see {@link #sendOne}). */
    private void wakeIfFirst(SlotKeys slot, boolean priority, byte[] member, long score) {
        byte[] store = slot.store();
        AsyncCommand<byte[], byte[], Long> rank = new AsyncCommand<>(new Command<>(
                priority ? CommandType.ZREVRANK : CommandType.ZRANK, new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new EncodedArgs(store, List.of(store, member))));
        rank.thenAccept(position -> {
            // null: the message is not in the store any more (a consumer took it already)
            if (position != null && position == 0) {
                announce(slot, priority ? clock.now(slot).getNow(System.currentTimeMillis()) : score);
            }
        });
        gateway.dispatch(rank);
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
