package io.rmq.admin.internal;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.rmq.admin.DeadBulkResult;
import io.rmq.admin.DeadErrorGroups;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.DeadSearchPage;
import io.rmq.admin.MessageRef;
import io.rmq.admin.RmqAdmin;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisAdmin;
import io.rmq.redis.internal.RmqRedisAdmin.DeadEntry;
import org.jspecify.annotations.Nullable;

/**
 * What {@link RmqAdmin} does with dead messages beyond paging and draining them: searches and counts by error class
 * (bounded by {@link RmqAdmin#DEAD_SEARCH_EXAMINED}), and requeueing or deleting one, a selection or the matches of
 * a search. Holds no state of its own; any thread calls it.
 */
public final class DeadLetters {

    private final RmqRedisAdmin redis;
    private final MessageLocator locator;

    public DeadLetters(RmqRedisAdmin redis, MessageLocator locator) {
        this.redis = redis;
        this.locator = locator;
    }

    /** A dead message as the views show it. */
    public static DeadMessage deadMessage(TopicDefinition topic, int slot, DeadEntry e) {
        Long priority = topic.type() == TopicType.PRIORITY && !e.priority().isEmpty()
                ? (long) Double.parseDouble(e.priority()) : null;
        return new DeadMessage(topic.name(), slot, MessageLocator.payload(e.member(), e.envelope()),
                Instant.ofEpochMilli(e.diedAt()), e.attempts(), priority, e.lastError(),
                MessageLocator.idOf(e.member()), MessageLocator.headers(e.member(), e.envelope()));
    }

    /** See {@link RmqAdmin#searchDead}. */
    public DeadSearchPage search(String topicName, @Nullable String error, @Nullable String prefix, long offset,
            int limit) {
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
        if (limit < 1 || limit > 1000) {
            throw new RmqInvalidArgumentException("limit", limit, "must be between 1 and 1000");
        }
        TopicDefinition topic = locator.topic(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        String needle = error == null ? "" : asciiLowerCase(error);
        byte[] start = prefix == null ? new byte[0] : prefix.getBytes(StandardCharsets.UTF_8);
        List<DeadMessage> out = new ArrayList<>(limit);
        long total = 0;
        long scanned = 0;
        long skip = offset;
        boolean capped = false;
        for (int i = 0; i < slots.length; i++) {
            int budget = (int) (RmqAdmin.DEAD_SEARCH_EXAMINED - scanned);
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

    /** See {@link RmqAdmin#deadErrorGroups}. */
    public DeadErrorGroups errorGroups(String topicName) {
        TopicDefinition topic = locator.topic(topicName);
        Map<String, Long> counts = new HashMap<>();
        long scanned = 0;
        boolean capped = false;
        for (SlotKeys slot : redis.keys().slots(topic)) {
            int budget = (int) (RmqAdmin.DEAD_SEARCH_EXAMINED - scanned);
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
        out.sort(Comparator.comparingLong(DeadErrorGroups.Group::count).reversed()
                .thenComparing(DeadErrorGroups.Group::errorClass));
        return new DeadErrorGroups(List.copyOf(out), scanned, capped);
    }

    /** See {@link RmqAdmin#requeueDead(MessageRef)}. */
    public boolean requeue(MessageRef message) {
        MessageLocator.Located at = locator.locate(message);
        return RedisGateway.await(redis.deadRequeue(at.slot(), at.topic().type() == TopicType.PRIORITY, 1,
                List.of(at.member())), "requeueing a dead message of " + at.topic().name()) == 1;
    }

    /** See {@link RmqAdmin#deleteDead(MessageRef)}. */
    public boolean delete(MessageRef message) {
        MessageLocator.Located at = locator.locate(message);
        return RedisGateway.await(redis.deadDelete(at.slot(), 1, List.of(at.member())),
                "deleting a dead message of " + at.topic().name()) == 1;
    }

    /** See {@link RmqAdmin#requeueDead(String, List)}. */
    public long requeue(String topicName, List<MessageRef> selection) {
        TopicDefinition topic = locator.topic(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return locator.eachSlot(topic, selection, (slot, members) -> redis.deadRequeue(slot, priority,
                members.size(), members), "requeueing dead messages of " + topicName);
    }

    /** See {@link RmqAdmin#deleteDead(String, List)}. */
    public long delete(String topicName, List<MessageRef> selection) {
        TopicDefinition topic = locator.topic(topicName);
        return locator.eachSlot(topic, selection, (slot, members) -> redis.deadDelete(slot, members.size(),
                members), "deleting dead messages of " + topicName);
    }

    /** See {@link RmqAdmin#requeueDeadMatching} and {@link RmqAdmin#deleteDeadMatching}. */
    public DeadBulkResult matching(boolean requeue, String topicName, @Nullable String error,
            @Nullable String prefix) {
        DeadSearchPage found = search(topicName, error, prefix, 0, RmqAdmin.MAX_SELECTION);
        List<MessageRef> refs = found.messages().stream().map(DeadMessage::ref).toList();
        long acted = refs.isEmpty() ? 0 : requeue ? requeue(topicName, refs) : delete(topicName, refs);
        return new DeadBulkResult(acted, found.total(), found.scanned(),
                found.capped() || found.total() > found.messages().size());
    }
}
