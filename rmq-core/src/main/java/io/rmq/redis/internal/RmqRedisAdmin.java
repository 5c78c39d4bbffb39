package io.rmq.redis.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ScriptOutputType;
import io.rmq.core.internal.RmqKeys;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicDefinition;
import org.jspecify.annotations.Nullable;

import static io.rmq.redis.internal.Replies.ONE;
import static io.rmq.redis.internal.Replies.ZERO;
import static io.rmq.redis.internal.Replies.bytes;
import static io.rmq.redis.internal.Replies.number;
import static io.rmq.redis.internal.Replies.scoreText;
import static io.rmq.redis.internal.Replies.string;

/**
 * Not API (RMQ's internal Redis layer, changed without notice; applications use {@code RmqAdmin}). Used by whatever
 * thread calls {@code RmqAdmin} (application threads, the Actuator endpoint, the dashboard, the meters' schedule),
 * by the engine when it forwards a dead message, and by tests and tooling; stateless, so thread-safe.
 * <p>
 * The admin and inspection side of RMQ's Redis access, as Asynq keeps {@code inspect.go} beside {@code rdb.go}:
 * finding, moving and listing messages by member (body or id) with what is stored beside them, the dead queue, queue
 * figures, the topics registered, and the reads tests and tooling use. Nothing a sender or a listener does on its hot
 * path goes through here ({@link RmqRedis}, {@link RmqRedisLeases} and {@link RmqRedisOrderly} hold that); the
 * encodings both sides share (arguments, replies, scores) are {@link Replies}'. Methods are asynchronous; calls made
 * without waiting in between are pipelined by Lettuce.
 */
public final class RmqRedisAdmin {

    private final RmqRedis redis;
    private final RedisGateway gateway;
    private final RmqKeys keys;
    private final RmqRedisHistory history;

    public RmqRedisAdmin(RmqRedis redis) {
        this.redis = redis;
        this.gateway = redis.gateway();
        this.keys = redis.keys();
        this.history = new RmqRedisHistory(redis);
    }

    /** The topics' history counts (reads for the admin, writes for the engine's flusher). */
    public RmqRedisHistory history() {
        return history;
    }

    public RmqKeys keys() {
        return keys;
    }

    /** The server figures (INFO, CLUSTER NODES, RMQ's key count) of the Redis behind this engine. */
    public RmqRedisServer server() {
        return new RmqRedisServer(redis.gateway(), redis.nodes(), redis.keys().prefix());
    }

    // ---------------------------------------------------------------- topics

    /** Sets the consume mode of a registered definition of the same type and slot amount, whatever it was. */
    public CompletableFuture<TopicDefinition> setConsumeMode(TopicDefinition definition) {
        return redis.defineTopic(definition, "mode");
    }

    /** The definition registered in Redis for a topic name, or null. */
    public CompletableFuture<@Nullable TopicDefinition> topic(String name) {
        return redis.topic(name);
    }

    /** All topic definitions registered in Redis. */
    public CompletableFuture<Map<String, TopicDefinition>> topics() {
        return gateway.commands().hgetall(keys.topics()).toCompletableFuture().thenApply(raw -> {
            Map<String, TopicDefinition> out = new LinkedHashMap<>();
            raw.forEach((name, def) -> out.put(string(name), TopicDefinition.decode(string(name), string(def))));
            return out;
        });
    }

    // ---------------------------------------------------------------- ordered consumption

    /**
     * The live ordered consumers of {@code topic}, for {@link #endOrdering}: those the engines' heartbeats list
     * (consumers_beat.lua), with the roster's clock, and the instances of older engines listed in the topic's own
     * membership key (members.lua; this engine's instances listed there for older engines are counted by the roster).
     */
    public CompletableFuture<MembersBeat> liveMembers(String topic) {
        CompletableFuture<ConsumerRoster.Listing> roster = redis.roster().read();
        CompletableFuture<MembersBeat> older = redis.members(topic, "", 0, RmqRedis.MembersAction.LIST);
        return roster.thenCombine(older, (listing, topicKey) -> {
            List<String> live = new java.util.ArrayList<>(listing.orderly(topic));
            live.addAll(ConsumerRoster.olderInstances(topicKey.live()));
            return new MembersBeat(true, listing.redisNow(), live, true);
        });
    }

