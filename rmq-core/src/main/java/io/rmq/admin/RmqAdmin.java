package io.rmq.admin;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.admin.internal.AdminFactory;
import io.rmq.admin.internal.DeadLetters;
import io.rmq.admin.internal.MessageActions;
import io.rmq.admin.internal.MessageLocator;
import io.rmq.core.BodyCodec;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicConflictException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisAdmin;
import io.rmq.redis.internal.RmqRedisAdmin.DeadEntry;
import org.jspecify.annotations.Nullable;

/**
 * Introspection and the operations behind "manual intervention": find, cancel, reschedule, browse and purge waiting
 * messages; count, page through, search, requeue, delete and purge dead messages; queue sizes per topic and slot. One
 * message is named by a {@link MessageRef}: by the body or the id it was sent with (and its group), or as a view
 * listed it. Views show a message's id, payload and headers. Every change is one atomic script per slot. Holds no
 * mutable state; thread-safe.
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
    private final MessageActions messages;
    private final DeadLetters deadLetters;

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
        MessageLocator locator = new MessageLocator(redis, topics, codec);
        this.messages = new MessageActions(redis, locator);
        this.deadLetters = new DeadLetters(redis, locator);
    }

    // ---------------------------------------------------------------- one message

    /**
     * Where the message is (waiting with its score, in flight, retrying, dead), with the payload and headers of its
     * latest send.
     */
    public MessageStatus find(MessageRef message) {
        return messages.find(message);
    }

    /** Whether the message will still be handled: waiting, retrying or in flight (not dead). */
    public boolean contains(MessageRef message) {
        return find(message).isPending();
    }

    /**
     * Cancels the message: removes it where it waits, and its pending retry. A delivery in flight cannot be recalled;
     * it is reported, and once it ends without an ack it is dropped instead of handed out again. A dead message is
     * reported and left alone. A message sent with an id takes its payload and headers with its last copy.
     */
    public CancelResult cancel(MessageRef message) {
        return messages.cancel(message);
    }

    /**
     * A new due time for a waiting RANGE_MERGE or FIXED_TIME message, whatever the merge rule (at or before now: due
     * at once). A message waiting for its retry moves its retry. In-flight and dead messages are not changed.
     */
    public RescheduleResult reschedule(MessageRef message, Instant dueAt) {
        return messages.reschedule(message, dueAt);
    }

    /**
     * A new priority for a waiting PRIORITY message, whatever the merge rule; one backing off after a failure comes
     * back with it. In-flight and dead messages are not changed.
     */
    public RescheduleResult reprioritize(MessageRef message, long priority) {
        return messages.reprioritize(message, priority);
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
            out.add(new WaitingMessage(topicName, best, MessageLocator.payload(last.member(), last.envelope()),
                    last.score(), last.failedAttempts(), MessageLocator.idOf(last.member()),
                    last.envelope().headers()));
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
                out.add(new InFlightMessage(topicName, slot.slot(), e.member(), MessageLocator.idOf(e.member()),
                        MessageLocator.payload(e.member(), e.envelope()), deadline, e.failedAttempts() + 1, mode,
                        e.envelope().headers()));
            }
        }
        return out;
    }

    /**
     * A page of the topic's dead messages: slot by slot, oldest death first within a slot.
     *
     * @param offset how many dead messages to skip
     * @param limit  the most to return
     */
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
                out.add(DeadLetters.deadMessage(topic, slot.slot(), e));
            }
        }
        return out;
    }

    /**
     * Makes one dead message deliverable again with a fresh attempt count; false if it was not dead. A message sent
     * with an id comes back with the payload and headers stored for it. {@link DeadMessage#ref()} names a listed one.
     */
    public boolean requeueDead(MessageRef message) {
        return deadLetters.requeue(message);
    }

    /** Requeues every dead message of the topic; returns how many. */
    public long requeueAllDead(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return drainEachSlot(topic, slot -> redis.deadRequeue(slot, priority, CHUNK, List.of()));
    }

    /** Deletes one dead message for good; false if it was not dead. */
    public boolean deleteDead(MessageRef message) {
        return deadLetters.delete(message);
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
                out.add(new RetryingMessage(topicName, i, MessageLocator.payload(e.member(), e.envelope()),
                        e.attempts(), Instant.ofEpochMilli(e.nextAttemptAt()), e.lastError(),
                        e.failedAt() < 0 ? null : Instant.ofEpochMilli(e.failedAt()), MessageLocator.idOf(e.member()),
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
        return deadLetters.search(topicName, error, prefix, offset, limit);
    }

    /**
     * Requeues a selection of dead messages of one topic (at most {@link #MAX_SELECTION}, each named as in
     * {@link #requeueDead(MessageRef)}), one script call per slot, pipelined. Returns how many were dead and came back.
     */
    public long requeueDead(String topicName, List<MessageRef> selection) {
        return deadLetters.requeue(topicName, selection);
    }

    /** Deletes a selection of dead messages of one topic (named as in {@link #requeueDead(String, List)}). */
    public long deleteDead(String topicName, List<MessageRef> selection) {
        return deadLetters.delete(topicName, selection);
    }

    /**
     * Requeues the dead messages that match a search ({@code error} and {@code prefix} as in {@link #searchDead}),
     * bounded per request: the first {@link #MAX_SELECTION} matches among at most {@link #DEAD_SEARCH_EXAMINED} dead
     * messages examined. The result says how many were requeued (a match removed meanwhile by someone else is not
     * counted) and whether matches were left for another request.
     */
    public DeadBulkResult requeueDeadMatching(String topicName, @Nullable String error, @Nullable String prefix) {
        return deadLetters.matching(true, topicName, error, prefix);
    }

    /** Deletes the dead messages that match a search, bounded as {@link #requeueDeadMatching} is. */
    public DeadBulkResult deleteDeadMatching(String topicName, @Nullable String error, @Nullable String prefix) {
        return deadLetters.matching(false, topicName, error, prefix);
    }

    /**
     * The topic's dead messages counted by error class (see {@link DeadErrorGroups}), most first: slot by slot, at most
     * {@link #DEAD_SEARCH_EXAMINED} dead messages examined per request, and only their error texts read.
     */
    public DeadErrorGroups deadErrorGroups(String topicName) {
        return deadLetters.errorGroups(topicName);
    }

    // ---------------------------------------------------------------- selections of waiting and retrying messages

    /**
     * "Run now" for a selection of messages of one topic (at most {@link #MAX_SELECTION}; each as a view listed it,
     * its {@code ref()}): a message waiting for its retry has its backoff ended, and is handed out as soon as a
     * consumer takes it, its attempt count kept; a waiting message of a RANGE_MERGE or FIXED_TIME topic becomes due
     * now. A PRIORITY message that waits in the store is due already (its place in line is its priority:
     * {@link #reprioritize} moves it) and is left alone, as are messages in flight, dead or gone. One script call per
     * slot, pipelined.
     *
     * @return how many of them are now due (were waiting, or retrying)
     */
    public long runNow(String topicName, List<MessageRef> messages) {
        return this.messages.runNow(topicName, messages);
    }

    /**
     * Cancels a selection of messages of one topic (at most {@link #MAX_SELECTION}) as {@link #cancel(MessageRef)}
     * cancels one: removed where they wait, their pending retries too; a delivery in flight is marked and not handed
     * out again; a dead one is left alone.
     *
     * @return how many were removed (waiting or retrying); in-flight ones marked are not counted
     */
    public long cancelSelected(String topicName, List<MessageRef> messages) {
        return this.messages.cancelSelected(topicName, messages);
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

}
