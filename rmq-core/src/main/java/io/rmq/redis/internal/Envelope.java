package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import io.rmq.core.internal.Utf8;
import org.jspecify.annotations.Nullable;

/**
 * What a message carries besides its member, as the slot's msg HASH stores it (part of the Redis layout: other-language
 * clients read and write it): the payload of a message sent with an id, its headers, and the sender's trace context
 * (a header like any other, stored compactly when it is a W3C {@code traceparent} of version 00). Immutable.
 *
 * <pre>
 * flags      1 byte: 1 PAYLOAD, 2 TRACE, 4 HEADERS (other bits: written by a newer RMQ, refused)
 * [PAYLOAD]  uvarint length, the serialized body
 * [TRACE]    25 bytes: trace-id 16, parent-id 8, trace-flags 1 (the header traceparent "00-&lt;32 hex&gt;-&lt;16 hex&gt;-&lt;2 hex&gt;")
 * [HEADERS]  uvarint count, then per header uvarint name length, name, uvarint value length, value (UTF-8)
 * </pre>
 * uvarint: unsigned LEB128. The flags byte is below 0x20, so an envelope never starts like the text of a legacy
 * trace context ({@link TraceContexts}), which engines before envelopes stored.
 *
 * @param payload the serialized body of a message sent with an id; null for a message whose body is its member
 * @param headers every header, the trace context's included, in the order they were sent (the group's {@link #GROUP},
 *                when stored, first); unmodifiable
 */
public record Envelope(byte @Nullable [] payload, Map<String, String> headers) {

    public static final String TRACEPARENT = "traceparent";

    /**
     * The header under which a message of an ORDERLY topic sent with a group stores that group (the producer puts it
     * first; the ORDERLY scripts read it). Messages of other topics, and ORDERLY ones sent without a group, have none.
     * Senders cannot set it themselves.
     */
    public static final String GROUP = "rmq-group";

    private static final int PAYLOAD = 1;
    private static final int TRACE = 2;
    private static final int HEADERS = 4;
    private static final int TRACE_BYTES = 25;
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** Whether {@code stored} (a msg HASH value) is an envelope rather than a legacy trace context. */
    public static boolean isEnvelope(byte @Nullable [] stored) {
        return stored != null && stored.length > 0 && stored[0] >= 0 && stored[0] < 0x20;
    }

    /** No payload, no headers: what a member without a (readable) envelope has. */
    public static final Envelope NONE = new Envelope(null, Map.of());

    /**
     * What a msg HASH value a script returned says, as deliveries and the admin views read it: an envelope; a legacy
     * trace context's text as headers; {@link #NONE} for nothing (null or empty) or a damaged envelope (the member is
     * still there to act on; an id message then has no payload).
     */
    public static Envelope read(byte @Nullable [] stored) {
        if (stored == null || stored.length == 0) {
            return NONE;
        }
        if (!isEnvelope(stored)) {
            return new Envelope(null, TraceContexts.decode(stored));
        }
        try {
            return decode(stored);
        }
        catch (IllegalArgumentException ex) {
            return NONE;
        }
    }

    /**
     * This envelope with {@code group} as its first header {@link #GROUP}: how deliveries and views show the group a
     * grouped member holds ({@link EnvelopeKeys#groupedMember}), as if stored like an id message's.
     */
    public Envelope withGroup(String group) {
        return new Envelope(payload, headersWithGroup(headers, group));
    }

    /** {@code headers} with {@code group} as {@link #GROUP}, first (unmodifiable). */
    public static Map<String, String> headersWithGroup(Map<String, String> headers, String group) {
        Map<String, String> all = new LinkedHashMap<>(headers.size() + 2);
        all.put(GROUP, group);
        headers.forEach(all::putIfAbsent);
        return Collections.unmodifiableMap(all);
    }

    /** The stored form of a payload (null: none) and headers (may be empty); null when there is nothing to store. */
    public static byte @Nullable [] encode(byte @Nullable [] payload, Map<String, String> headers) {
        if (payload == null && headers.isEmpty()) {
            return null;
        }
        if (headers.isEmpty()) {
            return payloadAlone(payload);
        }
        String traceparent = headers.get(TRACEPARENT);
        byte[] trace = traceparent == null ? null : traceBytes(traceparent);
        int flags = (payload != null ? PAYLOAD : 0) | (trace != null ? TRACE : 0);
        int others = headers.size() - (trace != null ? 1 : 0);
        if (others > 0) {
            flags |= HEADERS;
        }
        // sized first, then written into one array: every send of a message with headers comes through here
        int[] lengths = new int[2 * others];
        int size = 1;
        if (payload != null) {
            size += uvarintSize(payload.length) + payload.length;
        }
        if (trace != null) {
            size += TRACE_BYTES;
        }
        if (others > 0) {
            size += uvarintSize(others);
            int k = 0;
            for (Map.Entry<String, String> header : headers.entrySet()) {
                if (trace != null && TRACEPARENT.equals(header.getKey())) {
                    continue;
                }
                int name = Utf8.length(header.getKey());
                int value = Utf8.length(header.getValue());
                lengths[k++] = name;
                lengths[k++] = value;
                size += uvarintSize(name) + name + uvarintSize(value) + value;
            }
        }
        byte[] out = new byte[size];
        out[0] = (byte) flags;
        int at = 1;
        if (payload != null) {
            at = uvarint(out, at, payload.length);
            System.arraycopy(payload, 0, out, at, payload.length);
            at += payload.length;
        }
        if (trace != null) {
            System.arraycopy(trace, 0, out, at, TRACE_BYTES);
            at += TRACE_BYTES;
        }
        if (others > 0) {
            at = uvarint(out, at, others);
            int k = 0;
            for (Map.Entry<String, String> header : headers.entrySet()) {
                if (trace != null && TRACEPARENT.equals(header.getKey())) {
                    continue;
                }
                at = Utf8.write(header.getKey(), out, uvarint(out, at, lengths[k++]));
                at = Utf8.write(header.getValue(), out, uvarint(out, at, lengths[k++]));
            }
        }
        return out;
    }

