package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

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
        byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
        byte[] member = new byte[utf8.length + 1];
        member[0] = (byte) ID_TAG;
        System.arraycopy(utf8, 0, member, 1, utf8.length);
        return member;
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
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-1").digest(member);
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-1 is required of every Java platform", ex);
        }
        byte[] key = Arrays.copyOf(new byte[] {1}, 14);
        System.arraycopy(digest, 0, key, 1, 13);
        return key;
    }
}
