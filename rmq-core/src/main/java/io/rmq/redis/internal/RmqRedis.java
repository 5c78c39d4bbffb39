package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqException;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import org.jspecify.annotations.Nullable;

import static io.rmq.redis.internal.Replies.ONE;
import static io.rmq.redis.internal.Replies.ZERO;
import static io.rmq.redis.internal.Replies.bytes;
import static io.rmq.redis.internal.Replies.nonEmpty;
import static io.rmq.redis.internal.Replies.number;
import static io.rmq.redis.internal.Replies.scoreText;
import static io.rmq.redis.internal.Replies.string;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). Used by senders' threads, listener containers' and
 * slot coordinators' threads, start-up, and Lettuce's event-loop threads (completions run there); its only state is
 * {@link RedisClock}'s per-slot readings (its {@link SendWrites}'), which are thread-safe.
 * <p>
 * The hot path of RMQ's Redis access: sending (send.lua; the lone and batch native writes and the wake-ups they
 * announce are {@link SendWrites}'), popping, acking, failing, releasing, extending and sweeping leases, ordered
 * consumption, membership and rate permits, and the topic registration the engine does at start-up. Admin and
 * inspection commands (find, browse, the dead queue, queue figures) are {@link RmqRedisAdmin}'s; between the two,
 * every Redis command RMQ issues. Methods are asynchronous; calls made without waiting in between are pipelined by
 * Lettuce.
 */
public final class RmqRedis {

    private static final byte[] RANGE = bytes("range");
    private static final byte[] SCORE = bytes("score");
    private static final byte[] RANGE_WITH_ENVELOPES = bytes("range-env");
    private static final byte[] SCORE_WITH_ENVELOPES = bytes("score-env");
    private static final byte[] NO_ENVELOPE = new byte[0];

    /** Expired leases a pop sweeps before it pops. */
    private static final int SWEEP_PER_POP = 100;

    private final RedisGateway gateway;
    private final RmqKeys keys;
    private final SendWrites writes;
    private final DeadTrims trims;

    public RmqRedis(RedisGateway gateway, RmqKeys keys) {
        this(gateway, keys, DeadTrims.NONE);
    }

    /** {@code trims}: told of the dead messages the dead-letter retention trims in the scripts that bury. */
    public RmqRedis(RedisGateway gateway, RmqKeys keys, DeadTrims trims) {
        this.gateway = gateway;
        this.keys = keys;
        this.trims = trims;
        this.writes = new SendWrites(gateway, new RedisClock(this::redisMillis), keys.prefix());
    }

    /** Reports what a script's burials trimmed (see trim_dead in _common.lua). */
    private void trimmed(SlotKeys slot, long messages) {
        if (messages > 0) {
            trims.trimmed(slot.topic(), slot.slot(), messages);
        }
    }

    public RmqKeys keys() {
        return keys;
    }

    public RedisGateway gateway() {
        return gateway;
    }

    // ---------------------------------------------------------------- topics

    /**
     * Registers the definition unless the name is taken (a consume mode is added to a registered definition of the
     * same shape that has none yet); returns the definition Redis holds for the name.
     */
    public CompletableFuture<TopicDefinition> defineTopic(TopicDefinition definition) {
        return defineTopic(definition, "");
    }

    /** {@code how}: '' registers (see {@link #defineTopic(TopicDefinition)}), 'mode' sets the consume mode. */
    CompletableFuture<TopicDefinition> defineTopic(TopicDefinition definition, String how) {
        CompletableFuture<byte[]> registered = gateway.eval(RmqScript.DEFINE_TOPIC, ScriptOutputType.VALUE,
                new byte[][] {keys.topics()}, bytes(definition.name()), bytes(definition.encode()), bytes(how));
        return registered.thenApply(encoded -> TopicDefinition.decode(definition.name(), string(encoded)));
    }

