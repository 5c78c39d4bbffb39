package io.rmq.admin;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.admin.internal.AdminFactory;
import io.rmq.core.BodyCodec;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.SlotRouter;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicConflictException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisAdmin;
import io.rmq.redis.internal.RmqRedisAdmin.DeadEntry;
import org.jspecify.annotations.Nullable;

/**
 * Introspection and the operations behind "manual intervention": find, cancel, reschedule, browse and purge waiting
 * messages by their body or (methods named {@code ...ById}) by the id they were sent with; count, page through,
 * requeue, delete and purge dead messages; queue sizes per topic and slot. Views show a message's id, payload and
 * headers. Every change is one atomic script per slot.
 */
public final class RmqAdmin {

    private static final int CHUNK = 1000;

    /**
     * Most failed messages {@link #retries} examines per slot and request (retry entries and attempt counts each): a
     * failure storm costs one request a bounded amount of Redis work.
     */
    public static final int RETRIES_EXAMINED = 10_000;

    /** Most dead messages one {@link #searchDead} request examines, all slots together. */
    public static final int DEAD_SEARCH_EXAMINED = 10_000;

    /** Most keys one {@link #redis()} examines to count RMQ's keys, all masters together. */
    public static final int REDIS_KEYS_EXAMINED = io.rmq.redis.internal.RmqRedisServer.MAX_KEYS_EXAMINED;

    /** Most messages one bulk requeue or delete names. */
    public static final int MAX_SELECTION = 1000;

    private final RmqRedisAdmin redis;
    private final TopicRegistry topics;
    private final BodyCodec codec;

    static {
        AdminFactory.SEAM.register(RmqAdmin::new);
    }

    /**
     * Takes engine internals, so the {@link io.rmq.Rmq} facade makes it through {@link AdminFactory}.
     *
     * @param codec serializes bodies exactly as the producer does, so a body finds the message it was sent as
     */
    RmqAdmin(RmqRedisAdmin redis, TopicRegistry topics, BodyCodec codec) {
        this.redis = redis;
        this.topics = topics;
        this.codec = codec;
    }

    // ---------------------------------------------------------------- waiting messages by body

    /** Where the message with this body is (waiting with its score, in flight, retrying, dead). */
    public MessageStatus find(String topicName, Object body) {
        return find(topicName, body, null);
    }

    /** As {@link #find(String, Object)}, for a message sent with a {@code group}. */
    public MessageStatus find(String topicName, Object body, @Nullable String group) {
        return find(locate(topicName, body, group));
    }

    /** Whether the message with this body will still be handled: waiting, retrying or in flight (not dead). */
    public boolean contains(String topicName, Object body) {
        return find(topicName, body).isPending();
    }

    public boolean contains(String topicName, Object body, @Nullable String group) {
        return find(topicName, body, group).isPending();
    }

    /**
     * Cancels the message with this body: removes it where it waits, and its pending retry. A delivery in flight
     * cannot be recalled; it is reported, and once it ends without an ack it is dropped instead of handed out
     * again. A dead body is reported and left alone.
     */
    public CancelResult cancel(String topicName, Object body) {
        return cancel(topicName, body, null);
    }

    /** As {@link #cancel(String, Object)}, for a message sent with a {@code group}. */
    public CancelResult cancel(String topicName, Object body, @Nullable String group) {
        return cancel(locate(topicName, body, group));
    }

    /**
     * A new due time for a waiting RANGE_MERGE or FIXED_TIME message, whatever the merge rule (at or before now: due
     * at once). A message waiting for its retry moves its retry. In-flight and dead messages are not changed.
     */
    public RescheduleResult reschedule(String topicName, Object body, Instant dueAt) {
        return reschedule(topicName, body, null, dueAt);
    }

    public RescheduleResult reschedule(String topicName, Object body, @Nullable String group, Instant dueAt) {
        long millis = dueAtMillis(topicName, dueAt);
        return reschedule(locate(topicName, body, group), false, millis, "dueAt " + dueAt);
    }

    /**
     * A new priority for a waiting PRIORITY message, whatever the merge rule; one backing off after a failure comes
     * back with it. In-flight and dead messages are not changed.
     */
    public RescheduleResult reprioritize(String topicName, Object body, long priority) {
        return reprioritize(topicName, body, null, priority);
    }

    public RescheduleResult reprioritize(String topicName, Object body, @Nullable String group, long priority) {
        checkPriority(priority);
        return reschedule(locate(topicName, body, group), true, priority, "priority " + priority);
    }

    // ---------------------------------------------------------------- waiting messages by id

    /**
     * Where the message sent with this id is (waiting with its score, in flight, retrying, dead), with the payload and
     * headers of its latest send. Methods by id have names of their own: an id and a String body would make
     * overloads ambiguous.
     */
    public MessageStatus findById(String topicName, String id) {
        return findById(topicName, id, null);
    }

    /** As {@link #findById(String, String)}, for a message sent with a {@code group}. */
    public MessageStatus findById(String topicName, String id, @Nullable String group) {
        return find(locateId(topicName, id, group));
    }

