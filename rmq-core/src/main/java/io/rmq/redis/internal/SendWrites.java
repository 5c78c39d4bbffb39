package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.ScoredValueListOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.redis.internal.BatchPart;
import org.jspecify.annotations.Nullable;

import static io.rmq.redis.internal.Replies.ZERO;
import static io.rmq.redis.internal.Replies.bytes;

/**
 * Used by senders' threads and Lettuce's event-loop threads (completions run there); its only state is
 * {@link SlotMasterClocks}'s per-slot readings and the {@link #backlogged} hint, both thread-safe maps.
 * <p>
 * {@link RmqRedis}'s sends of messages without an envelope or with a body's trace context alone (its trace record,
 * one more field in an {@code HSET}) instead of send.lua: the lone send in one small script (send_one.lua) or two native
 * commands written together, the batch send in native commands (a part of id messages alone: their envelopes' HSET and
 * members' ZADD in one {@link Transaction}); each with the merge rule of its topic type, and the wake-ups they announce
 * to sleeping consumers when they write a slot's first message.
 */
final class SendWrites {

    private static final byte[] NX = bytes("NX");
    private static final byte[] WITHSCORES = bytes("WITHSCORES");
    /** send_one.lua's ARGV[1]: RANGE_MERGE, FIXED_TIME, PRIORITY. */
    private static final byte[] MODE_RANGE = bytes("r");
    private static final byte[] MODE_TIME = bytes("t");
    private static final byte[] MODE_PRIORITY = bytes("p");

    private final RedisGateway gateway;
    private final SlotMasterClocks clock;
    /** {@code <prefix>:wake}, where the scripts and {@link #announce} tell sleepers of a new first message. */
    private final byte[] wakeChannel;
    /**
     * The slots whose previous lone send found messages ahead of it (a backlog): their next lone send goes as
     * {@link #sendTogether}, the others' as send_one.lua (see {@link #sendOne}). A hint only, written by senders' and
     * event-loop threads without order between them: a stale entry costs one send a few µs of Redis time.
     */
    private final Map<SlotKeys, Boolean> backlogged = new ConcurrentHashMap<>();
    // (keyed as SlotMasterClocks's readings: RmqKeys caches one SlotKeys per topic slot, so the record's equals holds)

    SendWrites(RedisGateway gateway, SlotMasterClocks clock, String prefix) {
        this.gateway = gateway;
        this.clock = clock;
        this.wakeChannel = bytes(prefix + ":wake");
    }

