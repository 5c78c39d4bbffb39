package io.rmq.spring.dashboard;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * The audit trail of the dashboard's changes: one INFO line per POST (done, refused or failed) under the logger
 * {@value #LOGGER}, saying who (the request's principal, else {@code anonymous}, and the client's address), what (the
 * route and what the request named) and how it ended. Bodies are never written (they may hold personal data): a
 * message named by its body shows as its length, one named by id as its id, a selection as its size and the ids it
 * names (the first {@value #IDS_SHOWN}; a message named by a handle shows its id when it has one, else "body").
 * Static and stateless: any request thread calls it.
 */
final class DashboardAudit {

    /** The logger of the audit lines (route it to its own file or level as the application wishes). */
    static final String LOGGER = "io.rmq.spring.dashboard.audit";

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(LOGGER);

    private static final int IDS_SHOWN = 10;

    private static final int VALUE_CHARS = 100;

    private DashboardAudit() {
    }

    /** Writes the line of one POST. */
    static void log(String who, String route, Map<String, Object> request, RmqDashboard.Reply reply) {
        if (log.isInfoEnabled()) {
            log.info("RMQ dashboard: {} POST {}{} -> {}", who, route, named(request), outcome(reply));
        }
    }

    /** What the request named, e.g. {@code " (messages=2: slot 1 id order-7; slot 3 body)"}; empty when nothing. */
    static String named(Map<String, Object> request) {
        if (request.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder(" (");
        new TreeMap<>(request).forEach((name, value) -> {
            if (out.length() > 2) {
                out.append(", ");
            }
            out.append(name).append('=');
            switch (name) {
                case "body" -> out.append(value == null ? "null" : "<" + value.toString().length() + " chars>");
                case "messages" -> selection(out, value);
                default -> out.append(cut(String.valueOf(value)));
            }
        });
        return out.append(')').toString();
    }

    private static void selection(StringBuilder out, @Nullable Object value) {
        if (!(value instanceof List<?> list)) {
            out.append(cut(String.valueOf(value)));
            return;
        }
        out.append(list.size());
        int shown = 0;
        for (Object entry : list) {
            if (shown == IDS_SHOWN) {
                out.append(", …");
                break;
            }
            out.append(shown == 0 ? ": " : "; ");
            if (entry instanceof Map<?, ?> m) {
                out.append("slot ").append(m.get("slot"));
                String id = m.get("id") != null ? String.valueOf(m.get("id")) : idOf(m.get("handle"));
                out.append(id != null ? " id " + cut(id) : " body");
            }
            else {
                out.append('?');
            }
            shown++;
        }
    }

    /** The id a handle names (0xFF + id), or null: a body (never written) or not a handle at all. */
    private static @Nullable String idOf(@Nullable Object handle) {
        try {
            return handle == null ? null
                    : io.rmq.admin.MessageRef.idOf(java.util.Base64.getDecoder().decode(handle.toString()));
        }
        catch (IllegalArgumentException notBase64) {
            return null;
        }
    }

    private static String outcome(RmqDashboard.Reply reply) {
        Object body = reply.body();
        if (reply.status() != 200) {
            Object error = body instanceof Map<?, ?> m ? m.get("error") : body;
            return reply.status() + " " + cut(String.valueOf(error));
        }
        if (body instanceof io.rmq.spring.operations.RmqOperations.MatchingResult m) {
            return "200 count " + m.count() + " of " + m.matched() + " matched" + (m.more() ? ", more left" : "");
        }
        if (body instanceof io.rmq.spring.operations.RmqOperations.Result r) {
            return "200 count " + r.count();
        }
        return "200 " + cut(String.valueOf(body));
    }

    private static String cut(String value) {
        String oneLine = value.replace('\n', ' ').replace('\r', ' ');
        return oneLine.length() > VALUE_CHARS ? oneLine.substring(0, VALUE_CHARS) + "…" : oneLine;
    }
}