    /** The definition registered in Redis for a topic name, or null. */
    public CompletableFuture<@Nullable TopicDefinition> topic(String name) {
        return gateway.commands().hget(keys.topics(), bytes(name)).toCompletableFuture()
                .thenApply(encoded -> encoded == null ? null : TopicDefinition.decode(name, string(encoded)));
    }

    // ---------------------------------------------------------------- sending

    /**
     * Writes messages into one slot with the merge rule of the topic type (see send.lua). Returns per message 1 (new)
     * or 0 (merged).
     *
     * @param rangeMerge true for RANGE_MERGE (parameters are time ranges), false for explicit scores
     * @param priority   true for PRIORITY topics
     */
    public CompletableFuture<List<Long>> send(SlotKeys slot, boolean rangeMerge, boolean priority,
            List<byte[]> members, List<Long> parameters) {
        return send(slot, rangeMerge, priority, members, parameters, null);
    }

    /**
     * As {@link #send(SlotKeys, boolean, boolean, List, List)}, storing each message's envelope in the slot's msg HASH
     * in the same script call (see send.lua: the latest send's envelope wins, for every type).
     *
     * @param envelopes per member its {@link Envelope} (null: none); a null list when no member has one (then the
     *                  script does not touch the msg HASH, and the call carries no extra argument)
     */
    public CompletableFuture<List<Long>> send(SlotKeys slot, boolean rangeMerge, boolean priority,
            List<byte[]> members, List<Long> parameters, @Nullable List<byte @Nullable []> envelopes) {
        if (members.size() == 1) {
            // a lone send without an envelope, or with a body's trace context alone: send_one.lua, a fraction of
            // send.lua's cost (see SendWrites#sendOne)
            byte[] envelope = envelopes == null ? null : envelopes.get(0);
            byte[] member = members.get(0);
            if (envelope == null) {
                return writes.sendOne(slot, rangeMerge, priority, member, parameters.get(0), null)
                        .thenApply(List::of);
            }
            if (EnvelopeKeys.isTraceOnly(envelope) && !EnvelopeKeys.isIdMember(member)) {
                return writes.sendOne(slot, rangeMerge, priority, member, parameters.get(0),
                        EnvelopeKeys.traceRecord(member, envelope)).thenApply(List::of);
            }
        }
        boolean withEnvelopes = envelopes != null;
        int stride = withEnvelopes ? 3 : 2;
        byte[][] args = new byte[2 + members.size() * stride][];
        args[0] = withEnvelopes ? (rangeMerge ? RANGE_WITH_ENVELOPES : SCORE_WITH_ENVELOPES)
                : (rangeMerge ? RANGE : SCORE);
        args[1] = priority ? ONE : ZERO;
        for (int i = 0; i < members.size(); i++) {
            args[2 + stride * i] = bytes(parameters.get(i));
            args[3 + stride * i] = members.get(i);
            if (withEnvelopes) {
                byte[] envelope = envelopes.get(i);
                args[4 + stride * i] = envelope == null ? NO_ENVELOPE : envelope;
            }
        }
        CompletableFuture<byte[]> flags = gateway.eval(RmqScript.SEND, ScriptOutputType.VALUE, slot.all(), args);
        return flags.thenApply(Replies::digits);
    }

    /**
     * One message without an envelope, written the way a lone send takes into a slot that held messages at its
     * previous lone send (the native {@code ZADD} and its wake-up check written together; see
     * {@link SendWrites#sendBacklogged}), whatever the slot holds. {@link #send} takes that way by itself when the slot
     * looks backlogged; this entry exists so that the way's merge rule can be pinned beside the others'.
     *
     * @return 1 (new) or 0 (merged)
     */
    public CompletableFuture<Long> sendBacklogged(SlotKeys slot, boolean rangeMerge, boolean priority, byte[] member,
            long parameter) {
        return writes.sendBacklogged(slot, rangeMerge, priority, member, parameter);
    }

