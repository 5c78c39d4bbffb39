package io.rmq.redis.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.RmqException;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.rmq.redis.internal.Replies.ONE;
import static io.rmq.redis.internal.Replies.ZERO;
import static io.rmq.redis.internal.Replies.bytes;
import static io.rmq.redis.internal.Replies.number;
import static io.rmq.redis.internal.Replies.string;

/**
 * Not API (RMQ's internal Redis layer, changed without notice). Used by senders' threads, listener containers' and
 * slot coordinators' threads, start-up, and Lettuce's event-loop threads (completions run there); its only state is
 * {@link SlotMasterClocks}'s per-slot readings (its {@link SendWrites}'), which are thread-safe, and whether batches of
 * id messages go as transactions ({@link #nativeEnvelopes()}: set once by the thread that tries them, read by senders).
 * <p>
 * The entry to RMQ's Redis access on the engine's hot path, and its sending side: send.lua (the lone and batch native
 * writes and the wake-ups they announce are {@link SendWrites}'), the topic registration and permission check the
 * engine does at start-up, and what a topic's consumers share cluster-wide: their membership and the rate permits.
 * It makes the parts each consumer audience calls directly, once: {@link #leases()} (popping and settling leases) and
 * {@link #orderly()} (ordered slots' ownership and steps). Admin and inspection commands (find, browse, the dead
 * queue, queue figures) are {@link RmqRedisAdmin}'s; between them, every Redis command RMQ issues. Methods are
 * asynchronous; calls made without waiting in between are pipelined by Lettuce.
 */
public final class RmqRedis {

    private static final Logger log = LoggerFactory.getLogger(RmqRedis.class);

    private static final int UNKNOWN = 0;
    private static final int TRYING = 1;
    private static final int ALLOWED = 2;
    private static final int REFUSED = 3;
    private static final AtomicIntegerFieldUpdater<RmqRedis> TRANSACTIONS =
            AtomicIntegerFieldUpdater.newUpdater(RmqRedis.class, "transactions");

    private static final byte[] RANGE = bytes("range");
    private static final byte[] SCORE = bytes("score");
    private static final byte[] RANGE_WITH_ENVELOPES = bytes("range-env");
    private static final byte[] SCORE_WITH_ENVELOPES = bytes("score-env");
    private static final byte[] RANGE_COUNTING = bytes("range-env-count");
    private static final byte[] SCORE_COUNTING = bytes("score-env-count");
    private static final byte[] RANGE_COUNTING_PLAIN = bytes("range-count");
    private static final byte[] SCORE_COUNTING_PLAIN = bytes("score-count");
    private static final byte[] NO_ENVELOPE = new byte[0];
    /** Appended to send.lua's mode when messages carry expiries. */
    private static final String EXPIRING = ":x";
    /** send.lua's count modes count the messages a deduplication window dropped in units of this (see addedOf). */
    private static final long COUNTED_DEDUPLICATED = 1L << 20;
    /** send.lua's refusal of an expiry that is not after Redis's clock. */
    private static final String EXPIRED_ERROR = "RMQ_EXPIRED";

    private final RedisGateway gateway;
    /** The nodes behind the gateway's connection (one per engine: it keeps the topology refresh under way). */
    private final RedisNodes nodes;
    private final RmqKeys keys;
    private final SendWrites writes;
    /** {@link #nativeEnvelopes()}' state: UNKNOWN, TRYING, ALLOWED or REFUSED (senders' and its opener's threads). */
    private volatile int transactions;
    private final RmqRedisLeases leases;
    private final RmqRedisOrderly orderly;
    private final ConsumerRoster roster;

    public RmqRedis(RedisGateway gateway, RmqKeys keys) {
        this(gateway, keys, SlotReports.NONE);
    }

    /** {@code reports}: told of the dead messages the dead-letter retention reports in the scripts that bury. */
    public RmqRedis(RedisGateway gateway, RmqKeys keys, SlotReports reports) {
        this.gateway = gateway;
        this.nodes = new RedisNodes(gateway);
        this.keys = keys;
        this.writes = new SendWrites(gateway, new SlotMasterClocks(this::redisMillis), keys.prefix());
        this.leases = new RmqRedisLeases(gateway, reports);
        this.orderly = new RmqRedisOrderly(gateway, reports);
        this.roster = new ConsumerRoster(gateway, keys);
    }

    public RmqKeys keys() {
        return keys;
    }

    /** The nodes behind the connection: which serves a key, following a failover, health checks, per-node reads. */
    public RedisNodes nodes() {
        return nodes;
    }

    public RedisGateway gateway() {
        return gateway;
    }

    /** The engine's heartbeat for its CONCURRENT containers that share slots: one per engine. */
    public ConsumerRoster roster() {
        return roster;
    }

    /** Popping and settling leases (CONCURRENT consumption); callers keep it, one per engine. */
    public RmqRedisLeases leases() {
        return leases;
    }

