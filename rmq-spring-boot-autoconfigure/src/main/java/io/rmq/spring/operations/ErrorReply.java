package io.rmq.spring.operations;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import io.rmq.core.RmqInvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * How the endpoint and the dashboard answer a request that failed: one status and one JSON body per kind of failure,
 * the same on every route of both, whatever {@code server.error.include-message} says (Boot's error page would hide
 * the reason). The body is {@code {"error": message, "field": ..., "value": ..., "rule": ...}}:
 * <ul>
 * <li>404: what is not there ({@link RmqNotFoundException}): {@code field} says what was looked for (topic, listener,
 * instance, schedule, route), {@code value} the name;</li>
 * <li>400: bad input ({@link RmqInvalidArgumentException}): field, value and the rule it breaks;</li>
 * <li>409: an action the target cannot do ({@link UnsupportedOperationException}), {@code error} only;</li>
 * <li>500: anything else, {@code error} only (the caller logs it).</li>
 * </ul>
 * A value longer than {@value #VALUE_CHARS} characters is cut (an oversized id or body is not echoed whole). Immutable.
 *
 * @param status the HTTP status
 * @param body   the JSON body: {@code error} always; {@code field}, {@code value}, {@code rule} for 400 and 404
 */
public record ErrorReply(int status, Map<String, @Nullable Object> body) {

    /** Longest value an error body echoes. */
    public static final int VALUE_CHARS = 200;

    /** The answer to a failure thrown by an operation. */
    public static ErrorReply of(RuntimeException failure) {
        if (failure instanceof RmqNotFoundException notFound) {
            return invalid(404, notFound);
        }
        if (failure instanceof RmqInvalidArgumentException invalid) {
            return invalid(400, invalid);
        }
        if (failure instanceof UnsupportedOperationException unsupported) {
            return message(409, unsupported.getMessage());
        }
        return message(500, failure.getMessage() == null ? failure.getClass().getName() : failure.getMessage());
    }

    /** 404: nothing answers this route (an unknown path under the endpoint or the dashboard's API). */
    public static ErrorReply noRoute(String route, String rule) {
        return of(new RmqNotFoundException("route", route, rule));
    }

    /** An answer with a message only. */
    public static ErrorReply message(int status, @Nullable String message) {
        Map<String, @Nullable Object> body = new LinkedHashMap<>();
        body.put("error", message == null ? "error" : message);
        return new ErrorReply(status, Collections.unmodifiableMap(body));
    }

    private static ErrorReply invalid(int status, RmqInvalidArgumentException ex) {
        Object value = shown(ex.getValue());
        String message = ex instanceof RmqNotFoundException
                ? "No " + ex.getField() + " '" + value + "': " + ex.getRule()
                : "Invalid " + ex.getField() + " '" + value + "': " + ex.getRule();
        Map<String, @Nullable Object> body = new LinkedHashMap<>();
        body.put("error", message);
        body.put("field", ex.getField());
        body.put("value", value);
        body.put("rule", ex.getRule());
        return new ErrorReply(status, Collections.unmodifiableMap(body));
    }

    /** Numbers and booleans as they are, anything else as text cut to {@value #VALUE_CHARS} characters. */
    private static @Nullable Object shown(@Nullable Object value) {
        if (value == null || value instanceof Number || value instanceof Boolean) {
            return value;
        }
        String text = String.valueOf(value);
        if (text.length() <= VALUE_CHARS) {
            return text;
        }
        int end = Character.isHighSurrogate(text.charAt(VALUE_CHARS - 1)) ? VALUE_CHARS - 1 : VALUE_CHARS;
        return text.substring(0, end) + "… (" + text.length() + " characters)";
    }
}