    /** The envelope {@link #encode} stored; an error names what is wrong with a value that is not one. */
    public static Envelope decode(byte[] stored) {
        if (stored.length == 1 + TRACE_BYTES && stored[0] == TRACE) {
            // a trace context alone, what most envelopes are with propagation on: no reader, no map to grow
            return new Envelope(null, Map.of(TRACEPARENT, traceText(stored, 1)));
        }
        Reader in = new Reader(stored);
        int flags = in.next();
        if ((flags & ~(PAYLOAD | TRACE | HEADERS)) != 0) {
            throw new IllegalArgumentException("envelope flags " + flags + " unknown (written by a newer RMQ?)");
        }
        byte[] payload = (flags & PAYLOAD) != 0 ? in.bytes(in.uvarint()) : null;
        Map<String, String> headers = new LinkedHashMap<>(4);
        if ((flags & TRACE) != 0) {
            headers.put(TRACEPARENT, traceText(in.bytes(TRACE_BYTES), 0));
        }
        if ((flags & HEADERS) != 0) {
            int count = in.uvarint();
            for (int i = 0; i < count; i++) {
                String name = in.text();
                headers.put(name, in.text());
            }
        }
        if (in.at != stored.length) {
            throw new IllegalArgumentException("envelope has " + (stored.length - in.at) + " bytes after its end");
        }
        return new Envelope(payload, Collections.unmodifiableMap(headers));
    }

    /** A version-00 traceparent in lower-case hex as its 25 bytes; null for anything else (stored as text). */
    private static byte @Nullable [] traceBytes(String traceparent) {
        if (traceparent.length() != 55 || !traceparent.startsWith("00-") || traceparent.charAt(35) != '-'
                || traceparent.charAt(52) != '-') {
            return null;
        }
        byte[] out = new byte[TRACE_BYTES];
        int o = 0;
        for (int i = 3; i < 55; i += 2) {
            if (i == 35 || i == 52) {
                i--; // skip the dash: the loop adds 2 from its position
                continue;
            }
            int hi = Character.digit(traceparent.charAt(i), 16);
            int lo = Character.digit(traceparent.charAt(i + 1), 16);
            if (hi < 0 || lo < 0 || Character.isUpperCase(traceparent.charAt(i))
                    || Character.isUpperCase(traceparent.charAt(i + 1))) {
                return null;
            }
            out[o++] = (byte) (hi << 4 | lo);
        }
        return o == TRACE_BYTES ? out : null;
    }

    /** The traceparent text of the 25 trace bytes at {@code from}. */
    private static String traceText(byte[] trace, int from) {
        byte[] out = new byte[55];
        out[0] = '0';
        out[1] = '0';
        out[2] = '-';
        int o = 3;
        for (int i = 0; i < TRACE_BYTES; i++) {
            if (i == 16 || i == 24) {
                out[o++] = '-';
            }
            int b = trace[from + i];
            out[o++] = HEX[(b >> 4) & 0xF];
            out[o++] = HEX[b & 0xF];
        }
        return new String(out, StandardCharsets.ISO_8859_1);
    }

    /** Bytes of {@code value} as an unsigned LEB128. */
    static int uvarintSize(int value) {
        int size = 1;
        for (int v = value; (v & ~0x7F) != 0; v >>>= 7) {
            size++;
        }
        return size;
    }

    /** Writes {@code value} as an unsigned LEB128 at {@code at}; returns the index after it. */
    static int uvarint(byte[] out, int at, int value) {
        int v = value;
        while ((v & ~0x7F) != 0) {
            out[at++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out[at++] = (byte) v;
        return at;
    }

    /** An id message's payload without headers, the common envelope: written straight into an array of its size. */
    private static byte[] payloadAlone(byte[] payload) {
        byte[] out = new byte[1 + uvarintSize(payload.length) + payload.length];
        out[0] = PAYLOAD;
        System.arraycopy(payload, 0, out, uvarint(out, 1, payload.length), payload.length);
        return out;
    }

    /** Reads one stored envelope; every read checks the bounds (a damaged value is an error, not garbage). */
    private static final class Reader {

        private final byte[] data;
        private int at;

        Reader(byte[] data) {
            this.data = data;
        }

        int next() {
            if (at >= data.length) {
                throw new IllegalArgumentException("envelope ends early at byte " + at);
            }
            return data[at++] & 0xFF;
        }

        int uvarint() {
            int value = 0;
            for (int shift = 0; shift < 32; shift += 7) {
                int b = next();
                value |= (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    if (value < 0) {
                        break;
                    }
                    return value;
                }
            }
            throw new IllegalArgumentException("envelope length at byte " + at + " out of range");
        }

        void skip(int length) {
            if (length > data.length - at) {
                throw new IllegalArgumentException("envelope ends early: " + length + " bytes wanted at byte " + at);
            }
            at += length;
        }

        byte[] bytes(int length) {
            if (length > data.length - at) {
                throw new IllegalArgumentException("envelope ends early: " + length + " bytes wanted at byte " + at);
            }
            byte[] out = java.util.Arrays.copyOfRange(data, at, at + length);
            at += length;
            return out;
        }

        String text() {
            return new String(bytes(uvarint()), StandardCharsets.UTF_8);
        }
    }
}