    /** Ordered slots' ownership and steps (ORDERLY consumption); callers keep it, one per engine. */
    public RmqRedisOrderly orderly() {
        return orderly;
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
        return send(slot, rangeMerge, priority, members, parameters, envelopes, null);
    }

    /**
     * As {@link #send(SlotKeys, boolean, boolean, List, List, List)}, with each message's expiry in the same call.
     *
     * @param expiries per member when it expires ('=' Redis ms, '+' ms after it is stored, '' or null: it does not),
     *                 followed by '/' and its deduplication window in ms when it has one; a null list when no member
     *                 has either. A member whose expiry is not after Redis's clock is refused, nothing of it written: -1
     *                 in its place; one a window drops, nothing written: -2.
     */
    public CompletableFuture<List<Long>> send(SlotKeys slot, boolean rangeMerge, boolean priority,
            List<byte[]> members, List<Long> parameters, @Nullable List<byte @Nullable []> envelopes,
            @Nullable List<@Nullable String> expiries) {
        if (members.size() == 1 && expiries == null) {
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
        byte[] mode = envelopes != null ? (rangeMerge ? RANGE_WITH_ENVELOPES : SCORE_WITH_ENVELOPES)
                : (rangeMerge ? RANGE : SCORE);
        CompletableFuture<byte[]> flags = gateway.eval(RmqScript.SEND, ScriptOutputType.VALUE, slot.all(),
                sendArgs(mode, priority, members, parameters, envelopes, expiries));
        return refusedExpiry(flags, slot).thenApply(Replies::digits);
    }

    /**
     * A batch's chunk with envelopes, in one send.lua call that replies only how many of its messages were new (no
     * look-up of which were waiting, as {@link #send} makes for each single send's result).
     *
     * @param envelopes per member its {@link Envelope} (null: none)
     * @return how many of the members were new
     */
    public CompletableFuture<Long> sendCounting(SlotKeys slot, boolean rangeMerge, boolean priority,
            List<byte[]> members, List<Long> parameters, List<byte @Nullable []> envelopes) {
        return sendCounting(slot, rangeMerge, priority, members, parameters, envelopes, null);
    }

    /**
     * As above, with each message's expiry and window (see
     * {@link #send(SlotKeys, boolean, boolean, List, List, List, List)}); a member whose expiry is not after Redis's
     * clock fails the whole call with {@link RmqInvalidArgumentException}, nothing written. {@code envelopes} may be
     * null here (no member has one: then {@code expiries} must be given).
     *
     * @return how many were new, plus 2^20 times how many a deduplication window dropped (see {@link #addedOf} and
     *         {@link #deduplicatedOf})
     */
    public CompletableFuture<Long> sendCounting(SlotKeys slot, boolean rangeMerge, boolean priority,
            List<byte[]> members, List<Long> parameters, @Nullable List<byte @Nullable []> envelopes,
            @Nullable List<@Nullable String> expiries) {
        // a chunk without envelopes (it has expiries) passes two arguments per message, not four
        byte[] mode = envelopes != null ? (rangeMerge ? RANGE_COUNTING : SCORE_COUNTING)
                : (rangeMerge ? RANGE_COUNTING_PLAIN : SCORE_COUNTING_PLAIN);
        return refusedExpiry(gateway.eval(RmqScript.SEND, ScriptOutputType.INTEGER, slot.all(), sendArgs(
                mode, priority, members, parameters, envelopes, expiries)), slot);
    }

    /**
     * Appends a reply to a requester's inbox, bounded (see reply.lua): kept {@code keepMillis} after the inbox's last
     * reply, at most {@code most} replies.
     *
     * @return the inbox's length after the append
     */
    public CompletableFuture<Long> reply(byte[] inbox, byte[] reply, long keepMillis, int most) {
        return gateway.eval(RmqScript.REPLY, ScriptOutputType.INTEGER, new byte[][] {inbox}, reply,
                bytes(keepMillis), bytes((long) most));
    }

    /** Deletes a key (a closing engine's reply inbox). */
    public CompletableFuture<Long> forget(byte[] key) {
        return gateway.commands().del(key).toCompletableFuture();
    }

    /** Of a {@link #sendCounting} answer: how many messages were new. */
    public static long addedOf(long counted) {
        return counted & (COUNTED_DEDUPLICATED - 1);
    }

    /** Of a {@link #sendCounting} answer: how many messages a deduplication window dropped. */
    public static long deduplicatedOf(long counted) {
        return counted / COUNTED_DEDUPLICATED;
    }

    /** send.lua's refusal of an expiry at or before Redis's clock, as the argument error it is. */
    private static <T> CompletableFuture<T> refusedExpiry(CompletableFuture<T> call, SlotKeys slot) {
        return call.exceptionallyCompose(error -> {
            Throwable cause = RedisGateway.unwrap(error);
            String message = String.valueOf(cause.getMessage());
            int at = message.indexOf(EXPIRED_ERROR);
            if (at < 0) {
                return CompletableFuture.failedFuture(error);
            }
            return CompletableFuture.failedFuture(new RmqInvalidArgumentException("expiresAt",
                    message.substring(at + EXPIRED_ERROR.length()).trim(), "must be after Redis's clock (topic '"
                            + slot.topic() + "')"));
        });
    }

    /**
     * send.lua's arguments (see its header): mode, PRIORITY flag, [expiries,] then per message its fields, with a
     * body's envelope its envelope key (a digest of the body: Java's costs a fraction of Lua's).
     */
    private static byte[][] sendArgs(byte[] mode, boolean priority, List<byte[]> members, List<Long> parameters,
            @Nullable List<byte @Nullable []> envelopes, @Nullable List<@Nullable String> expiries) {
        boolean withEnvelopes = envelopes != null;
        int stride = withEnvelopes ? 4 : 2;
        int shift = expiries != null ? 1 : 0;
        int first = 2 + shift;
        byte[][] args = new byte[first + members.size() * stride][];
        args[0] = mode;
        args[1] = priority ? ONE : ZERO;
        if (expiries != null) {
            args[0] = bytes(string(mode) + EXPIRING);
            StringBuilder fields = new StringBuilder(members.size() * 16);
            for (int i = 0; i < expiries.size(); i++) {
                if (i > 0) {
                    fields.append(',');
                }
                String expiry = expiries.get(i);
                if (expiry != null) {
                    fields.append(expiry);
                }
            }
            args[2] = bytes(fields.toString());
        }
        for (int i = 0; i < members.size(); i++) {
            args[first + stride * i] = bytes(parameters.get(i));
            args[first + 1 + stride * i] = members.get(i);
            if (withEnvelopes) {
                byte[] envelope = envelopes.get(i);
                byte[] member = members.get(i);
                args[first + 2 + stride * i] = envelope == null ? NO_ENVELOPE : envelope;
                args[first + 3 + stride * i] = envelope == null || EnvelopeKeys.isIdMember(member) ? NO_ENVELOPE
                        : EnvelopeKeys.of(member);
            }
        }
        return args;
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
     * Whether a batch's parts of id messages go as native commands ({@link BatchPart#envelopes()}, written in one
     * MULTI with their ZADD on a connection of their own): on a connection to one server whose user may run MULTI and
     * EXEC. The first call opens that connection and tries an empty transaction in the background, and answers false
     * (send.lua) until it has; a failed opening is tried again by a later call, a refusal (ACL) is final and logged.
     */
    public boolean nativeEnvelopes() {
        int state = transactions;
        if (state == UNKNOWN && gateway.transactions() && TRANSACTIONS.compareAndSet(this, UNKNOWN, TRYING)) {
            Thread opener = new Thread(this::tryTransactions, "rmq-transactions-open");
            opener.setDaemon(true);
            opener.start();
        }
        return state == ALLOWED;
    }

    /** {@link #nativeEnvelopes}' background attempt (its own thread: opening a connection blocks). */
    private void tryTransactions() {
        try {
            gateway.openTransactions();
            Transaction probe = new Transaction(List.of());
            gateway.dispatchTransaction(probe.commands());
            RedisGateway.await(probe.executed(), "an empty MULTI / EXEC");
            transactions = ALLOWED;
        }
        catch (RuntimeException ex) {
            String text = String.valueOf(ex.getMessage());
            if (text.contains("NOPERM") || text.contains("no permissions")) {
                log.info("Batches of messages with ids go through a script: this Redis user may not run MULTI / EXEC"
                        + " ({}); grant +multi +exec for the native way", text);
                transactions = REFUSED;
            }
            else {
                log.debug("Could not open the connection for batches of messages with ids; a later batch tries again",
                        ex);
                transactions = UNKNOWN;
            }
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

    // ---------------------------------------------------------------- what a topic's consumers share


    /** What a heartbeat, join, departure or reading of the ordered consumers of a topic does. */
    public enum MembersAction {
        JOIN, BEAT, LEAVE, LIST
    }

    /** Heartbeat, join, departure or reading of the ordered consumers of {@code topic} (see members.lua). */
    public CompletableFuture<MembersBeat> members(String topic, String instanceId, long ttlMillis, MembersAction action) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.MEMBERS, ScriptOutputType.MULTI,
                new byte[][] {keys.members(topic)}, bytes(action.name().toLowerCase(java.util.Locale.ROOT)),
                bytes(instanceId), bytes(ttlMillis));
        return reply.thenApply(items -> new MembersBeat((long) number(items.get(0)) == 1, (long) number(items.get(1)),
                items.subList(2, items.size()).stream().map(item -> string((byte[]) item)).toList()));
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
