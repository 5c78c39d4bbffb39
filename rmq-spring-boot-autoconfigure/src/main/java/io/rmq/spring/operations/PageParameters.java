package io.rmq.spring.operations;

import io.rmq.core.RmqInvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * The {@code offset} and {@code limit} of a paged read as the endpoint and the dashboard receive them (query text),
 * checked before anything is read: a value that is no whole number, or out of range, is refused naming the field, the
 * value and the rule (never narrowed into range: {@code limit=4294967297} is not 1). Static and stateless.
 */
public final class PageParameters {

    /** The page size when none is asked for. */
    public static final int DEFAULT_LIMIT = 20;

    private PageParameters() {
    }

    /** The offset given as text; 0 when absent or empty. */
    public static long offset(@Nullable String text) {
        if (text == null || text.isEmpty()) {
            return 0;
        }
        long offset = wholeNumber("offset", text, "must be a whole number, zero or positive");
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", text, "must be a whole number, zero or positive");
        }
        return offset;
    }

    /** The limit given as text; {@value #DEFAULT_LIMIT} when absent or empty. */
    public static int limit(@Nullable String text) {
        String rule = "must be a whole number between 1 and " + RmqOperations.MAX_PAGE;
        if (text == null || text.isEmpty()) {
            return DEFAULT_LIMIT;
        }
        long limit = wholeNumber("limit", text, rule);
        if (limit < 1 || limit > RmqOperations.MAX_PAGE) {
            throw new RmqInvalidArgumentException("limit", text, rule);
        }
        return (int) limit;
    }

    private static long wholeNumber(String field, String text, String rule) {
        try {
            return Long.parseLong(text.trim());
        }
        catch (NumberFormatException ex) {
            throw new RmqInvalidArgumentException(field, text, rule);
        }
    }
}