    /**
     * Ends ordered consumption of a slot (see orderly_end.lua); -1 while an owner still holds it. {@code live}: the
     * topic's ordered consumers as {@link RmqRedis#members} listed them (a leased owner holds while listed).
     */
    public CompletableFuture<Long> endOrdering(SlotKeys slot, boolean priority, MembersBeat live) {
        byte[][] args = new byte[2 + live.live().size()][];
        args[0] = priority ? ONE : ZERO;
        args[1] = bytes(live.redisNow());
        for (int i = 0; i < live.live().size(); i++) {
            args[2 + i] = bytes(live.live().get(i));
        }
        return gateway.eval(RmqScript.ORDERLY_END, ScriptOutputType.INTEGER, slot.all(), args);
    }

    // ---------------------------------------------------------------- managing waiting messages by member (body or id)

    /**
     * Where a member is in its slot (see find.lua); a score is null where the member is absent.
     *
     * @param failedAttempts failures of the live (not dead) message so far
     * @param deadReason     the last error of a dead body, else null
     * @param cancelled      a cancel marked its in-flight delivery
     * @param ordered        the slot is consumed by ORDERLY listeners
     * @param envelope       what is stored beside the member (payload of an id message, headers), else empty
     */
    public record Whereabouts(@Nullable Double storeScore, @Nullable Double prepareScore, @Nullable Double retryScore,
            @Nullable Double deadScore, int failedAttempts, @Nullable String deadReason, boolean cancelled,
            boolean ordered, Stored envelope) {
    }

    /**
     * What a slot keeps beside a member, decoded for people: an {@link Envelope} (payload of an id message, headers),
     * or the trace context an engine before envelopes stored ({@link TraceContexts}, as headers).
     *
     * @param payload the payload of an id message, null when none is stored (a body is its own payload)
     * @param headers the headers, the trace context's included; empty when none
     */
    public record Stored(byte @Nullable [] payload, Map<String, String> headers) {

        static final Stored NONE = new Stored(null, Map.of());

        /** A msg HASH value (or legacy context) as a script returned it; '' is none. */
        static Stored of(@Nullable Object reply) {
            Envelope envelope = Envelope.read(reply instanceof byte[] stored ? stored : null);
            return envelope == Envelope.NONE ? NONE : new Stored(envelope.payload(), envelope.headers());
        }
    }