    /** Whether the message sent with this id will still be handled: waiting, retrying or in flight (not dead). */
    public boolean containsById(String topicName, String id) {
        return findById(topicName, id).isPending();
    }

    public boolean containsById(String topicName, String id, @Nullable String group) {
        return findById(topicName, id, group).isPending();
    }

    /**
     * Cancels the message sent with this id, as {@link #cancel(String, Object)} does by body: a delivery in flight is
     * reported and not handed out again; a dead one is left alone. Its payload and headers go with its last copy.
     */
    public CancelResult cancelById(String topicName, String id) {
        return cancelById(topicName, id, null);
    }

    /** As {@link #cancelById(String, String)}, for a message sent with a {@code group}. */
    public CancelResult cancelById(String topicName, String id, @Nullable String group) {
        return cancel(locateId(topicName, id, group));
    }

    /** A new due time for the waiting message sent with this id, as {@link #reschedule(String, Object, Instant)}. */
    public RescheduleResult rescheduleById(String topicName, String id, Instant dueAt) {
        return rescheduleById(topicName, id, null, dueAt);
    }

    public RescheduleResult rescheduleById(String topicName, String id, @Nullable String group, Instant dueAt) {
        long millis = dueAtMillis(topicName, dueAt);
        return reschedule(locateId(topicName, id, group), false, millis, "dueAt " + dueAt);
    }

    /** A new priority for the waiting message sent with this id, as {@link #reprioritize(String, Object, long)}. */
    public RescheduleResult reprioritizeById(String topicName, String id, long priority) {
        return reprioritizeById(topicName, id, null, priority);
    }

    public RescheduleResult reprioritizeById(String topicName, String id, @Nullable String group, long priority) {
        checkPriority(priority);
        return reschedule(locateId(topicName, id, group), true, priority, "priority " + priority);
    }

    // ---------------------------------------------------------------- one located message

    private MessageStatus find(Located at) {
        String topicName = at.topic.name();
        RmqRedisAdmin.Whereabouts w = RedisGateway.await(redis.find(at.slot, at.member),
                "finding a message in " + topicName);
        boolean priority = at.topic.type() == TopicType.PRIORITY;
        Instant retryAt = null;
        boolean inFlight = w.prepareScore() != null;
        if (w.ordered() && w.retryScore() != null && inFlight) {
            retryAt = instant(w.retryScore()); // an ordered slot's failed head, suspended until its retry
            inFlight = false;
        }
        else if (priority && w.retryScore() != null) {
            retryAt = instant(w.retryScore());
        }
        else if (!priority && w.storeScore() != null && w.failedAttempts() > 0 && !inFlight) {
            retryAt = instant(w.storeScore()); // time types wait for their retry in the store
        }
        Instant diedAt = w.deadScore() == null ? null : instant(w.deadScore());
        return new MessageStatus(topicName, at.slot.slot(), payload(at.member, w.envelope()), w.storeScore(), inFlight,
                retryAt, w.failedAttempts(), diedAt, w.deadReason(), w.cancelled(), EnvelopeKeys.idOf(at.member),
                w.envelope().headers());
    }

    private CancelResult cancel(Located at) {
        boolean[] r = RedisGateway.await(redis.cancel(at.slot, at.topic.type() == TopicType.PRIORITY, at.member),
                "cancelling a message in " + at.topic.name());
        return new CancelResult(r[0], r[1], r[2], r[3]);
    }

    private static long dueAtMillis(String topicName, Instant dueAt) {
        if (dueAt == null) {
            throw new RmqInvalidArgumentException("dueAt", null, "must not be null");
        }
        long millis;
        try {
            millis = dueAt.toEpochMilli();
        }
        catch (ArithmeticException ex) {
            millis = Long.MAX_VALUE;
        }
        if (Math.abs(millis) > io.rmq.producer.OutgoingMessage.MAX_PRIORITY) {
            throw new RmqInvalidArgumentException("dueAt", dueAt, "must be within ±2^53 ms of the epoch (topic '"
                    + topicName + "')");
        }
        return millis;
    }

    private static void checkPriority(long priority) {
        if (Math.abs(priority) > io.rmq.producer.OutgoingMessage.MAX_PRIORITY) {
            throw new RmqInvalidArgumentException("priority", priority, "must be between -2^53 and 2^53 (exact in a"
                    + " Redis score)");
        }
    }

    private RescheduleResult reschedule(Located at, boolean byPriority, long score, String what) {
        String topicName = at.topic.name();
        boolean priority = at.topic.type() == TopicType.PRIORITY;
        if (priority != byPriority) {
            boolean byId = EnvelopeKeys.isIdMember(at.member);
            throw new RmqInvalidArgumentException("topic", topicName, at.topic.describe() + (priority
                    ? (byId ? " orders by priority: use reprioritizeById(topic, id, priority)"
                            : " orders by priority: use reprioritize(topic, body, priority)")
                    : (byId ? " orders by time: use rescheduleById(topic, id, dueAt)"
                            : " orders by time: use reschedule(topic, body, dueAt)")));
        }
        long code = RedisGateway.await(redis.reschedule(at.slot, priority, at.member, score),
                "rescheduling a message in " + topicName + " to " + what);
        return switch ((int) code) {
            case 1, 2 -> RescheduleResult.RESCHEDULED;
            case 3 -> RescheduleResult.IN_FLIGHT;
            case 4 -> RescheduleResult.DEAD;
            default -> RescheduleResult.NOT_FOUND;
        };
    }

