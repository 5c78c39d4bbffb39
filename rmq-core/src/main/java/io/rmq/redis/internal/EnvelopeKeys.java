package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

import io.rmq.core.internal.Utf8;
import org.jspecify.annotations.Nullable;

/**
 * Members of messages sent with an id, and the field under which the slot's msg HASH keeps a member's envelope. The
 * same rules are in _common.lua ({@code envelope_key}); both are part of the Redis layout. Stateless.
 */
public final class EnvelopeKeys {

    /** The first byte of an id member: never part of UTF-8 text, so no text or JSON body starts with it. */
    public static final int ID_TAG = 0xFF;

    private EnvelopeKeys() {
    }

    /** The member of a message sent with {@code id}: {@code 0xFF} followed by the id's UTF-8 bytes. */
    public static byte[] idMember(String id) {
        return idMemberOf(id.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #idMember}, from the id's UTF-8 bytes (a sender has them already: the id routes the message too). */
    public static byte[] idMemberOf(byte[] utf8) {
        byte[] member = new byte[utf8.length + 1];
        member[0] = (byte) ID_TAG;
        System.arraycopy(utf8, 0, member, 1, utf8.length);
        return member;
    }

    /**
     * The first byte of a grouped body's member: a message of an ORDERLY topic sent with a group and without an id is
     * stored as {@code 0xFE}, the group's UTF-8 length (uvarint, as in {@link Envelope}), the group, then the body. So
     * the ORDERLY scripts read a message's group from the member they hold, with no envelope to digest, look up or
     * forget. Never the first byte of UTF-8 text either.
     */
    public static final int GROUP_TAG = 0xFE;

    /** The member of a body sent with {@code group} to an ORDERLY topic (see {@link #GROUP_TAG}). */
    public static byte[] groupedMember(String group, byte[] body) {
        int length = Utf8.length(group);
        int at = 1 + Envelope.uvarintSize(length);
        byte[] member = new byte[at + length + body.length];
        member[0] = (byte) GROUP_TAG;
        Envelope.uvarint(member, 1, length);
        at = Utf8.write(group, member, at);
        System.arraycopy(body, 0, member, at, body.length);
        return member;
    }

    public static boolean isGroupedMember(byte[] member) {
        return member.length > 0 && (member[0] & 0xFF) == GROUP_TAG;
    }

    /** The group a grouped member holds; null for any other member, and for a damaged one. */
    public static @Nullable String groupOf(byte[] member) {
        long span = groupSpan(member);
        return span < 0 ? null : new String(member, (int) (span >>> 32), (int) span, StandardCharsets.UTF_8);
    }

    /**
     * The body a body member holds: the member itself, or a grouped member's bytes after its group (a damaged one as
     * it is: its handler sees what is stored). Not for id members, whose payload is in their envelope.
     */
    public static byte[] bodyOf(byte[] member) {
        long span = groupSpan(member);
        return span < 0 ? member : Arrays.copyOfRange(member, (int) (span >>> 32) + (int) span, member.length);
    }

    /** A grouped member's group: its start (high 32 bits) and length (low); -1 for another member or a damaged one. */
    private static long groupSpan(byte[] member) {
        if (!isGroupedMember(member)) {
            return -1;
        }
        int length = 0;
        int at = 1;
        for (int shift = 0; shift < 32; shift += 7) {
            if (at >= member.length) {
                return -1;
            }
            int b = member[at++] & 0xFF;
            length |= (b & 0x7F) << shift;
            if (b < 0x80) {
                return length < 0 || (long) at + length > member.length ? -1 : ((long) at << 32) | length;
            }
        }
        return -1;
    }

    public static boolean isIdMember(byte[] member) {
        return member.length > 0 && (member[0] & 0xFF) == ID_TAG;
    }

    /** The id of an id member; null for a body member. */
    public static @Nullable String idOf(byte[] member) {
        return isIdMember(member) ? new String(member, 1, member.length - 1, StandardCharsets.UTF_8) : null;
    }

    /**
     * The msg HASH field of {@code member}: an id member itself; for a body, {@code 0x01} followed by the first 13
     * bytes of its SHA-1 (a header costs no second copy of the body).
     */
    public static byte[] of(byte[] member) {
        if (isIdMember(member)) {
            return member;
        }
        return keyOf(sha1(member));
    }

    /**
     * What an ack names for a body the consumer read and found nothing stored beside (no envelope, no trace record), in
     * place of its envelope key: the script then looks nothing up for it (see forget_envelopes in _common.lua).
     */
    public static final byte[] NOTHING_STORED = {0};

    /** A body's envelope key ({@link #of}) from the body's SHA-1. */
    static byte[] keyOf(byte[] digest) {
        byte[] key = new byte[14];
        key[0] = 1;
        System.arraycopy(digest, 0, key, 1, 13);
        return key;
    }

    /**
     * The compact trace record of a body whose envelope is its trace context alone ({@link #isTraceOnly}): field
     * {@code 0x02} + SHA-1 bytes 0..4 (6 bytes), value SHA-1 bytes 5..8 (a check: a collision of two bodies' fields
     * can lose a trace link, never attach a wrong one) followed by the envelope. As _common.lua writes and reads it.
     *
     * @return { field, value }
     */
    public static byte[][] traceRecord(byte[] body, byte[] envelope) {
        byte[] digest = sha1(body);
        byte[] field = traceField(digest);
        byte[] value = new byte[4 + envelope.length];
        System.arraycopy(digest, 5, value, 0, 4);
        System.arraycopy(envelope, 0, value, 4, envelope.length);
        return new byte[][] {field, value};
    }

    /** The field of a body's trace record ({@link #traceRecord}'s first element), from the body's SHA-1. */
    static byte[] traceField(byte[] digest) {
        byte[] field = new byte[6];
        field[0] = 2;
        System.arraycopy(digest, 0, field, 1, 5);
        return field;
    }

    /** The envelope a trace record holds for {@code body}; null when the record is another body's (or none). */
    public static byte @Nullable [] fromTraceRecord(byte[] body, byte @Nullable [] value) {
        return value == null ? null : fromTraceRecordOf(sha1(body), value);
    }

    /** As {@link #fromTraceRecord}, from the body's SHA-1. */
    static byte @Nullable [] fromTraceRecordOf(byte[] digest, byte @Nullable [] value) {
        if (value == null || value.length < 4) {
            return null;
        }
        for (int i = 0; i < 4; i++) {
            if (value[i] != digest[5 + i]) {
                return null;
            }
        }
        return Arrays.copyOfRange(value, 4, value.length);
    }

    /** Whether an envelope is a trace context alone (flags 2 and a 25-byte traceparent): a trace record's. */
    public static boolean isTraceOnly(byte @Nullable [] envelope) {
        return envelope != null && envelope.length == 26 && envelope[0] == 2;
    }

    /** One digest per thread: a look-up per message costs about as much as the hashing (senders hash per message). */
    private static final ThreadLocal<MessageDigest> SHA1 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-1");
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-1 is required of every Java platform", ex);
        }
    });

    static byte[] sha1(byte[] member) {
        return SHA1.get().digest(member); // digest() resets it for the next call
    }
}