    public CompletableFuture<Whereabouts> find(SlotKeys slot, byte[] member) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.FIND, ScriptOutputType.MULTI, slot.all(), member);
        return reply.thenApply(r -> {
            Double deadScore = optionalScore(r.get(3));
            return new Whereabouts(optionalScore(r.get(0)), optionalScore(r.get(1)), optionalScore(r.get(2)),
                    deadScore, (int) number(r.get(4)),
                    deadScore == null ? null : DeadInfo.parse(string((byte[]) r.get(5))).lastError(),
                    (long) number(r.get(6)) == 1, (long) number(r.get(7)) == 1, Stored.of(r.get(8)));
        });
    }

    /** Cancels a member (see cancel.lua): {removed from store, pending retry removed, in flight (marked), dead}. */
    public CompletableFuture<boolean[]> cancel(SlotKeys slot, boolean priority, byte[] member) {
        CompletableFuture<List<Long>> reply = gateway.eval(RmqScript.CANCEL, ScriptOutputType.MULTI, slot.all(),
                priority ? ONE : ZERO, member);
        return reply.thenApply(r -> new boolean[] {r.get(0) == 1, r.get(1) == 1, r.get(2) == 1, r.get(3) == 1});
    }

    /** Gives a waiting member a new score (see reschedule.lua): 1 waiting, 2 backing off, 3 in flight, 4 dead, 0 absent. */
    public CompletableFuture<Long> reschedule(SlotKeys slot, boolean priority, byte[] member, long score) {
        return gateway.eval(RmqScript.RESCHEDULE, ScriptOutputType.INTEGER, slot.all(), priority ? ONE : ZERO, member,
                bytes(score));
    }

    /** A waiting message as browse.lua lists it. */
    public record Browsed(byte[] member, double score, long tie, int failedAttempts, Stored envelope) {
    }

    /**
     * A page of one slot's store in taking order (see browse.lua).
     *
     * @param mode "first", "after", "at" or "cursor"
     */
    public CompletableFuture<List<Browsed>> browse(SlotKeys slot, boolean priority, String mode, double score,
            byte @Nullable [] member, long tie, int limit) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.BROWSE, ScriptOutputType.MULTI, slot.all(),
                priority ? ONE : ZERO, bytes(mode), bytes(scoreText(score)), member == null ? new byte[0] : member,
                bytes(tie), bytes(limit));
        return reply.thenApply(items -> {
            List<Browsed> out = new ArrayList<>(items.size() / 5);
            for (int i = 0; i + 4 < items.size(); i += 5) {
                out.add(new Browsed((byte[]) items.get(i), number(items.get(i + 1)), (long) number(items.get(i + 2)),
                        (int) number(items.get(i + 3)), Stored.of(items.get(i + 4))));
            }
            return out;
        });
    }

    /** Deletes up to {@code limit} waiting messages of a slot (see purge.lua); returns how many went. */
    public CompletableFuture<Long> purge(SlotKeys slot, boolean priority, int limit) {
        return gateway.eval(RmqScript.PURGE, ScriptOutputType.INTEGER, slot.all(), priority ? ONE : ZERO, bytes(limit));
    }

    private static @Nullable Double optionalScore(Object reply) {
        if (reply instanceof byte[] b && b.length == 0) {
            return null;
        }
        return number(reply);
    }

    // ---------------------------------------------------------------- dead queue and introspection

    /** A dead message as stored. */
    public record DeadEntry(byte[] member, long diedAt, int attempts, String priority, String lastError,
            Stored envelope) {
    }

    /** What dead-info keeps about a dead body: "attempts\npriority\nlast error" (see bury() in _common.lua). */
    private record DeadInfo(int attempts, String priority, String lastError) {

        static DeadInfo parse(String encoded) {
            String[] info = encoded.split("\n", 3);
            if (info.length < 3) {
                return new DeadInfo(0, "", "");
            }
            return new DeadInfo(info[0].isEmpty() ? 0 : Integer.parseInt(info[0]), info[1], info[2]);
        }
    }

    public CompletableFuture<List<DeadEntry>> deadPage(SlotKeys slot, long offset, int count) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.DEAD_PAGE, ScriptOutputType.MULTI, slot.all(),
                bytes(offset), bytes(count));
        return reply.thenApply(items -> {
            List<DeadEntry> out = new ArrayList<>(items.size() / 4);
            for (int i = 0; i + 3 < items.size(); i += 4) {
                DeadInfo info = DeadInfo.parse(string((byte[]) items.get(i + 2)));
                out.add(new DeadEntry((byte[]) items.get(i), (long) number(items.get(i + 1)), info.attempts(),
                        info.priority(), info.lastError(), Stored.of(items.get(i + 3))));
            }
            return out;
        });
    }

    /**
     * A message in flight as stored in prepare.
     *
     * @param score          its prepare score: the lease token (deadline ms + k/1024) of a CONCURRENT delivery, the
     *                       store score of an ORDERLY one
     * @param failedAttempts failed attempts before this delivery
     */
    public record InFlightEntry(byte[] member, double score, int failedAttempts, Stored envelope) {
    }

    /** A page of a slot's prepare ZSET in score order (inflight_page.lua). */
    public CompletableFuture<List<InFlightEntry>> inFlightPage(SlotKeys slot, long offset, int count) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.INFLIGHT_PAGE, ScriptOutputType.MULTI,
                slot.all(), bytes(offset), bytes(count));
        return reply.thenApply(items -> {
            List<InFlightEntry> out = new ArrayList<>(items.size() / 4);
            for (int i = 0; i + 3 < items.size(); i += 4) {
                out.add(new InFlightEntry((byte[]) items.get(i), number(items.get(i + 1)),
                        (int) number(items.get(i + 2)), Stored.of(items.get(i + 3))));
            }
            return out;
        });
    }

    /** Requeues the given members, or up to {@code limit} oldest when none are given. Returns how many moved. */
    public CompletableFuture<Long> deadRequeue(SlotKeys slot, boolean priority, int limit, List<byte[]> members) {
        byte[][] args = new byte[2 + members.size()][];
        args[0] = priority ? ONE : ZERO;
        args[1] = bytes(limit);
        for (int i = 0; i < members.size(); i++) {
            args[2 + i] = members.get(i);
        }
        return gateway.eval(RmqScript.DEAD_REQUEUE, ScriptOutputType.INTEGER, slot.all(), args);
    }

    /** Deletes the given members, or up to {@code limit} oldest when none are given. Returns how many went. */
    public CompletableFuture<Long> deadDelete(SlotKeys slot, int limit, List<byte[]> members) {
        byte[][] args = new byte[1 + members.size()][];
        args[0] = bytes(limit);
        for (int i = 0; i < members.size(); i++) {
            args[1 + i] = members.get(i);
        }
        return gateway.eval(RmqScript.DEAD_DELETE, ScriptOutputType.INTEGER, slot.all(), args);
    }

    /**
     * A message waiting for its retry, as retries.lua lists it.
     *
     * @param nextAttemptAt Redis ms of its next attempt
     * @param failedAt      Redis ms of the failure, or -1 when none was noted (failed under an engine before the errors
     *                      HASH)
     * @param lastError     the failure's reason (cut to 500 bytes), or null when none was noted
     */
    public record RetryEntry(byte[] member, long nextAttemptAt, int attempts, long failedAt,
            @Nullable String lastError, Stored envelope) {
    }

    /**
     * One slot's messages waiting for a retry (see retries.lua).
     *
     * @param total   how many the slot has (among those examined)
     * @param capped  the bound stopped the walk: {@code total} and the page cover only what was examined
     * @param entries the page asked for, soonest next attempt first
     */
    public record Retries(long total, boolean capped, List<RetryEntry> entries) {
    }

    /**
     * A page of one slot's retries, soonest first (see retries.lua): {@code skip} of them skipped, at most
     * {@code count} returned (0: only counted), at most {@code examine} retry entries and attempts fields examined.
     */
    public CompletableFuture<Retries> retries(SlotKeys slot, boolean priority, long skip, int count, int examine) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.RETRIES, ScriptOutputType.MULTI, slot.all(),
                priority ? ONE : ZERO, bytes(skip), bytes(count), bytes(examine));
        return reply.thenApply(items -> {
            List<RetryEntry> out = new ArrayList<>((items.size() - 3) / 5);
            for (int i = 3; i + 4 < items.size(); i += 5) {
                String noted = string((byte[]) items.get(i + 3));
                int newline = noted.indexOf('\n');
                long failedAt = newline > 0 ? Long.parseLong(noted.substring(0, newline)) : -1;
                out.add(new RetryEntry((byte[]) items.get(i), (long) number(items.get(i + 1)),
                        (int) number(items.get(i + 2)), failedAt, newline > 0 ? noted.substring(newline + 1) : null,
                        Stored.of(items.get(i + 4))));
            }
            return new Retries((long) number(items.get(0)), (long) number(items.get(1)) == 1, out);
        });
    }

    /**
     * Makes members of one slot due now (see run_now.lua): retries end their backoff, time-ordered waiting messages
     * get due time now. Returns how many were waiting or retrying (PRIORITY: retrying).
     */
    public CompletableFuture<Long> runNow(SlotKeys slot, boolean priority, List<byte[]> members) {
        byte[][] args = new byte[1 + members.size()][];
        args[0] = priority ? ONE : ZERO;
        for (int i = 0; i < members.size(); i++) {
            args[1 + i] = members.get(i);
        }
        return gateway.eval(RmqScript.RUN_NOW, ScriptOutputType.INTEGER, slot.all(), args);
    }

    /**
     * Part of one slot's dead queue counted by error class (see dead_groups.lua).
     *
     * @param examined entries examined
     * @param left     entries after the last one examined
     * @param counts   dead messages per error class among those examined, in order of first appearance
     */
    public record DeadGroups(long examined, long left, java.util.Map<String, Long> counts) {
    }

    /** Counts one slot's dead messages by error class from rank {@code start}, examining at most {@code examine}. */
    public CompletableFuture<DeadGroups> deadGroups(SlotKeys slot, long start, int examine) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.DEAD_GROUPS, ScriptOutputType.MULTI, slot.all(),
                bytes(start), bytes(examine));
        return reply.thenApply(items -> {
            java.util.Map<String, Long> counts = new java.util.LinkedHashMap<>();
            for (int i = 2; i + 1 < items.size(); i += 2) {
                counts.merge(string((byte[]) items.get(i)), (long) number(items.get(i + 1)), Long::sum);
            }
            return new DeadGroups((long) number(items.get(0)), (long) number(items.get(1)), counts);
        });
    }

    /**
     * Part of one slot's dead queue searched (see dead_search.lua).
     *
     * @param examined entries examined
     * @param matches  matches among them
     * @param left     entries after the last one examined
     * @param entries  the matches asked for
     */
    public record DeadSearch(long examined, long matches, long left, List<DeadEntry> entries) {
    }

    /**
     * Searches one slot's dead queue from rank {@code start}, examining at most {@code examine} entries: those whose
     * last error contains {@code errorLowerCase} (ASCII letters folded) and whose id or body starts with
     * {@code prefix} ('' matches all); {@code skip} matches skipped, at most {@code count} returned.
     */
    public CompletableFuture<DeadSearch> deadSearch(SlotKeys slot, String errorLowerCase, byte[] prefix, long start,
            int examine, long skip, int count) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.DEAD_SEARCH, ScriptOutputType.MULTI, slot.all(),
                errorLowerCase.getBytes(java.nio.charset.StandardCharsets.UTF_8), prefix, bytes(start), bytes(examine),
                bytes(skip), bytes(count));
        return reply.thenApply(items -> {
            List<DeadEntry> out = new ArrayList<>((items.size() - 3) / 4);
            for (int i = 3; i + 3 < items.size(); i += 4) {
                DeadInfo info = DeadInfo.parse(string((byte[]) items.get(i + 2)));
                out.add(new DeadEntry((byte[]) items.get(i), (long) number(items.get(i + 1)), info.attempts(),
                        info.priority(), info.lastError(), Stored.of(items.get(i + 3))));
            }
            return new DeadSearch((long) number(items.get(0)), (long) number(items.get(1)),
                    (long) number(items.get(2)), out);
        });
    }

    /**
     * The queue figures of one slot, read in one script call (see stats.lua for what each counts): { waiting,
     * in flight, retrying, dead, oldest due (Redis ms, -1: PRIORITY or empty), Redis now (ms) }.
     */
    public CompletableFuture<long[]> stats(SlotKeys slot, boolean priority) {
        CompletableFuture<List<Object>> reply = gateway.eval(RmqScript.STATS, ScriptOutputType.MULTI, slot.all(),
                priority ? ONE : ZERO);
        return reply.thenApply(items -> {
            long[] figures = new long[6];
            for (int i = 0; i < figures.length; i++) {
                figures[i] = (long) number(items.get(i));
            }
            return figures;
        });
    }

    /**
     * The queue figures of every slot of a topic, in slot order, each as {@link #stats}: only the slots that hold
     * anything run stats.lua, the others read as all zero (oldest due -1), found with plain {@code EXISTS} of their
     * store, prepare, retry and dead keys. On a standalone server one {@code EXISTS} of every slot's keys answers for
     * a topic with nothing in Redis (the idle case: one command where stats.lua ran nine per slot), and stats.lua runs
     * on every slot otherwise; on a cluster one {@code EXISTS} per slot (a slot's keys share its hash tag), then
     * stats.lua for the occupied ones.
     */
    public CompletableFuture<List<long[]>> topicStats(SlotKeys[] slots, boolean priority) {
        if (!gateway.isCluster()) {
            return redis.leases().existingInAll(slots, RmqRedisAdmin::figureKeys).thenCompose(count -> {
                long[] occupied = new long[slots.length];
                java.util.Arrays.fill(occupied, count);
                return statsOf(slots, priority, occupied);
            });
        }
        return redis.leases().existingPerSlot(slots, RmqRedisAdmin::figureKeys)
                .thenCompose(occupied -> statsOf(slots, priority, occupied));
    }

    /** stats.lua for the slots with {@code occupied[i] > 0} (pipelined), zeros for the others. */
    private CompletableFuture<List<long[]>> statsOf(SlotKeys[] slots, boolean priority, long[] occupied) {
        List<CompletableFuture<long[]>> figures = new ArrayList<>(slots.length);
        for (int i = 0; i < slots.length; i++) {
            figures.add(occupied[i] > 0 ? stats(slots[i], priority)
                    : CompletableFuture.completedFuture(new long[] {0, 0, 0, 0, -1, -1}));
        }
        return CompletableFuture.allOf(figures.toArray(CompletableFuture[]::new))
                .thenApply(v -> figures.stream().map(CompletableFuture::join).toList());
    }

    /** The keys whose members stats.lua counts: a slot where none exists holds nothing. */
    private static byte[][] figureKeys(SlotKeys slot) {
        return new byte[][] {slot.store(), slot.prepare(), slot.retry(), slot.dead()};
    }

    /** The score of a member in a slot's store (null when absent). For tests and tooling. */
    public CompletableFuture<@Nullable Double> storeScore(SlotKeys slot, byte[] member) {
        return gateway.commands().zscore(slot.store(), member).toCompletableFuture();
    }

    /** The score of a member in a slot's dead queue: when it died, Redis's clock (ms; null when absent). */
    public CompletableFuture<@Nullable Double> deadScore(SlotKeys slot, byte[] member) {
        return gateway.commands().zscore(slot.dead(), member).toCompletableFuture();
    }

    /** A member's score in a slot's prepare (lease token / {@link RmqRedisLeases#TOKEN_UNITS}; null when absent). */
    public CompletableFuture<@Nullable Double> prepareScore(SlotKeys slot, byte[] member) {
        return gateway.commands().zscore(slot.prepare(), member).toCompletableFuture();
    }

    /**
     * The envelope stored for a member in its slot ({@link Envelope}; null when none), from its field or, for a body
     * without one, its trace record. For tests and tooling.
     */
    public CompletableFuture<byte @Nullable []> storedEnvelope(SlotKeys slot, byte[] member) {
        return gateway.commands().hget(slot.msg(), EnvelopeKeys.of(member)).toCompletableFuture()
                .thenCompose(found -> found != null || EnvelopeKeys.isIdMember(member)
                        ? CompletableFuture.completedFuture(found)
                        : gateway.commands().hget(slot.trace(), EnvelopeKeys.traceRecord(member, new byte[0])[0])
                                .toCompletableFuture().thenApply(record -> EnvelopeKeys.fromTraceRecord(member, record)));
    }

    /** How many members of a slot have a stored envelope or trace record. For tests and tooling. */
    public CompletableFuture<Long> storedEnvelopes(SlotKeys slot) {
        return gateway.commands().hlen(slot.msg()).toCompletableFuture()
                .thenCombine(gateway.commands().hlen(slot.trace()).toCompletableFuture(), Long::sum);
    }

    /** The legacy trace context an engine before envelopes stored beside a body ({@link TraceContexts}). For tests. */
    public CompletableFuture<byte @Nullable []> legacyContext(SlotKeys slot, byte[] member) {
        return gateway.commands().hget(slot.context(), member).toCompletableFuture();
    }

    /** Raw ZADD into a slot's store, bypassing validation and encoding. For tests and migration tooling. */
    public CompletableFuture<Long> rawAdd(SlotKeys slot, byte[] member, double score) {
        return gateway.commands().zadd(slot.store(), score, member).toCompletableFuture();
    }
}
