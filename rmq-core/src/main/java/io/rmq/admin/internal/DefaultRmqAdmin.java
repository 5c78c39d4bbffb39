package io.rmq.admin.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.admin.BrowsePage;
import io.rmq.admin.CancelResult;
import io.rmq.admin.DeadBulkResult;
import io.rmq.admin.DeadErrorGroups;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.DeadSearchPage;
import io.rmq.admin.InFlightMessage;
import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.RedisFigures;
import io.rmq.admin.RescheduleResult;
import io.rmq.admin.RetryPage;
import io.rmq.admin.RetryingMessage;
import io.rmq.admin.RmqAdmin;
import io.rmq.admin.TopicHistory;
import io.rmq.admin.TopicStats;
import io.rmq.admin.WaitingMessage;
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
 * The {@link RmqAdmin} of an engine: resolves topics, then hands one-message operations to {@link MessageActions},
 * dead-queue operations to {@link DeadLetters}, and runs the views and bulk operations itself, one atomic script per
 * slot. Holds no mutable state; thread-safe.
 */
public final class DefaultRmqAdmin implements RmqAdmin {

    private static final int CHUNK = 1000;

    private final RmqRedisAdmin redis;
    private final TopicRegistry topics;
    private final MessageActions messages;
    private final DeadLetters deadLetters;

    /**
     * Made by the {@link io.rmq.Rmq} facade.
     *
     * @param codec serializes bodies exactly as the producer does, so a body finds the message it was sent as
     */
    public DefaultRmqAdmin(RmqRedisAdmin redis, TopicRegistry topics, BodyCodec codec) {
        this.redis = redis;
        this.topics = topics;
        MessageLocator locator = new MessageLocator(redis, topics, codec);
        this.messages = new MessageActions(redis, locator);
        this.deadLetters = new DeadLetters(redis, locator);
    }

    // ---------------------------------------------------------------- one message

    @Override
    public MessageStatus find(MessageRef message) {
        return messages.find(message);
    }

    @Override
    public boolean contains(MessageRef message) {
        return find(message).isPending();
    }

    @Override
    public CancelResult cancel(MessageRef message) {
        return messages.cancel(message);
    }

    @Override
    public RescheduleResult reschedule(MessageRef message, Instant dueAt) {
        return messages.reschedule(message, dueAt);
    }

    @Override
    public RescheduleResult reprioritize(MessageRef message, long priority) {
        return messages.reprioritize(message, priority);
    }

    @Override
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
                    MessageLocator.headers(last.member(), last.envelope())));
        }
        BrowsePage.Cursor next = out.size() < limit || last == null ? null
                : new BrowsePage.Cursor(last.score(), lastSlot, last.member(), last.tie());
        return new BrowsePage(List.copyOf(out), next);
    }

    private static boolean comesFirst(double score, double than, boolean priority) {
        return priority ? score > than : score < than;
    }

    @Override
    public long purge(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return drainEachSlot(topic, slot -> redis.purge(slot, priority, CHUNK));
    }
    // ---------------------------------------------------------------- sizes, ordering

    @Override
    public TopicStats stats(String topicName) {
        return RedisGateway.await(statsAsync(topicName), "reading the queue figures of " + topicName);
    }

    @Override
    public CompletableFuture<TopicStats> statsAsync(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        boolean priority = topic.type() == TopicType.PRIORITY;
        // stats.lua for the slots that hold anything, pipelined: one round after the EXISTS that finds them
        return redis.topicStats(slots, priority).thenApply(figures -> sum(topicName, figures));
    }

    private static TopicStats sum(String topicName, List<long[]> figures) {
        List<TopicStats.SlotStats> perSlot = new ArrayList<>(figures.size());
        long waiting = 0;
        long inFlight = 0;
        long retrying = 0;
        long dead = 0;
        long oldest = -1;
        for (int i = 0; i < figures.size(); i++) {
            long[] s = figures.get(i);
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

    @Override
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

    @Override
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

    @Override
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
                    c[4], c[5]));
        }
        return new TopicHistory(topicName, resolution, Instant.ofEpochMilli(first * resolution.millis()),
                Instant.ofEpochMilli((current + 1) * resolution.millis()), List.copyOf(points));
    }

    @Override
    public long deadCount(String topic) {
        return stats(topic).dead();
    }

    @Override
    public long inFlightCount(String topicName) {
        return stats(topicName).inFlight();
    }

    @Override
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
                        MessageLocator.headers(e.member(), e.envelope())));
            }
        }
        return out;
    }

    @Override
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

    @Override
    public boolean requeueDead(MessageRef message) {
        return deadLetters.requeue(message);
    }

    @Override
    public long requeueAllDead(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return drainEachSlot(topic, slot -> redis.deadRequeue(slot, priority, CHUNK, List.of()));
    }

    @Override
    public boolean deleteDead(MessageRef message) {
        return deadLetters.delete(message);
    }

    @Override
    public long purgeDead(String topicName) {
        return drainEachSlot(topics.get(topicName), slot -> redis.deadDelete(slot, CHUNK, List.of()));
    }

    // ---------------------------------------------------------------- retries, dead search, bulk, Redis

    @Override
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
                        MessageLocator.headers(e.member(), e.envelope())));
            }
        }
        return new RetryPage(List.copyOf(out), total, capped);
    }

    @Override
    public DeadSearchPage searchDead(String topicName, @Nullable String error, @Nullable String prefix, long offset,
            int limit) {
        return deadLetters.search(topicName, error, prefix, offset, limit);
    }

    @Override
    public long requeueDead(String topicName, List<MessageRef> selection) {
        return deadLetters.requeue(topicName, selection);
    }

    @Override
    public long deleteDead(String topicName, List<MessageRef> selection) {
        return deadLetters.delete(topicName, selection);
    }

    @Override
    public DeadBulkResult requeueDeadMatching(String topicName, @Nullable String error, @Nullable String prefix) {
        return deadLetters.matching(true, topicName, error, prefix);
    }

    @Override
    public DeadBulkResult deleteDeadMatching(String topicName, @Nullable String error, @Nullable String prefix) {
        return deadLetters.matching(false, topicName, error, prefix);
    }

    @Override
    public DeadErrorGroups deadErrorGroups(String topicName) {
        return deadLetters.errorGroups(topicName);
    }

    // ---------------------------------------------------------------- selections of waiting and retrying messages

    @Override
    public long runNow(String topicName, List<MessageRef> messages) {
        return this.messages.runNow(topicName, messages);
    }

    @Override
    public long cancelSelected(String topicName, List<MessageRef> messages) {
        return this.messages.cancelSelected(topicName, messages);
    }

    @Override
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
