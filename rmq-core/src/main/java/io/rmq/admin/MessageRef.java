package io.rmq.admin;

import java.util.Arrays;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.redis.internal.EnvelopeKeys;

/**
 * One stored message of a topic as a view lists it: its slot and its member, the message's identity in Redis (for a
 * message sent with an id, 0xFF followed by the id; for any other, its serialized body). Selections of retries and
 * waiting messages name their messages so ({@link RmqAdmin#runNow}, {@link RmqAdmin#cancelSelected}); the slot is the
 * one the view showed, so a message sent with a {@code group} is found where it is.
 *
 * @param slot   the slot the message is in
 * @param member the member as stored (not copied: do not change it)
 */
public record MessageRef(int slot, byte[] member) {

    public MessageRef {
        if (member == null || member.length == 0) {
            throw new RmqInvalidArgumentException("member", member == null ? null : "0 bytes", "must not be empty");
        }
    }

    /** The message sent with this id, in this slot. */
    public static MessageRef ofId(int slot, String id) {
        if (id == null || id.isEmpty()) {
            throw new RmqInvalidArgumentException("id", id, "must not be empty");
        }
        return new MessageRef(slot, EnvelopeKeys.idMember(id));
    }

    /** The message whose identity is this serialized body (sent without an id), in this slot. */
    public static MessageRef ofBody(int slot, byte[] body) {
        return new MessageRef(slot, body);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof MessageRef that && slot == that.slot && Arrays.equals(member, that.member);
    }

    @Override
    public int hashCode() {
        return 31 * slot + Arrays.hashCode(member);
    }

    @Override
    public String toString() {
        String id = EnvelopeKeys.idOf(member);
        return "MessageRef[slot=" + slot + ", " + (id != null ? "id=" + id : member.length + "-byte body") + "]";
    }
}
