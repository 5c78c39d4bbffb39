package io.rmq.admin;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.RmqKeys.SlotKeys;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import io.rmq.redis.RedisGateway;
import io.rmq.redis.RmqRedis;
import io.rmq.redis.RmqRedis.DeadEntry;

/**
 * Introspection and the dead-letter operations behind "manual intervention": count, page through, requeue,
 * delete and purge dead messages, and queue sizes per topic and slot.
 */
public final class RmqAdmin {

    private static final int CHUNK = 1000;

    private final RmqRedis redis;
    private final TopicRegistry topics;

    public RmqAdmin(RmqRedis redis, TopicRegistry topics) {
        this.redis = redis;
        this.topics = topics;
    }

    /** Sizes of the topic's store, prepare and dead queues, in total and per slot. */
    public TopicStats stats(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        List<CompletableFuture<long[]>> sizes = new ArrayList<>(slots.length);
        for (SlotKeys slot : slots) {
            sizes.add(redis.sizes(slot));
        }
        RedisGateway.await(CompletableFuture.allOf(sizes.toArray(CompletableFuture[]::new)), "reading sizes of " + topicName);
        List<TopicStats.SlotStats> perSlot = new ArrayList<>(slots.length);
        long waiting = 0;
        long inFlight = 0;
        long dead = 0;
        for (int i = 0; i < slots.length; i++) {
            long[] s = sizes.get(i).join();
            perSlot.add(new TopicStats.SlotStats(i, s[0], s[1], s[2]));
            waiting += s[0];
            inFlight += s[1];
            dead += s[2];
        }
        return new TopicStats(topicName, waiting, inFlight, dead, List.copyOf(perSlot));
    }

    /**
     * Ends ORDERLY consumption of a topic so CONCURRENT listeners may consume it: every slot's owner key goes, and
     * what ordered consumers had taken and not settled goes back to the store. Stop the ORDERLY listeners first:
     * fails, naming the slots, while any slot is still owned.
     *
     * @return how many messages went back to the store
     */
    public long endOrdering(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        SlotKeys[] slots = redis.keys().slots(topic);
        List<CompletableFuture<Long>> ends = new ArrayList<>(slots.length);
        for (SlotKeys slot : slots) {
            ends.add(redis.endOrdering(slot, topic.type() == TopicType.PRIORITY));
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
        return moved;
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
                Long priority = topic.type() == TopicType.PRIORITY && !e.priority().isEmpty()
                        ? (long) Double.parseDouble(e.priority()) : null;
                out.add(new DeadMessage(topicName, slot.slot(), e.member(), Instant.ofEpochMilli(e.diedAt()),
                        e.attempts(), priority, e.lastError()));
            }
        }
        return out;
    }

    /** Makes one dead message deliverable again with a fresh attempt count; false if it was not dead. */
    public boolean requeueDead(DeadMessage message) {
        TopicDefinition topic = topics.get(message.topic());
        return RedisGateway.await(redis.deadRequeue(slotKeys(topic, message.slot()),
                topic.type() == TopicType.PRIORITY, 1, List.of(message.body())), "requeueing a dead message") == 1;
    }

    /** Requeues every dead message of the topic; returns how many. */
    public long requeueAllDead(String topicName) {
        TopicDefinition topic = topics.get(topicName);
        boolean priority = topic.type() == TopicType.PRIORITY;
        return drainEachSlot(topic, slot -> redis.deadRequeue(slot, priority, CHUNK, List.of()));
    }

    /** Deletes one dead message for good; false if it was not dead. */
    public boolean deleteDead(DeadMessage message) {
        TopicDefinition topic = topics.get(message.topic());
        return RedisGateway.await(redis.deadDelete(slotKeys(topic, message.slot()), 1, List.of(message.body())),
                "deleting a dead message") == 1;
    }

    /** Deletes every dead message of the topic; returns how many. */
    public long purgeDead(String topicName) {
        return drainEachSlot(topics.get(topicName), slot -> redis.deadDelete(slot, CHUNK, List.of()));
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