    /**
     * A page of the topic's waiting messages in taking order across all slots: time types by due time (oldest first),
     * PRIORITY by priority (highest first).
     *
     * @param from  where to start: null for the beginning, else the {@code next} cursor of the previous page
     * @param limit the most messages to return (1 to 1000)
     */
    public BrowsePage browse(String topicName, BrowsePage.@Nullable Cursor from, int limit) {
        if (limit < 1 || limit > 1000) {
            throw new RmqInvalidArgumentException("limit", limit, "must be between 1 and 1000");
        }
        TopicDefinition topic = topics.get(topicName);
        if (from != null && (from.slot() < 0 || from.slot() >= topic.slotAmount())) {
            throw new RmqInvalidArgumentException("from", "slot " + from.slot(), "is not a cursor of " + topic.describe());
        }
        boolean priority = topic.type() == TopicType.PRIORITY;
        SlotKeys[] slots = redis.keys().slots(topic);
        List<CompletableFuture<List<RmqRedisAdmin.Browsed>>> pages = new ArrayList<>(slots.length);
        for (int i = 0; i < slots.length; i++) {
            String mode = from == null ? "first" : i < from.slot() ? "after" : i > from.slot() ? "at" : "cursor";
            pages.add(redis.browse(slots[i], priority, mode, from == null ? 0 : from.score(),
                    from == null || i != from.slot() ? null : from.member(), from == null ? 0 : from.tie(), limit));
        }
        RedisGateway.await(CompletableFuture.allOf(pages.toArray(CompletableFuture[]::new)), "browsing " + topicName);
        // merge: each slot's page is in taking order already; ties of score go to the lower slot
        int[] at = new int[slots.length];
        List<WaitingMessage> out = new ArrayList<>(limit);
        RmqRedisAdmin.Browsed last = null;
        int lastSlot = -1;
        while (out.size() < limit) {
            int best = -1;
            for (int i = 0; i < slots.length; i++) {
                List<RmqRedisAdmin.Browsed> page = pages.get(i).join();
                if (at[i] < page.size() && (best < 0 || comesFirst(page.get(at[i]).score(),
                        pages.get(best).join().get(at[best]).score(), priority))) {
                    best = i;
                }
            }
            if (best < 0) {
                break;
            }
            last = pages.get(best).join().get(at[best]++);
            lastSlot = best;
            out.add(new WaitingMessage(topicName, best, payload(last.member(), last.envelope()), last.score(),
                    last.failedAttempts(), EnvelopeKeys.idOf(last.member()), last.envelope().headers()));
        }
        BrowsePage.Cursor next = out.size() < limit || last == null ? null
                : new BrowsePage.Cursor(last.score(), lastSlot, last.member(), last.tie());
        return new BrowsePage(List.copyOf(out), next);
    }

    private static boolean comesFirst(double score, double than, boolean priority) {
        return priority ? score > than : score < than;
    }

    /**
     * Deletes every waiting message of the topic (and, PRIORITY, every retry backing off); in-flight deliveries and
     * the dead queue are untouched. Returns how many went.
     */
    public long purge(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return drainEachSlot(topic, slot -> redis.purge(slot, priority, CHUNK));
    }

    private record Located(TopicDefinition topic, SlotKeys slot, byte[] member) {
    }

    /** The slot and member of an id, routed as a send routes it: by its group, else by the id. */
    private Located locateId(String topicName, String id, @Nullable String group) {
        TopicDefinition topic = topics.get(topicName);
        if (id == null) {
            throw new RmqInvalidArgumentException("id", null, "must not be null (topic '" + topicName + "')");
        }
        if (id.isEmpty()) {
            throw new RmqInvalidArgumentException("id", "", "must not be empty (topic '" + topicName + "')");
        }
        if (group != null && group.isEmpty()) {
            throw new RmqInvalidArgumentException("group", "", "must be null or non-empty (topic '" + topicName
                    + "')");
        }
        byte[] routing = id.getBytes(StandardCharsets.UTF_8);
        return new Located(topic, redis.keys().slots(topic)[SlotRouter.slot(routing, group, topic.slotAmount())],
                EnvelopeKeys.idMember(id));
    }

    /**
     * What a view shows as a message's body: the member itself, or for an id message the payload its latest send
     * stored (empty when none is stored: the message is gone, or its envelope was removed by hand).
     */
    private static byte[] payload(byte[] member, RmqRedisAdmin.Stored stored) {
        if (!EnvelopeKeys.isIdMember(member)) {
            return member;
        }
        return stored.payload() == null ? new byte[0] : stored.payload();
    }

    /** The member a view of a message names: 0xFF + id for an id message, else its body. */
    private static byte[] member(@Nullable String id, byte[] body) {
        return id == null ? body : EnvelopeKeys.idMember(id);
    }