    /**
     * One slot's part of a batch send.
     *
     * @param parameters per member: timeRange ms (RANGE_MERGE), priority, or due ms (FIXED_TIME)
     */
    public record BatchPart(SlotKeys slot, boolean rangeMerge, boolean priority, List<byte[]> members,
            long[] parameters, @Nullable List<byte[]> traceRecords) {

        // traceRecords: field, value, field, value ... of the trace records (EnvelopeKeys#traceRecord) of the part's
        // bodies that carry their trace context alone, written by one HSET just before the part's ZADD; null: none

        public BatchPart(SlotKeys slot, boolean rangeMerge, boolean priority, List<byte[]> members, long[] parameters) {
            this(slot, rangeMerge, priority, members, parameters, null);
        }
    }

    /**
     * Writes each part into its slot in native commands, all parts' commands written to the connection in one go,
     * with send.lua's merge rules and wake-ups (see {@link SendWrites#sendBatch}).
     *
     * @return per part, in order: how many of its members were new
     */
    public List<CompletableFuture<Long>> sendBatch(List<BatchPart> parts) {
        return writes.sendBatch(parts);
    }

    /**
     * Checks at start-up that this connection may do what every RMQ script needs, beyond running scripts: reading
     * Redis's clock inside a script ({@code TIME}). An ACL user without {@code +time} would otherwise start and then
     * fail every pop and send.
     */
    public void checkPermissions() {
        try {
            // the keys of a slot of a topic that is never used: they only route the call
            SlotKeys probe = keys.slots(new TopicDefinition("rmq-permission-check", TopicType.FIXED_TIME, 1))[0];
            RedisGateway.await(gateway.eval(RmqScript.CLOCK, ScriptOutputType.INTEGER, probe.all()),
                    "reading Redis's clock in a script");
        }
        catch (RuntimeException ex) {
            String text = String.valueOf(ex.getMessage());
            // Redis 6.2: "NOPERM this user has no permissions to run the 'time' command"; 7.x: "The user executing
            // the script can't run this command or subcommand"
            if (text.contains("NOPERM") || text.contains("no permissions") || text.contains("can't run this command")) {
                throw new RmqException("The Redis user lacks a permission RMQ needs: scripts read Redis's clock with"
                        + " TIME. Grant at least: +@read +@write +@scripting +@pubsub +time (and ~" + keys.prefix()
                        + ":* &" + keys.prefix() + ":wake). Redis said: " + text, ex);
            }
            throw ex;
        }
    }

    /** Redis's clock (ms) on the master that owns the slot. */
    CompletableFuture<Long> redisMillis(SlotKeys slot) {
        return gateway.eval(RmqScript.CLOCK, ScriptOutputType.INTEGER, slot.all());
    }

    // ---------------------------------------------------------------- consuming

