package io.rmq.redis.internal;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The encoding of a trace context as the slot's context HASH stores it (part of the Redis layout: other-language
 * clients read and write it). Entries are separated by a newline; each is {@code key=value}, except the W3C
 * {@code traceparent}, which is stored as its bare value (it never contains {@code =}): a context of a traceparent
 * alone costs its 55 characters, not 67. Keys and values with a newline, and keys with {@code =}, cannot be encoded
 * and are left out (no propagation format uses them).
 *
 * <pre>
 * 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
 * tracestate=congo=t61rcWkgMzE,rojo=00f067aa0ba902b7
 * </pre>
 */
public final class TraceContexts {

    static final String TRACEPARENT = "traceparent";

    private TraceContexts() {
    }

    /** The stored form of {@code context}; null when there is nothing to store (empty, or nothing encodable). */
    public static byte @Nullable [] encode(@Nullable Map<String, String> context) {
        if (context == null || context.isEmpty()) {
            return null;
        }
        StringBuilder out = new StringBuilder(64);
        String traceparent = context.get(TRACEPARENT);
        boolean bare = encodable(traceparent) && !traceparent.isEmpty() && traceparent.indexOf('=') < 0;
        if (bare) {
            out.append(traceparent);
        }
        for (Map.Entry<String, String> entry : context.entrySet()) {
            String key = entry.getKey();
            String value = entry.getValue();
            if ((bare && TRACEPARENT.equals(key)) || key == null || key.isEmpty() || !encodable(key) || key.indexOf('=') >= 0
                    || !encodable(value)) {
                continue;
            }
            if (!out.isEmpty()) {
                out.append('\n');
            }
            out.append(key).append('=').append(value);
        }
        return out.isEmpty() ? null : out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The context {@link #encode} stored; empty for null or empty input. */
    public static Map<String, String> decode(byte @Nullable [] stored) {
        if (stored == null || stored.length == 0) {
            return Map.of();
        }
        String text = new String(stored, StandardCharsets.UTF_8);
        Map<String, String> out = new LinkedHashMap<>(4);
        int from = 0;
        while (from <= text.length()) {
            int end = text.indexOf('\n', from);
            if (end < 0) {
                end = text.length();
            }
            if (end > from) {
                int eq = text.indexOf('=', from);
                if (eq < 0 || eq > end) {
                    out.put(TRACEPARENT, text.substring(from, end));
                }
                else {
                    out.put(text.substring(from, eq), text.substring(eq + 1, end));
                }
            }
            from = end + 1;
        }
        return Collections.unmodifiableMap(out);
    }

    private static boolean encodable(@Nullable String s) {
        return s != null && s.indexOf('\n') < 0;
    }
}