    /** The slot and stored member of a body, serialized as a send serializes it. */
    private Located locate(String topicName, Object body, @Nullable String group) {
        TopicDefinition topic = topics.get(topicName);
        if (body == null) {
            throw new RmqInvalidArgumentException("body", null, "must not be null (topic '" + topicName + "')");
        }
        if (group != null && group.isEmpty()) {
            throw new RmqInvalidArgumentException("group", "", "must be null or non-empty (topic '" + topicName
                    + "')");
        }
        byte[] member = codec.encode(body);
        if (member.length == 0) {
            throw new RmqInvalidArgumentException("body", "0 bytes", "must not be empty (topic '" + topicName + "')");
        }
        return new Located(topic, redis.keys().slots(topic)[SlotRouter.slot(member, group, topic.slotAmount())],
                member);
    }

    private static Instant instant(double epochMillis) {
        return Instant.ofEpochMilli((long) epochMillis);
    }

    // ---------------------------------------------------------------- sizes, ordering

    /**
     * The topic's queue figures (waiting, in flight, retrying, dead, oldest due), in total and per slot: one script
     * call per slot (stats.lua), pipelined, so one round trip for the whole topic and {@code slotAmount} commands.
     */
    public TopicStats stats(String topicName) {
        return RedisGateway.await(statsAsync(topicName), "reading the queue figures of " + topicName);
    }

    /** {@link #stats(String)} without waiting: for callers that bound the wait themselves (health checks). */
    public CompletableFuture<TopicStats> statsAsync(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        boolean priority = topic.type() == TopicType.PRIORITY;
        // one script call per slot (stats.lua), all pipelined on the connection: one round for the whole topic
        List<CompletableFuture<long[]>> figures = new ArrayList<>(slots.length);
        for (SlotKeys slot : slots) {
            figures.add(redis.stats(slot, priority));
        }
        return CompletableFuture.allOf(figures.toArray(CompletableFuture[]::new))
                .thenApply(v -> sum(topicName, figures));
    }

    private static TopicStats sum(String topicName, List<CompletableFuture<long[]>> figures) {
        List<TopicStats.SlotStats> perSlot = new ArrayList<>(figures.size());
        long waiting = 0;
        long inFlight = 0;
        long retrying = 0;
        long dead = 0;
        long oldest = -1;
        for (int i = 0; i < figures.size(); i++) {
            long[] s = figures.get(i).join();
            perSlot.add(new TopicStats.SlotStats(i, s[0], s[1], s[3], s[2], s[4] < 0 ? null : Instant.ofEpochMilli(s[4])));
            waiting += s[0];
            inFlight += s[1];
            retrying += s[2];
            dead += s[3];
            if (s[4] >= 0 && (oldest < 0 || s[4] < oldest)) {
                oldest = s[4];
            }
        }
        return new TopicStats(topicName, waiting, inFlight, dead, retrying,
                oldest < 0 ? null : Instant.ofEpochMilli(oldest), List.copyOf(perSlot));
    }

