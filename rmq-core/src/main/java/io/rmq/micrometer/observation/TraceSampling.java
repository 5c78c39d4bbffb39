package io.rmq.micrometer.observation;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The sender's sampling decision as a propagator wrote it into a carrier: the sampled bit of a W3C {@code traceparent}'s
 * trace flags, the sampling state of a single {@code b3} header, or {@code X-B3-Sampled} / {@code X-B3-Flags}.
 * {@link ObservationInstrumentation} stores a context only when this says the trace is sampled, unless told to store
 * every context.
 *
 * <p>A carrier says "not sampled" only when a format RMQ knows says so and none says "sampled" (a tracer that writes
 * several formats writes one decision into all of them). A carrier without a decision (a deferred B3 decision, a
 * propagator RMQ does not know, a malformed value) counts as sampled: its context is stored, as before this rule, and
 * the listener's tracer decides.
 *
 * <p>Stateless; safe from any thread.
 */
public final class TraceSampling {

    private static final String TRACEPARENT = "traceparent";
    private static final String B3 = "b3";

    private TraceSampling() {
    }

    /** Whether the carrier's context is to be stored: false only when it says the sender's trace is not sampled. */
    public static boolean sampled(Map<String, String> carrier) {
        boolean unsampled = false;
        for (Map.Entry<String, String> entry : carrier.entrySet()) {
            Boolean decision = decision(entry.getKey(), entry.getValue());
            if (decision != null) {
                if (decision) {
                    return true;
                }
                unsampled = true;
            }
        }
        return !unsampled;
    }

    /** The decision one carrier entry states: true sampled, false not, null none (or not a sampling entry). */
    private static @Nullable Boolean decision(@Nullable String key, @Nullable String value) {
        if (key == null || value == null) {
            return null;
        }
        if (key.equalsIgnoreCase(TRACEPARENT)) {
            return traceparent(value);
        }
        if (key.equalsIgnoreCase(B3)) {
            return b3(value);
        }
        if (key.equalsIgnoreCase("X-B3-Sampled")) {
            return value.equals("1") || value.equalsIgnoreCase("true") ? Boolean.TRUE
                    : value.equals("0") || value.equalsIgnoreCase("false") ? Boolean.FALSE : null;
        }
        if (key.equalsIgnoreCase("X-B3-Flags")) {
            // debug implies sampled; any other value says nothing
            return value.equals("1") ? Boolean.TRUE : null;
        }
        return null;
    }

    /**
     * {@code <version 2 hex>-<trace id 32 hex>-<parent id 16 hex>-<flags 2 hex>[-...]}: the sampled bit is the flags'
     * lowest (later versions may append fields, never move these).
     */
    private static @Nullable Boolean traceparent(String value) {
        if (value.length() < 55 || value.charAt(2) != '-' || value.charAt(35) != '-' || value.charAt(52) != '-'
                || (value.length() > 55 && value.charAt(55) != '-')) {
            return null;
        }
        int low = Character.digit(value.charAt(54), 16);
        if (Character.digit(value.charAt(53), 16) < 0 || low < 0) {
            return null;
        }
        return (low & 1) == 1;
    }

    /**
     * {@code <trace id>-<span id>[-<sampling>[-<parent span id>]]}, or the sampling state alone: {@code 1} sampled,
     * {@code d} debug (sampled), {@code 0} not; absent: deferred.
     */
    private static @Nullable Boolean b3(String value) {
        String state;
        int first = value.indexOf('-');
        if (first < 0) {
            state = value;
        }
        else {
            int second = value.indexOf('-', first + 1);
            if (second < 0) {
                return null;
            }
            int third = value.indexOf('-', second + 1);
            state = third < 0 ? value.substring(second + 1) : value.substring(second + 1, third);
        }
        return switch (state) {
            case "1", "d" -> Boolean.TRUE;
            case "0" -> Boolean.FALSE;
            default -> null;
        };
    }
}
