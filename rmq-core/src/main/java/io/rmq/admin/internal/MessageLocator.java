package io.rmq.admin.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

import io.rmq.admin.MessageRef;
import io.rmq.admin.RmqAdmin;
import io.rmq.core.BodyCodec;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.internal.SlotRouter;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.redis.internal.RmqRedisAdmin;
import org.jspecify.annotations.Nullable;

/**
 * Where a {@link MessageRef} points: its topic, the keys of its slot and the member it is stored as. A body is
 * serialized with the producer's codec and a slot routed as a send routes it (by the group, else by the id, else by
 * the body), so a reference finds what the send stored; a selection is worked through slot by slot. Holds no state
 * of its own; any thread calls it.
 */
public final class MessageLocator {

    private final RmqRedisAdmin redis;
    private final TopicRegistry topics;
    private final BodyCodec codec;

    /** One message as Redis knows it. */
    public record Located(TopicDefinition topic, SlotKeys slot, byte[] member) {
    }

    public MessageLocator(RmqRedisAdmin redis, TopicRegistry topics, BodyCodec codec) {
        this.redis = redis;
        this.topics = topics;
        this.codec = codec;
    }

    public TopicDefinition topic(String name) {
        return topics.get(name);
    }

    public Located locate(MessageRef ref) {
        TopicDefinition topic = topics.get(ref.topic());
        byte[] member = ref.member();
        byte[] routing;
        if (member == null) {
            member = codec.encode(ref.body());
            if (member.length == 0) {
                throw new RmqInvalidArgumentException("body", "0 bytes", "must not be empty (topic '" + topic.name()
                        + "')");
            }
            routing = member;
            if (ref.group() != null && modeOf(topic) == ConsumeMode.ORDERLY) {
                member = EnvelopeKeys.groupedMember(ref.group(), member); // as the producer stores it there
            }
        }
        else {
            String id = ref.id();
            routing = id != null ? id.getBytes(StandardCharsets.UTF_8) : member;
        }
        Integer slot = ref.slot();
        return new Located(topic, slot != null ? slotKeys(topic, slot)
                : redis.keys().slots(topic)[SlotRouter.slot(routing, ref.group(), topic.slotAmount())], member);
    }

    /**
     * The topic's consume mode; one this process does not know yet (it sent nothing there, no listener of it runs
     * here) is read from Redis and learnt: a body sent with a group to an ORDERLY topic is stored with its group.
     */
    private @Nullable ConsumeMode modeOf(TopicDefinition topic) {
        if (topic.mode() != null) {
            return topic.mode();
        }
        TopicDefinition registered = RedisGateway.await(redis.topic(topic.name()),
                "looking up the consume mode of topic '" + topic.name() + "'");
        if (registered == null) {
            return null;
        }
        topics.modeLearned(registered);
        return registered.mode();
    }

    /**
     * A selection of one topic's messages (1 to {@link RmqAdmin#MAX_SELECTION}), its members by slot in slot order.
     * Refused naming the entry when one names another topic or a slot the topic does not have.
     */
    private Map<SlotKeys, List<byte[]>> bySlot(TopicDefinition topic, @Nullable List<MessageRef> messages) {
        if (messages == null || messages.isEmpty()) {
            throw new RmqInvalidArgumentException("messages", messages, "must name at least one message");
        }
        if (messages.size() > RmqAdmin.MAX_SELECTION) {
            throw new RmqInvalidArgumentException("messages", messages.size() + " messages", "must be at most "
                    + RmqAdmin.MAX_SELECTION + " per request");
        }
        Map<Integer, List<byte[]>> members = new TreeMap<>();
        Map<Integer, SlotKeys> keys = new TreeMap<>();
        for (int i = 0; i < messages.size(); i++) {
            MessageRef message = messages.get(i);
            if (message == null) {
                throw new RmqInvalidArgumentException("messages[" + i + "]", null, "must not be null");
            }
            if (!message.topic().equals(topic.name())) {
                throw new RmqInvalidArgumentException("messages[" + i + "].topic", message.topic(), "must be "
                        + topic.name() + " for every message of the selection");
            }
            Located at = locate(message);
            int slot = at.slot().slot();
            keys.put(slot, at.slot());
            members.computeIfAbsent(slot, s -> new ArrayList<>()).add(at.member());
        }
        Map<SlotKeys, List<byte[]>> out = new java.util.LinkedHashMap<>();
        members.forEach((slot, list) -> out.put(keys.get(slot), list));
        return out;
    }

    /**
     * One action per slot of a selection (each given the members the selection names there), pipelined: the sum of
     * what they counted.
     */
    public long eachSlot(TopicDefinition topic, @Nullable List<MessageRef> messages,
            BiFunction<SlotKeys, List<byte[]>, CompletableFuture<Long>> action, String what) {
        Map<SlotKeys, List<byte[]>> bySlot = bySlot(topic, messages);
        List<CompletableFuture<Long>> done = new ArrayList<>(bySlot.size());
        bySlot.forEach((slot, members) -> done.add(action.apply(slot, members)));
        RedisGateway.await(CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)), what);
        return done.stream().mapToLong(CompletableFuture::join).sum();
    }

    /** The keys of one slot of the topic; refused naming the slot when the topic has no such slot. */
    public SlotKeys slotKeys(TopicDefinition topic, int slot) {
        if (slot < 0 || slot >= topic.slotAmount()) {
            throw new RmqInvalidArgumentException("slot", slot, "must be between 0 and " + (topic.slotAmount() - 1)
                    + " for " + topic.describe());
        }
        return redis.keys().slots(topic)[slot];
    }

    /**
     * What a view shows as a message's body: the member's ({@link EnvelopeKeys#bodyOf}), or for an id message the
     * payload its latest send stored (empty when none is stored: the message is gone, or its envelope was removed by
     * hand).
     */
    public static byte[] payload(byte[] member, RmqRedisAdmin.Stored stored) {
        if (!EnvelopeKeys.isIdMember(member)) {
            return EnvelopeKeys.bodyOf(member); // a grouped member's body follows its group
        }
        return stored.payload() == null ? new byte[0] : stored.payload();
    }

    /**
     * What a view shows as a message's headers: those stored, and first the group a grouped member holds (as
     * {@code rmq-group}, where an id message stores it; deliveries show it the same way).
     */
    public static Map<String, String> headers(byte[] member, RmqRedisAdmin.Stored stored) {
        String group = EnvelopeKeys.groupOf(member);
        return group == null ? stored.headers() : Envelope.headersWithGroup(stored.headers(), group);
    }

    /** The id of an id member, else null: the member is a body. */
    public static @Nullable String idOf(byte[] member) {
        return EnvelopeKeys.idOf(member);
    }
}