    /**
     * One message without an envelope, or with a body's trace context alone (a single synchronous sender's call), in one
     * round trip, by the way that costs Redis least for what the slot looked like at its previous lone send:
     * <ul>
     * <li>the slot was empty then (or no lone send went to it yet): one call of send_one.lua — the {@code ZADD} with the
     * type's merge rule ({@code NX} for RANGE_MERGE, due at Redis's own now plus the time range), the trace record's
     * {@code HSET} before it, and the wake-up decision and its {@code PUBLISH} inside, one command;</li>
     * <li>the slot held messages then (a backlog: the send will most likely not be first, nothing to announce): the
     * native {@code ZADD} and the wake-up check ({@code ZRANK}; PRIORITY: {@code ZREVRANK}) written together
     * ({@link #sendTogether}), which Redis reads in one go and runs without the Lua call's cost.</li>
     * </ul>
     * Both make the same merge and the same wake-up decision; only the cost differs (the script ~12 µs of Redis time to
     * run against ~7 µs for the two commands, but one read, parse and reply fewer when it must {@code PUBLISH};
     * BENCHMARKS.md, issue 32). A guess that turns out wrong costs that one send a few µs, never a wake-up.
     *
     * @param traceRecord { field, value } of the body's trace record, or null
     * @return 1 when the message was added, 0 when it merged into a waiting one
     */
    CompletableFuture<Long> sendOne(SlotKeys slot, boolean rangeMerge, boolean priority, byte[] member,
            long parameter, byte @Nullable [][] traceRecord) {
        if (backlogged.containsKey(slot)) {
            if (!rangeMerge) {
                return sendTogether(slot, false, priority, member, parameter, traceRecord);
            }
            CompletableFuture<Long> now = clock.now(slot);
            if (now.isDone() && !now.isCompletedExceptionally()) {
                return sendTogether(slot, true, false, member, now.join() + parameter, traceRecord);
            }
            // no clock reading at hand yet (or it failed): the script reads Redis's own
        }
        byte[] mode = rangeMerge ? MODE_RANGE : priority ? MODE_PRIORITY : MODE_TIME;
        CompletableFuture<Long> reply = traceRecord == null
                ? gateway.eval(RmqScript.SEND_ONE, ScriptOutputType.INTEGER, new byte[][] {slot.store()}, mode,
                        bytes(parameter), member)
                : gateway.eval(RmqScript.SEND_ONE, ScriptOutputType.INTEGER,
                        new byte[][] {slot.store(), slot.trace()}, mode, bytes(parameter), member, traceRecord[0],
                        traceRecord[1]);
        return reply.thenApply(result -> {
            // 2: it announced (the slot's first); an added message that did not is behind others: a backlog
            if (result < 2 && (result & 1) == 1) {
                backlogged.put(slot, Boolean.TRUE);
            }
            return result & 1;
        });
    }

    /**
     * {@link #sendOne}'s way into a backlogged slot ({@link #sendTogether}), taken whatever the hint says, for a
     * message without an envelope; RANGE_MERGE due at this host's estimate of Redis's now plus the range, as
     * {@link #sendOne} computes it (waiting for the slot's first clock reading where {@link #sendOne} would use the
     * script instead). The hint and the reading at hand decide {@link #sendOne}'s way from what earlier sends did, so a
     * caller that must pin this way's merge rule (MergeRuleTest) cannot choose it by sending alone.
     *
     * @return 1 when the message was added, 0 when it merged into a waiting one
     */
    CompletableFuture<Long> sendBacklogged(SlotKeys slot, boolean rangeMerge, boolean priority, byte[] member,
            long parameter) {
        if (!rangeMerge) {
            return sendTogether(slot, false, priority, member, parameter, null);
        }
        return clock.now(slot).thenCompose(now -> sendTogether(slot, true, false, member, now + parameter, null));
    }