    /**
     * A message moved from store to prepare.
     *
     * @param envelope   its stored {@link Envelope} (or a legacy trace context, {@link TraceContexts}), or null: none
     *                   stored (a legacy context: none, or not asked for)
     * @param traceField the field of the body's trace record when the consumer read the slot's trace records itself
     *                   (named again in the ack, see ack.lua); null otherwise
     */
    public record Popped(byte[] member, double score, int attempt, byte @Nullable [] envelope,
            byte @Nullable [] traceField) {

        public Popped(byte[] member, double score, int attempt, byte @Nullable [] envelope) {
            this(member, score, attempt, envelope, null);
        }
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
     * {@code EXISTS} per slot (a slot's keys share its hash tag, so each goes to the slot's node).
     */
    public CompletableFuture<long[]> occupied(SlotKeys[] slots, boolean priority) {
        if (gateway.isCluster()) {
            return perSlotOccupied(slots, priority);
        }
        List<byte[]> all = new ArrayList<>(slots.length * 3);
        for (SlotKeys slot : slots) {
            all.addAll(List.of(occupiedKeys(slot, priority)));
        }
        CompletableFuture<Long> any = gateway.commands().exists(all.toArray(byte[][]::new)).toCompletableFuture();
        return any.thenCompose(count -> count == 0 ? CompletableFuture.completedFuture(new long[slots.length])
                : perSlotOccupied(slots, priority));
    }

    private CompletableFuture<long[]> perSlotOccupied(SlotKeys[] slots, boolean priority) {
        long[] counts = new long[slots.length];
        CompletableFuture<?>[] calls = new CompletableFuture<?>[slots.length];
        for (int i = 0; i < slots.length; i++) {
            int index = i;
            calls[i] = gateway.commands().exists(occupiedKeys(slots[i], priority)).toCompletableFuture()
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
            trimmed(slot, flags >> 3);
            boolean withAttempts = (flags & 1) != 0;
            boolean contexts = (flags & 2) != 0;
            int step = 2 + (withAttempts ? 1 : 0) + (contexts ? 1 : 0);
            List<Popped> popped = new ArrayList<>((items.size() - 4) / step);
            for (int i = 4; i + step - 1 < items.size(); i += step) {
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
     * goes with it to the ack, which forgets the record by it. When the read fails the pop's deliveries go on without
     * their trace contexts.
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
                out.set(at[k], new Popped(p.member(), p.score(), p.attempt(),
                        EnvelopeKeys.fromTraceRecordOf(digests.get(k), values.get(k).getValueOrElse(null)),
                        fields.get(k)));
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
     * As above, naming each member's trace-record field ({@link Popped#traceField}; empty for none), so that the
     * script forgets the records without a digest per member; {@code traceFields} null: none named.
     */
    public CompletableFuture<List<Long>> ack(SlotKeys slot, boolean priority, List<byte[]> members, List<Long> tokens,
            @Nullable List<byte[]> traceFields) {
        List<byte[]> args = new ArrayList<>(members.size() * (traceFields == null ? 1 : 2) + 5);
        args.add(traceFields == null ? (priority ? ONE : ZERO)
                : bytes((priority ? "1" : "0") + traceFields.size()));
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
        if (traceFields != null) {
            args.addAll(traceFields);
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
            trimmed(slot, out.get(out.size() - 1));
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
            trimmed(slot, r.get(2));
            return new long[] {r.get(0), r.get(1)};
        });
    }

    private static void fillRetryArgs(byte[][] args, boolean priority, RetryPolicy retry) {
        args[0] = priority ? ONE : ZERO;
        // the max retries with the dead-letter retention (see max_retries_of in _common.lua)
        args[1] = maxRetriesArg(retry);
        args[2] = bytes(retry.backoff().initial().toMillis());
        args[3] = bytes(Double.toString(retry.backoff().multiplier()));
        args[4] = bytes(retry.backoff().max().toMillis());
        args[5] = bytes(Double.toString(retry.backoff().jitter()));
        args[6] = bytes(Double.toString(ThreadLocalRandom.current().nextDouble()));
    }

    private static byte[] maxRetriesArg(RetryPolicy retry) {
        return bytes(retry.maxRetries() + " " + retry.deadLetters().maxCount() + " "
                + retry.deadLetters().maxAge().toMillis());
    }

    // ---------------------------------------------------------------- ordered consumption (see _orderly.lua)

    /**
     * The outcome of a claim.
     *
     * @param epoch            the epoch now held (the fencing token), or 0 when the slot is held by another
     * @param retryAfterMillis when not held: ms until the holder's time runs out, or -1 when the coordinator's epoch
     *                         was stale (a newer owner exists)
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
            long decidedEpoch, boolean priority, RetryPolicy retry, @Nullable Beat live) {
        List<String> ids = live == null ? List.of() : live.live();
        byte[][] args = new byte[8 + ids.size()][];
        args[0] = bytes("claim");
        args[1] = bytes(instanceId);
        args[2] = bytes(heldEpoch);
        args[3] = bytes(live == null ? ttlMillis : 0);
        args[4] = bytes(decidedEpoch);
        args[5] = priority ? ONE : ZERO;
        args[6] = maxRetriesArg(retry); // a take-over may bury
        args[7] = bytes(live == null ? 0 : live.redisNow());
        for (int i = 0; i < ids.size(); i++) {
            args[8 + i] = bytes(ids.get(i));
        }
        CompletableFuture<List<Long>> reply = gateway.eval(RmqScript.OWN, ScriptOutputType.MULTI, slot.all(), args);
        return reply.thenApply(r -> {
            if (r.size() > 3) {
                trimmed(slot, r.get(3));
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
        byte[][] args = new byte[15 + acked.size() + 3 * failures.size() + returned.size()][];
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
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.ORDERLY_NEXT, ScriptOutputType.MULTI,
                slot.all(), args);
        return reply.thenApply(items -> {
            long status = (long) number(items.get(0));
            trimmed(slot, status >> 1); // 1 + 2 x trimmed, or 0 when fenced
            int f = (int) number(items.get(5));
            int[] outcomes = new int[f];
            for (int k = 0; k < f; k++) {
                outcomes[k] = (int) number(items.get(6 + k));
            }
            int first = 6 + f;
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

    /**
     * What a heartbeat of an ordered consumer found (see members.lua).
     *
     * @param listed   false when a beat found this instance no longer listed (dropped: it gives up its slots)
     * @param redisNow the membership's Redis clock when the list was read (ms)
     * @param live     the live instance ids then (this one included when listed)
     */
    public record Beat(boolean listed, long redisNow, List<String> live) {
    }

    /** What a heartbeat, join, departure or reading of the ordered consumers of a topic does. */
    public enum MembersAction {
        JOIN, BEAT, LEAVE, LIST
    }

    /** Heartbeat, join, departure or reading of the ordered consumers of {@code topic} (see members.lua). */
    public CompletableFuture<Beat> members(String topic, String instanceId, long ttlMillis, MembersAction action) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.MEMBERS, ScriptOutputType.MULTI,
                new byte[][] {keys.members(topic)}, bytes(action.name().toLowerCase(java.util.Locale.ROOT)),
                bytes(instanceId), bytes(ttlMillis));
        return reply.thenApply(items -> new Beat((long) number(items.get(0)) == 1, (long) number(items.get(1)),
                items.subList(2, items.size()).stream().map(item -> string((byte[]) item)).toList()));
    }

    /**
     * Heartbeat ({@code leave} false) or departure of a CONCURRENT container among the topic's consumers: members.lua,
     * the ORDERLY membership's script, on a key of their own, where every beat is a join (a container dropped while it
     * could not beat simply lists itself again: it holds nothing a claimant could take). Returns the live instance ids.
     */
    public CompletableFuture<List<String>> shares(String topic, String instanceId, long ttlMillis, boolean leave) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.MEMBERS, ScriptOutputType.MULTI,
                new byte[][] {keys.consumers(topic)}, bytes(leave ? "leave" : "join"), bytes(instanceId),
                bytes(ttlMillis));
        // { status, Redis now, live ids... }
        return reply.thenApply(items -> items.subList(2, items.size()).stream().map(item -> string((byte[]) item))
                .toList());
    }

    /**
     * Takes up to {@code wanted} permits of a topic's shared rate limit, after giving back {@code givenBack} unused
     * ones (see rate.lua). Returns {granted, ms until a permit is free}.
     */
    public CompletableFuture<long[]> ratePermits(String topic, double perSecond, long burst, long wanted,
            long givenBack) {
        CompletableFuture<List<Long>> reply = gateway.eval(RmqScript.RATE, ScriptOutputType.MULTI,
                new byte[][] {keys.rate(topic)}, bytes(Double.toString(perSecond)), bytes(burst), bytes(wanted),
                bytes(givenBack));
        return reply.thenApply(r -> new long[] {r.get(0), r.get(1)});
    }
}
