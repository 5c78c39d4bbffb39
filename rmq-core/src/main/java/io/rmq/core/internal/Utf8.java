package io.rmq.core.internal;

import java.nio.charset.StandardCharsets;

/**
 * UTF-8 sizes and writes of strings without an intermediate array, for the send path, which measures and encodes every
 * header and id of every message (short strings, nearly always ASCII). Both agree byte for byte with
 * {@code String.getBytes(UTF_8)}, a lone surrogate included (one replacement byte, {@code '?'}). Stateless.
 */
public final class Utf8 {

    private Utf8() {
    }

    /** {@code s.getBytes(UTF_8).length}, without making the array. */
    public static int length(String s) {
        int n = s.length();
        int bytes = n;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                continue;
            }
            if (c < 0x800) {
                bytes += 1;
            }
            else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 2; // a pair: 4 bytes for its two chars
                i++;
            }
            else if (!Character.isSurrogate(c)) {
                bytes += 2;
            }
            // a lone surrogate: one replacement byte, as getBytes writes
        }
        return bytes;
    }

    /**
     * Writes {@code s} as UTF-8 into {@code out} at {@code at}, where {@link #length} bytes must fit; returns the index
     * after it.
     */
    public static int write(String s, byte[] out, int at) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                // rare: the JDK's encoder for the rest, from the first non-ASCII char on
                byte[] rest = s.substring(i).getBytes(StandardCharsets.UTF_8);
                System.arraycopy(rest, 0, out, at, rest.length);
                return at + rest.length;
            }
            out[at++] = (byte) c;
        }
        return at;
    }
}