    /**
     * {@link #sendOne} into a slot that held messages at its previous lone send: the {@code ZADD} (its score at hand)
     * and the wake-up check written to the connection in one go, so Redis reads them together and the sender waits
     * for one round trip. With a trace record ({ field, value }), its {@code HSET} goes first in the same write: a pop
     * never sees the member before its record (not atomic, and it need not be: a record can only be lost, a trace link,
     * never a message). The check's reply decides the announcement as send_one.lua does (time types: the message is the
     * slot's first, rank 0; PRIORITY: the highest), from the
     * connection's thread, not waited for; whatever happens to the slot between the two commands, no sleeper misses
     * the message (if it is first when its check runs, it is announced; if something sent meanwhile is due sooner,
     * that send announces, and a consumer that takes either learns the slot's next due time from its pop). An
     * announcement marks the slot empty-looking again, so its next lone send goes as the script.
     */
    private CompletableFuture<Long> sendTogether(SlotKeys slot, boolean rangeMerge, boolean priority, byte[] member,
            long score, byte @Nullable [][] traceRecord) {
        byte[] store = slot.store();
        List<byte[]> parts = rangeMerge ? List.of(store, NX, bytes(score), member)
                : List.of(store, bytes(score), member);
        AsyncCommand<byte[], byte[], Long> zadd = zadd(slot, parts);
        AsyncCommand<byte[], byte[], Long> check = new AsyncCommand<>(new Command<>(
                priority ? CommandType.ZREVRANK : CommandType.ZRANK, new IntegerOutput<>(ByteArrayCodec.INSTANCE),
                new EncodedArgs(store, List.of(store, member))));
        CompletableFuture<Long> added = new CompletableFuture<>();
        zadd.whenComplete((count, error) -> {
            if (error != null) {
                added.completeExceptionally(gateway.unavailableIfDisconnected(error, store, "a send (ZADD)"));
                return;
            }
            added.complete(count);
            if (rangeMerge && count != 1) {
                return; // a RANGE_MERGE send that merged changed nothing: nothing to announce
            }
            check.whenComplete((rank, checkError) -> {
                // null rank: a consumer took the message already; a check that failed (timeout, error reply) after
                // the write announces anyway: a spare announcement costs a sleeper one pop, a missing one max-idle
                if (checkError != null || (rank != null && rank == 0)) {
                    backlogged.remove(slot);
                    // PRIORITY: due now; without a clock reading at hand 0, which is due for every consumer
                    announce(slot, priority ? clock.now(slot).getNow(0L) : score);
                }
            });
        });
        gateway.dispatchAll(traceRecord == null ? List.of(zadd, check)
                : List.of(hset(slot, List.of(slot.trace(), traceRecord[0], traceRecord[1])), zadd, check));
        return added;
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
     * Redis time per message, and ~10-20 µs per call), all parts' commands written to the connection in one go; a part
     * with {@link BatchPart#envelopes()} as a MULTI of their HSET and its ZADD, followed by its wake-up check, on the
     * transactions' connection ({@link RedisGateway#dispatchTransaction}). Merge rules as send.lua: RANGE_MERGE keeps a waiting duplicate's due time (NX; due = Redis now, estimated by
     * {@link SlotMasterClocks}, + timeRange), PRIORITY and FIXED_TIME take the latest value.
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
        // the id parts' transactions and their wake-up checks, on the transactions' connection (see RedisGateway)
        List<AsyncCommand<byte[], byte[], ?>> transactions = null;
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
            CompletableFuture<Long> written;
            if (part.envelopes() != null) {
                // id messages: their envelopes and members in one MULTI, so that no ack or pop runs between them (an
                // ack of an in-flight copy would forget an envelope whose member is not written yet)
                List<byte[]> hsetArgs = new ArrayList<>(1 + part.envelopes().size());
                hsetArgs.add(slot.msg());
                hsetArgs.addAll(part.envelopes());
                Transaction transaction = new Transaction(List.of(
                        new Command<>(CommandType.HSET, null, new EncodedArgs(slot.msg(), hsetArgs)),
                        new Command<>(CommandType.ZADD, null, new EncodedArgs(slot.store(), args))));
                if (transactions == null) {
                    transactions = new ArrayList<>();
                }
                transactions.addAll(transaction.commands());
                written = transaction.executed().thenApply(replies -> (Long) replies.get(1));
            }
            else {
                AsyncCommand<byte[], byte[], Long> zadd = zadd(slot, args);
                commands.add(zadd);
                written = zadd.toCompletableFuture();
            }
            CompletableFuture<Long> added = gateway.namingDisconnection(written, slot.store(), "a batch send (ZADD)");
            // the wake-up after the part's write, on the connection it went on
            List<AsyncCommand<byte[], byte[], ?>> after = part.envelopes() != null ? transactions : commands;
            if (part.priority()) {
                // due at once, as send.lua announces it
                after.add(publish(wakeUp(slot, bytes(now))));
                results.add(added);
                continue;
            }
            AsyncCommand<byte[], byte[], List<ScoredValue<byte[]>>> first = firstOf(slot);
            after.add(first);
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
        if (transactions != null) {
            gateway.dispatchTransaction(transactions);
        }
        if (!commands.isEmpty()) {
            gateway.dispatchAll(commands);
        }
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
