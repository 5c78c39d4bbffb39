package io.rmq.consumer.internal;

import io.rmq.consumer.RmqConsumer;
import tools.jackson.core.JacksonException;

/**
 * The text kept with a failed message (its reason) and shown in log lines. Not API: static helpers of
 * {@link DeliveryHandler}, {@link Settlement} and {@link RmqConsumer}, called from any thread (no state).
 */
final class Reasons {

    /** Longest error text kept with a failed message. */
    static final int MAX_REASON_CHARS = 2000;

    private Reasons() {
    }

    /** Error text kept with a failed message: exception class and message, and its causes. */
    static String describe(Throwable error) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = error; t != null && text.length() < MAX_REASON_CHARS; t = t.getCause()) {
            if (!text.isEmpty()) {
                text.append("; caused by ");
            }
            text.append(t.getClass().getName());
            if (t.getMessage() != null) {
                text.append(": ").append(t.getMessage());
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return truncate(text.toString());
    }

    /**
     * Why a body could not be read, without quoting the body: a parser's message quotes the offending content
     * (Jackson: "Unrecognized token 'SECRET…'", "from String \"…\"", "Numeric value (…)"), so only the description
     * before the first quote or parenthesis is kept, with the position where reading stopped. Used for the log line
     * and for the reason kept in the dead queue unless bodies may be logged ({@code logBodyChars > 0}).
     */
    static String describeWithoutBody(Throwable error) {
        StringBuilder text = new StringBuilder(error.getClass().getName());
        String message = error instanceof JacksonException jackson ? jackson.getOriginalMessage() : error.getMessage();
        if (message != null) {
            int cut = message.length();
            for (char c : new char[] {'\'', '"', '(', '[', '\n'}) {
                int at = message.indexOf(c);
                if (at >= 0) {
                    cut = Math.min(cut, at);
                }
            }
            String kept = message.substring(0, cut).strip();
            text.append(": ").append(kept.isEmpty() ? "(details not shown)" : kept);
            if (cut < message.length()) {
                text.append(" (details not shown: they quote the body; rmq.log-bodies shows them)");
            }
        }
        if (error instanceof JacksonException jackson && jackson.getLocation() != null
                && jackson.getLocation().getLineNr() > 0) {
            text.append(" at line ").append(jackson.getLocation().getLineNr()).append(", column ")
                    .append(jackson.getLocation().getColumnNr());
        }
        return truncate(text.toString());
    }

    static String truncate(String reason) {
        String text = reason == null ? "(no reason given)" : reason;
        return text.length() > MAX_REASON_CHARS ? text.substring(0, MAX_REASON_CHARS) + "..." : text;
    }
}
