package io.rmq.admin;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import org.jspecify.annotations.Nullable;

/**
 * Names one message of a topic for {@link RmqAdmin}: the one way to say which message to find, cancel, reschedule,
 * run now, requeue or delete. A message is named as it was sent, or as a view listed it:
 * <ul>
 * <li>{@link #body(String, Object)}: a message sent without an id, by its body (serialized as a send serializes it);
 * <li>{@link #id(String, String)}: a message sent with an id;
 * <li>{@link #inGroup(String)} added to either: it was sent with that {@code group}, so it is in the group's slot
 * (and a body sent with a group to an ORDERLY topic is stored with its group: name it with its group there);
 * <li>{@link #stored(String, int, byte[])}: the slot and member as stored, what {@code ref()} of a view (a waiting,
 * retrying, in-flight or dead message) returns; {@link #atSlot(int)} names the slot of a body or id as a view
 * showed it.
 * </ul>
 * The member a message is stored as (its serialized body, 0xFE and the group before a grouped body of an ORDERLY
 * topic, or 0xFF followed by the id's UTF-8 bytes) is this class's
 * business and the admin's, so callers never build one. Bad input is refused when the reference is made, naming the
 * field, the value and the rule. Immutable and thread-safe (a stored member is not copied: do not change it).
 */
public final class MessageRef {

    private final String topic;
    private final @Nullable Object body;
    private final @Nullable String id;
    private final byte @Nullable [] member;
    private final @Nullable String group;
    private final @Nullable Integer slot;

    private MessageRef(String topic, @Nullable Object body, @Nullable String id, byte @Nullable [] member,
            @Nullable String group, @Nullable Integer slot) {
        this.topic = topic;
        this.body = body;
        this.id = id;
        this.member = member;
        this.group = group;
        this.slot = slot;
    }

    /**
     * The message sent to {@code topic} without an id whose identity is this body: serialized by the admin exactly as
     * the producer serializes it ({@code String} and {@code byte[]} as they are, anything else as canonical JSON).
     */
    public static MessageRef body(String topic, Object body) {
        checkTopic(topic);
        if (body == null) {
            throw new RmqInvalidArgumentException("body", null, "must not be null (topic '" + topic + "')");
        }
        return new MessageRef(topic, body, null, null, null, null);
    }

    /** The message sent to {@code topic} with this id. */
    public static MessageRef id(String topic, String id) {
        checkTopic(topic);
        if (id == null) {
            throw new RmqInvalidArgumentException("id", null, "must not be null (topic '" + topic + "')");
        }
        if (id.isEmpty()) {
            throw new RmqInvalidArgumentException("id", "", "must not be empty (topic '" + topic + "')");
        }
        return new MessageRef(topic, null, id, EnvelopeKeys.idMember(id), null, null);
    }

    /**
     * The message stored in this slot of {@code topic} as this member: what a view listed (a view's {@code ref()},
     * or a handle the operations endpoint showed).
     */
    public static MessageRef stored(String topic, int slot, byte[] member) {
        checkTopic(topic);
        if (member == null || member.length == 0) {
            throw new RmqInvalidArgumentException("member", member == null ? null : "0 bytes", "must not be empty"
                    + " (topic '" + topic + "')");
        }
        return new MessageRef(topic, null, EnvelopeKeys.idOf(member), member, null, slot);
    }

    /**
     * The id a stored member names (a message sent with an id is stored as 0xFF followed by the id), or null: the
     * member is a body.
     */
    public static @Nullable String idOf(byte[] member) {
        return EnvelopeKeys.idOf(member);
    }

    /**
     * A message as a view shows it: by its id when it has one, else by its body, the member it is stored as (with
     * the group first, for a body of an ORDERLY topic shown with one: {@code rmq-group}, see
     * {@code docs/redis-layout.md}).
     */
    static MessageRef shown(String topic, int slot, @Nullable String id, byte[] body, Map<String, String> headers) {
        String group = id == null ? headers.get(Envelope.GROUP) : null;
        return stored(topic, slot, id != null ? EnvelopeKeys.idMember(id)
                : group != null ? EnvelopeKeys.groupedMember(group, body) : body);
    }

    /**
     * This message, sent with this {@code group}: it is looked for in the group's slot, as the send routed it. Null
     * names no group (the slot follows the id or body).
     */
    public MessageRef inGroup(@Nullable String group) {
        if (group != null && group.isEmpty()) {
            throw new RmqInvalidArgumentException("group", "", "must be null or non-empty (topic '" + topic + "')");
        }
        if (group != null && slot != null) {
            throw new RmqInvalidArgumentException("group", group, "cannot be given with a slot (" + slot
                    + "): the slot already says where the message is (topic '" + topic + "')");
        }
        return new MessageRef(topic, body, id, member, group, slot);
    }

    /** This message in this slot, as a view showed it (instead of the slot its group, id or body routes to). */
    public MessageRef atSlot(int slot) {
        if (group != null) {
            throw new RmqInvalidArgumentException("slot", slot, "cannot be given with a group ('" + group
                    + "'): the group already says where the message is (topic '" + topic + "')");
        }
        return new MessageRef(topic, body, id, member, null, slot);
    }

    public String topic() {
        return topic;
    }

    /** The id the message was sent with; null for a message named by its body. */
    public @Nullable String id() {
        return id;
    }

    /** The body as given to {@link #body(String, Object)}, not serialized yet; null for the other kinds. */
    public @Nullable Object body() {
        return body;
    }

    /**
     * The member the message is stored as, where known without serializing a body: for {@link #id} and
     * {@link #stored} references; null for {@link #body} ones (the admin serializes those with the producer's codec).
     * Not copied: do not change it.
     */
    public byte @Nullable [] member() {
        return member;
    }

    /** The group it was sent with, or null. */
    public @Nullable String group() {
        return group;
    }

    /** The slot given ({@link #stored}, {@link #atSlot}), or null: the admin routes it by its group, id or body. */
    public @Nullable Integer slot() {
        return slot;
    }

    private static void checkTopic(String topic) {
        if (topic == null) {
            throw new RmqInvalidArgumentException("topic", null, "must not be null");
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof MessageRef that && topic.equals(that.topic) && Objects.deepEquals(body, that.body)
                && Objects.equals(id, that.id) && Arrays.equals(member, that.member)
                && Objects.equals(group, that.group) && Objects.equals(slot, that.slot);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, id, group, slot) * 31 + Arrays.deepHashCode(new Object[] {body, member});
    }

    @Override
    public String toString() {
        String what = id != null ? "id=" + id : member != null ? member.length + "-byte body" : "body=" + body;
        return "MessageRef[topic=" + topic + ", " + what + (group != null ? ", group=" + group : "")
                + (slot != null ? ", slot=" + slot : "") + "]";
    }
}