    /**
     * Ends ORDERLY consumption of a topic so CONCURRENT listeners may consume it: every slot's owner key goes (a
     * graceful stop leaves none; an ORDERLY consumer that died does), what ordered consumers had taken and not
     * settled goes back to the store, and the topic's registered consume mode becomes CONCURRENT. Stop the ORDERLY
     * listeners first: fails, naming the slots, while any slot is still owned.
     *
     * @return how many messages went back to the store
     */
    public long endOrdering(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        // a leased owner holds its slot while it is a live member
        io.rmq.redis.internal.MembersBeat live = RedisGateway.await(redis.liveMembers(topicName),
                "reading the ordered consumers of " + topicName);
        List<CompletableFuture<Long>> ends = new ArrayList<>(slots.length);
        for (SlotKeys slot : slots) {
            ends.add(redis.endOrdering(slot, topic.type() == TopicType.PRIORITY, live));
        }
        RedisGateway.await(CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new)),
                "ending ordered consumption of " + topicName);
        long moved = 0;
        List<Integer> owned = new ArrayList<>();
        for (int i = 0; i < slots.length; i++) {
            long result = ends.get(i).join();
            if (result < 0) {
                owned.add(i);
            }
            else {
                moved += result;
            }
        }
        if (!owned.isEmpty()) {
            throw new io.rmq.core.RmqException("Cannot end ordered consumption of topic '" + topicName + "': slot(s) "
                    + owned + " are still owned by running ORDERLY listeners; stop them first");
        }
        setConsumeMode(topic, ConsumeMode.CONCURRENT);
        return moved;
    }

    /**
     * Lets a topic consumed CONCURRENT be consumed ORDERLY: its registered consume mode becomes ORDERLY. Stop its
     * CONCURRENT listeners first (what they hold in flight is released when they stop gracefully; leases of one that
     * died are handed to the first ORDERLY owner as held messages).
     */
    public void beginOrdering(String topicName) {
        setConsumeMode(topics.get(topicName), ConsumeMode.ORDERLY);
    }

    private void setConsumeMode(TopicDefinition topic, ConsumeMode mode) {
        TopicDefinition wanted = topic.withMode(mode);
        TopicDefinition registered = RedisGateway.await(redis.setConsumeMode(wanted), "setting the consume mode of "
                + topic.name());
        if (!registered.agreesWith(wanted)) {
            throw new TopicConflictException(registered, wanted, "registered in Redis");
        }
        topics.redefined(registered);
    }

    // ---------------------------------------------------------------- history

    /**
     * What the topic's senders and consumers counted over the last hour (per minute) or day (per hour); see
     * {@link TopicHistory}. An unknown topic, or one no engine counted anything for, has zeros only.
     */
    public TopicHistory history(String topicName, TopicHistory.Resolution resolution) {
        TopicDefinition.validateName(topicName);
        io.rmq.redis.internal.RmqRedisHistory.Reading reading = RedisGateway.await(redis.history().read(topicName),
                "reading the history of topic " + topicName);
        java.util.Map<Long, long[]> stored = resolution == TopicHistory.Resolution.MINUTE ? reading.minutes()
                : reading.hours();
        long current = Math.floorDiv(reading.now(), resolution.millis());
        long first = current - resolution.points() + 1;
        List<TopicHistory.Point> points = new ArrayList<>(resolution.points());
        for (long n = first; n <= current; n++) {
            long[] c = stored.getOrDefault(n, new long[io.rmq.redis.internal.RmqRedisHistory.KINDS]);
            points.add(new TopicHistory.Point(Instant.ofEpochMilli(n * resolution.millis()), c[0], c[1], c[2], c[3],
                    c[4]));
        }
        return new TopicHistory(topicName, resolution, Instant.ofEpochMilli(first * resolution.millis()),
                Instant.ofEpochMilli((current + 1) * resolution.millis()), List.copyOf(points));
    }

    public long deadCount(String topic) {
        return stats(topic).dead();
    }

    /**
     * A page of the topic's dead messages: slot by slot, oldest death first within a slot.
     *
     * @param offset how many dead messages to skip
     * @param limit  the most to return
     */
    /** How many messages of a topic are in flight (taken and not settled), over all slots. */
    public long inFlightCount(String topicName) {
        return stats(topicName).inFlight();
    }

    /**
     * A page of the messages in flight: slot by slot, within a slot by prepare score (CONCURRENT: soonest lease
     * deadline first).
     */
    public List<InFlightMessage> inFlightMessages(String topicName, long offset, int limit) {
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
        if (limit < 1) {
            throw new RmqInvalidArgumentException("limit", limit, "must be at least 1");
        }
        TopicDefinition topic = topics.get(topicName);
        ConsumeMode mode = RedisGateway.await(redis.topics(), "reading the registered topics")
                .getOrDefault(topicName, topic).mode();
        SlotKeys[] slots = redis.keys().slots(topic);
        List<InFlightMessage> out = new ArrayList<>();
        long skip = offset;
        for (TopicStats.SlotStats slot : stats(topicName).slots()) {
            if (out.size() >= limit) {
                break;
            }
            if (skip >= slot.inFlight()) {
                skip -= slot.inFlight();
                continue;
            }
            List<RmqRedisAdmin.InFlightEntry> entries = RedisGateway.await(redis.inFlightPage(slots[slot.slot()], skip,
                    limit - out.size()), "reading messages in flight of " + topicName);
            skip = 0;
            for (RmqRedisAdmin.InFlightEntry e : entries) {
                // a CONCURRENT prepare score is the lease token: deadline ms + k/1024
                Long deadline = mode == ConsumeMode.ORDERLY ? null : (long) Math.floor(e.score());
                out.add(new InFlightMessage(topicName, slot.slot(), e.member(), EnvelopeKeys.idOf(e.member()),
                        payload(e.member(), e.envelope()), deadline, e.failedAttempts() + 1, mode,
                        e.envelope().headers()));
            }
        }
        return out;
    }

    public List<DeadMessage> deadMessages(String topicName, long offset, int limit) {
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
        if (limit < 1) {
            throw new RmqInvalidArgumentException("limit", limit, "must be at least 1");
        }
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        List<DeadMessage> out = new ArrayList<>();
        long skip = offset;
        for (TopicStats.SlotStats slot : stats(topicName).slots()) {
            if (out.size() >= limit) {
                break;
            }
            if (skip >= slot.dead()) {
                skip -= slot.dead();
                continue;
            }
            List<DeadEntry> entries = RedisGateway.await(redis.deadPage(slots[slot.slot()], skip, limit - out.size()),
                    "reading dead messages of " + topicName);
            skip = 0;
            for (DeadEntry e : entries) {
                out.add(deadMessage(topic, slot.slot(), e));
            }
        }
        return out;
    }

    /**
     * Makes one dead message deliverable again with a fresh attempt count; false if it was not dead. A message sent with
     * an id is named by its id (and comes back with the payload and headers stored for it), else by its body.
     */
    public boolean requeueDead(DeadMessage message) {
        TopicDefinition topic = topics.get(message.topic());
        return RedisGateway.await(redis.deadRequeue(slotKeys(topic, message.slot()),
                topic.type() == TopicType.PRIORITY, 1, List.of(member(message.id(), message.body()))),
                "requeueing a dead message") == 1;
    }

    /** Requeues every dead message of the topic; returns how many. */
    public long requeueAllDead(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return drainEachSlot(topic, slot -> redis.deadRequeue(slot, priority, CHUNK, List.of()));
    }

    /** Deletes one dead message for good (named as in {@link #requeueDead}); false if it was not dead. */
    public boolean deleteDead(DeadMessage message) {
        TopicDefinition topic = topics.get(message.topic());
        return RedisGateway.await(redis.deadDelete(slotKeys(topic, message.slot()), 1,
                List.of(member(message.id(), message.body()))), "deleting a dead message") == 1;
    }

    /** Deletes every dead message of the topic; returns how many. */
    public long purgeDead(String topicName) {
        return drainEachSlot(topics.get(topicName), slot -> redis.deadDelete(slot, CHUNK, List.of()));
    }

    // ---------------------------------------------------------------- retries, dead search, bulk, Redis

    /**
     * A page of the topic's messages waiting for a retry (the ones {@link TopicStats#retrying()} counts): slot by slot,
     * soonest next attempt first within a slot, each with its attempts and, when the engine noted it, its latest
     * failure's reason and time. Bounded: at most {@link #RETRIES_EXAMINED} failed messages examined per slot.
     *
     * @param offset how many to skip
     * @param limit  the most to return (1 to 1000)
     */
    public RetryPage retries(String topicName, long offset, int limit) {
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
        if (limit < 1 || limit > 1000) {
            throw new RmqInvalidArgumentException("limit", limit, "must be between 1 and 1000");
        }
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        SlotKeys[] slots = redis.keys().slots(topic);
        // first each slot's count (pipelined: one round), then the pages of the slots the window covers
        List<CompletableFuture<RmqRedisAdmin.Retries>> counts = new ArrayList<>(slots.length);
        for (SlotKeys slot : slots) {
            counts.add(redis.retries(slot, priority, 0, 0, RETRIES_EXAMINED));
        }
        RedisGateway.await(CompletableFuture.allOf(counts.toArray(CompletableFuture[]::new)),
                "counting the retries of " + topicName);
        long total = 0;
        boolean capped = false;
        for (CompletableFuture<RmqRedisAdmin.Retries> count : counts) {
            total += count.join().total();
            capped |= count.join().capped();
        }
        List<RetryingMessage> out = new ArrayList<>(limit);
        long skip = offset;
        for (int i = 0; i < slots.length && out.size() < limit; i++) {
            long inSlot = counts.get(i).join().total();
            if (skip >= inSlot) {
                skip -= inSlot;
                continue;
            }
            RmqRedisAdmin.Retries page = RedisGateway.await(redis.retries(slots[i], priority, skip, limit - out.size(),
                    RETRIES_EXAMINED), "reading the retries of " + topicName);
            skip = 0;
            for (RmqRedisAdmin.RetryEntry e : page.entries()) {
                out.add(new RetryingMessage(topicName, i, payload(e.member(), e.envelope()), e.attempts(),
                        Instant.ofEpochMilli(e.nextAttemptAt()), e.lastError(),
                        e.failedAt() < 0 ? null : Instant.ofEpochMilli(e.failedAt()), EnvelopeKeys.idOf(e.member()),
                        e.envelope().headers()));
            }
        }
        return new RetryPage(List.copyOf(out), total, capped);
    }

    /**
     * Searches the topic's dead messages: those whose last error contains {@code error} (ignoring the case of ASCII
     * letters) and whose id (messages sent with one) or body (the others) starts with {@code prefix}; null or empty
     * matches all. Slot by slot, oldest death first within a slot; at most {@link #DEAD_SEARCH_EXAMINED} dead messages
     * examined per request ({@link DeadSearchPage#capped()} says when the search stopped there).
     *
     * @param offset how many matches to skip
     * @param limit  the most to return (1 to 1000)
     */
    public DeadSearchPage searchDead(String topicName, @Nullable String error, @Nullable String prefix, long offset,
            int limit) {
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
        if (limit < 1 || limit > 1000) {
            throw new RmqInvalidArgumentException("limit", limit, "must be between 1 and 1000");
        }
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        String needle = error == null ? "" : asciiLowerCase(error);
        byte[] start = prefix == null ? new byte[0] : prefix.getBytes(StandardCharsets.UTF_8);
        List<DeadMessage> out = new ArrayList<>(limit);
        long total = 0;
        long scanned = 0;
        long skip = offset;
        boolean capped = false;
        for (int i = 0; i < slots.length; i++) {
            int budget = (int) (DEAD_SEARCH_EXAMINED - scanned);
            RmqRedisAdmin.DeadSearch found = RedisGateway.await(redis.deadSearch(slots[i], needle, start, 0,
                    Math.max(budget, 0), skip, limit - out.size()), "searching the dead messages of " + topicName);
            scanned += found.examined();
            total += found.matches();
            skip = Math.max(0, skip - found.matches());
            for (DeadEntry e : found.entries()) {
                out.add(deadMessage(topic, i, e));
            }
            if (found.left() > 0) {
                capped = true; // the budget ran out in this slot; later slots are not examined either
                break;
            }
        }
        return new DeadSearchPage(List.copyOf(out), total, scanned, capped);
    }

    private static String asciiLowerCase(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            out.append(c >= 'A' && c <= 'Z' ? (char) (c + 32) : c);
        }
        return out.toString();
    }

    private DeadMessage deadMessage(TopicDefinition topic, int slot, DeadEntry e) {
        Long priority = topic.type() == TopicType.PRIORITY && !e.priority().isEmpty()
                ? (long) Double.parseDouble(e.priority()) : null;
        return new DeadMessage(topic.name(), slot, payload(e.member(), e.envelope()), Instant.ofEpochMilli(e.diedAt()),
                e.attempts(), priority, e.lastError(), EnvelopeKeys.idOf(e.member()), e.envelope().headers());
    }

    /**
     * Requeues a selection of dead messages of one topic (each named as in {@link #requeueDead(DeadMessage)}: by id or
     * by body, with its slot), one script call per slot, pipelined. Returns how many were dead and came back.
     */
    public long requeueDead(String topicName, List<DeadMessage> selection) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return eachSlotOf(topic, selection, (slot, members) -> redis.deadRequeue(slot, priority, members.size(),
                members), "requeueing dead messages of " + topicName);
    }

    /** Deletes a selection of dead messages of one topic (named as in {@link #requeueDead(String, List)}). */
    public long deleteDead(String topicName, List<DeadMessage> selection) {
        TopicDefinition topic = topics.get(topicName);
        return eachSlotOf(topic, selection, (slot, members) -> redis.deadDelete(slot, members.size(), members),
                "deleting dead messages of " + topicName);
    }

    /**
     * Requeues the dead messages that match a search ({@code error} and {@code prefix} as in {@link #searchDead}),
     * bounded per request: the first {@link #MAX_SELECTION} matches among at most {@link #DEAD_SEARCH_EXAMINED} dead
     * messages examined. The result says how many were requeued (a match removed meanwhile by someone else is not
     * counted) and whether matches were left for another request.
     */
    public DeadBulkResult requeueDeadMatching(String topicName, @Nullable String error, @Nullable String prefix) {
        DeadSearchPage found = searchDead(topicName, error, prefix, 0, MAX_SELECTION);
        long acted = found.messages().isEmpty() ? 0 : requeueDead(topicName, found.messages());
        return bulkResult(found, acted);
    }

    /** Deletes the dead messages that match a search, bounded as {@link #requeueDeadMatching} is. */
    public DeadBulkResult deleteDeadMatching(String topicName, @Nullable String error, @Nullable String prefix) {
        DeadSearchPage found = searchDead(topicName, error, prefix, 0, MAX_SELECTION);
        long acted = found.messages().isEmpty() ? 0 : deleteDead(topicName, found.messages());
        return bulkResult(found, acted);
    }

    private static DeadBulkResult bulkResult(DeadSearchPage found, long acted) {
        return new DeadBulkResult(acted, found.total(), found.scanned(),
                found.capped() || found.total() > found.messages().size());
    }

    /**
     * The topic's dead messages counted by error class (see {@link DeadErrorGroups}), most first: slot by slot, at most
     * {@link #DEAD_SEARCH_EXAMINED} dead messages examined per request, and only their error texts read.
     */
    public DeadErrorGroups deadErrorGroups(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        java.util.Map<String, Long> counts = new java.util.HashMap<>();
        long scanned = 0;
        boolean capped = false;
        for (SlotKeys slot : slots) {
            int budget = (int) (DEAD_SEARCH_EXAMINED - scanned);
            RmqRedisAdmin.DeadGroups groups = RedisGateway.await(redis.deadGroups(slot, 0, Math.max(budget, 0)),
                    "counting the dead messages of " + topicName + " by error");
            scanned += groups.examined();
            groups.counts().forEach((errorClass, count) -> counts.merge(errorClass, count, Long::sum));
            if (groups.left() > 0) {
                capped = true; // the budget ran out in this slot; later slots are not examined either
                break;
            }
        }
        List<DeadErrorGroups.Group> out = new ArrayList<>(counts.size());
        counts.forEach((errorClass, count) -> out.add(new DeadErrorGroups.Group(errorClass, count)));
        out.sort(java.util.Comparator.comparingLong(DeadErrorGroups.Group::count).reversed()
                .thenComparing(DeadErrorGroups.Group::errorClass));
        return new DeadErrorGroups(List.copyOf(out), scanned, capped);
    }

    // ---------------------------------------------------------------- selections of waiting and retrying messages

    /**
     * "Run now" for a selection of messages (at most {@link #MAX_SELECTION}; each by the slot and member a view listed):
     * a message waiting for its retry has its backoff ended, and is handed out as soon as a consumer takes it, its
     * attempt count kept; a waiting message of a RANGE_MERGE or FIXED_TIME topic becomes due now. A PRIORITY message
     * that waits in the store is due already (its place in line is its priority: {@link #reprioritize} moves it) and
     * is left alone, as are messages in flight, dead or gone. One script call per slot, pipelined.
     *
     * @return how many of them are now due (were waiting, or retrying)
     */
    public long runNow(String topicName, List<MessageRef> messages) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return eachSlotOfRefs(topic, messages, (slot, members) -> redis.runNow(slot, priority, members),
                "making messages of " + topicName + " due now");
    }

    /**
     * Cancels a selection of messages (at most {@link #MAX_SELECTION}; each by the slot and member a view listed) as
     * {@link #cancel(String, Object)} cancels one: removed where they wait, their pending retries too; a delivery in
     * flight is marked and not handed out again; a dead one is left alone.
     *
     * @return how many were removed (waiting or retrying); in-flight ones marked are not counted
     */
    public long cancelSelected(String topicName, List<MessageRef> messages) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return eachSlotOfRefs(topic, messages, (slot, members) -> {
            List<CompletableFuture<boolean[]>> each = new ArrayList<>(members.size());
            for (byte[] member : members) {
                each.add(redis.cancel(slot, priority, member));
            }
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> each.stream()
                    .map(CompletableFuture::join).filter(r -> r[0] || r[1]).count());
        }, "cancelling messages of " + topicName);
    }

    private long eachSlotOfRefs(TopicDefinition topic, List<MessageRef> messages,
            java.util.function.BiFunction<SlotKeys, List<byte[]>, CompletableFuture<Long>> action, String what) {
        if (messages == null || messages.isEmpty()) {
            throw new RmqInvalidArgumentException("messages", messages, "must name at least one message");
        }
        if (messages.size() > MAX_SELECTION) {
            throw new RmqInvalidArgumentException("messages", messages.size() + " messages", "must be at most "
                    + MAX_SELECTION + " per request");
        }
        java.util.Map<Integer, List<byte[]>> bySlot = new java.util.TreeMap<>();
        for (MessageRef message : messages) {
            slotKeys(topic, message.slot()); // checks the slot
            bySlot.computeIfAbsent(message.slot(), s -> new ArrayList<>()).add(message.member());
        }
        List<CompletableFuture<Long>> done = new ArrayList<>(bySlot.size());
        bySlot.forEach((slot, members) -> done.add(action.apply(redis.keys().slots(topic)[slot], members)));
        RedisGateway.await(CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)), what);
        return done.stream().mapToLong(CompletableFuture::join).sum();
    }

    private long eachSlotOf(TopicDefinition topic, List<DeadMessage> selection,
            java.util.function.BiFunction<SlotKeys, List<byte[]>, CompletableFuture<Long>> action, String what) {
        if (selection.size() > MAX_SELECTION) {
            throw new RmqInvalidArgumentException("messages", selection.size() + " messages", "must be at most "
                    + MAX_SELECTION + " per request");
        }
        java.util.Map<Integer, List<byte[]>> bySlot = new java.util.TreeMap<>();
        for (DeadMessage message : selection) {
            if (!message.topic().equals(topic.name())) {
                throw new RmqInvalidArgumentException("topic", message.topic(), "must be " + topic.name()
                        + " for every message of the selection");
            }
            slotKeys(topic, message.slot()); // checks the slot
            bySlot.computeIfAbsent(message.slot(), s -> new ArrayList<>()).add(member(message.id(), message.body()));
        }
        List<CompletableFuture<Long>> done = new ArrayList<>(bySlot.size());
        bySlot.forEach((slot, members) -> done.add(action.apply(redis.keys().slots(topic)[slot], members)));
        RedisGateway.await(CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)), what);
        return done.stream().mapToLong(CompletableFuture::join).sum();
    }

    /**
     * The Redis RMQ uses: version, mode, memory, clients, the cluster's nodes, and how many keys carry RMQ's prefix
     * (SCAN, at most {@link #REDIS_KEYS_EXAMINED} keys examined per call).
     */
    public RedisFigures redis() {
        io.rmq.redis.internal.RmqRedisServer.Figures f = redis.server().figures();
        return new RedisFigures(f.version(), f.mode(), f.usedMemory(), f.peakMemory(), f.clients(), f.rmqKeys(),
                f.rmqKeysCapped(), f.nodes().stream().map(n -> new RedisFigures.Node(n.id(), n.address(), n.role(),
                        n.slots(), n.state())).toList());
    }

    private long drainEachSlot(TopicDefinition topic, java.util.function.Function<SlotKeys, CompletableFuture<Long>> chunk) {
        long total = 0;
        for (SlotKeys slot : redis.keys().slots(topic)) {
            long moved;
            do {
                moved = RedisGateway.await(chunk.apply(slot), "working through the dead queue of " + topic.name());
                total += moved;
            } while (moved == CHUNK);
        }
        return total;
    }

    private SlotKeys slotKeys(TopicDefinition topic, int slot) {
        if (slot < 0 || slot >= topic.slotAmount()) {
            throw new RmqInvalidArgumentException("slot", slot, "must be between 0 and " + (topic.slotAmount() - 1)
                    + " for " + topic.describe());
        }
        return redis.keys().slots(topic)[slot];
    }
}
