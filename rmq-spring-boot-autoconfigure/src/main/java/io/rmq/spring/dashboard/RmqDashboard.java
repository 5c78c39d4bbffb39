package io.rmq.spring.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.spring.operations.ErrorReply;
import io.rmq.spring.operations.PageParameters;
import io.rmq.spring.operations.RmqNotFoundException;
import io.rmq.spring.operations.RmqOperations;
import io.rmq.spring.operations.RmqOperations.ListenerView;
import io.rmq.spring.operations.RmqOperations.TopicView;
import org.jspecify.annotations.Nullable;

/**
 * The dashboard, independent of the web stack: its static files and one dispatcher for its JSON routes under
 * {@code <path>/api}, which the Servlet and the Reactive router functions both call (so both serve the same thing).
 * Every read and change goes through {@link RmqOperations}, like the Actuator endpoint's. Mutating routes are POSTs
 * and answer 403 while the dashboard is read-only. A message is named by {@code body} or, when it was sent with one, by
 * {@code id} (query parameter of {@code find}; JSON field of cancel, reschedule and the dead message's requeue and
 * delete). Pauses: {@code listeners/{id}/pause|resume} are this instance's own; {@code listeners/{id}/pause-cluster|
 * resume-cluster} and {@code topics/{t}/pause|resume} are cluster-wide (stored in Redis, honoured by every instance).
 * Every failure is answered by {@link ErrorReply}, as the endpoint's: a route under {@code topics/{t}} first checks
 * the topic (400 for an invalid name, 404 for an unknown topic, the same on every route), and what is not there is a
 * 404 naming it.
 * The operator's bulk actions ({@code retries|waiting/run-now|delete}, {@code dead/requeue-matching|delete-matching},
 * {@code dead-groups}) sit beside the others; every POST writes one audit line ({@link DashboardAudit}).
 */
public class RmqDashboard {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqDashboard.class);

    /** Strict: the page runs only its own script and style, fetches only its own routes. */
    public static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self';"
            + " connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    /** What an unknown route breaks. */
    private static final String ROUTES = "must be a route of the dashboard's API (see docs/operations.md, Dashboard)";

    /** Figures from the application's meters (Micrometer), when it has them. */
    public interface Meters {

        /** The topic's meters, or null when there are none. */
        @Nullable TopicMeters topic(String topic);

        /** Whether a meter registry is there at all. */
        boolean available();
    }

    /**
     * Counts since start (the page turns them into rates between two reads) and lateness percentiles in ms (the
     * largest over the topic's listeners); null when there is no such meter.
     */
    public record TopicMeters(@Nullable Double sent, @Nullable Double handled, @Nullable Double latenessP50,
            @Nullable Double latenessP90, @Nullable Double latenessP99) {
    }

    /** One row of the dashboard's topic table. */
    public record TopicRow(TopicView topic, @Nullable TopicMeters meters) {
    }

    /** What the page polls. */
    public record Overview(boolean readOnly, boolean meters, List<TopicRow> topics, List<ListenerView> listeners,
            List<io.rmq.spring.schedule.RmqSchedules.ScheduleView> schedules) {
    }

    /** A reply: HTTP status and what goes into its JSON body. */
    public record Reply(int status, Object body) {

        static Reply ok(@Nullable Object body) {
            return body == null ? notFound() : new Reply(200, body);
        }

        /** 404 for a route nothing answers (prefer {@link #noRoute(String)}, which names it). */
        static Reply notFound() {
            return of(ErrorReply.message(404, "not found"));
        }

        /** 404 naming the route nothing answers. */
        static Reply noRoute(String route) {
            return of(ErrorReply.noRoute(route, ROUTES));
        }

        static Reply error(int status, @Nullable String message) {
            return of(ErrorReply.message(status, message));
        }

        static Reply of(ErrorReply error) {
            return new Reply(error.status(), error.body());
        }

        /** 200 with the value; else the failure the supplier names (404). */
        static Reply found(@Nullable Object body, java.util.function.Supplier<RmqNotFoundException> otherwise) {
            if (body == null) {
                throw otherwise.get();
            }
            return new Reply(200, body);
        }
    }

    /** A static file of the page. */
    public record Asset(String contentType, byte[] content) {
    }

    private static final Meters NO_METERS = new Meters() {
        @Override
        public @Nullable TopicMeters topic(String topic) {
            return null;
        }

        @Override
        public boolean available() {
            return false;
        }
    };

    private final RmqOperations operations;
    private final String path;
    private final boolean readOnly;
    private final Meters meters;
    private final String page;
    private final byte[] script;
    private final byte[] style;

    /**
     * @param path     where the page is served (e.g. {@code /rmq}), relative to the application's context path
     * @param readOnly whether POSTs are refused
     * @param meters   the application's meters, or null
     */
    /** The application's schedules (shown, paused and resumed by the page), or null when it has none. */
    private volatile io.rmq.spring.schedule.@Nullable RmqSchedules schedules;

    /** Shows the application's schedules (null: none). */
    public void setSchedules(io.rmq.spring.schedule.@Nullable RmqSchedules schedules) {
        this.schedules = schedules;
    }

    public RmqDashboard(RmqOperations operations, String path, boolean readOnly, @Nullable Meters meters) {
        this.operations = operations;
        this.path = path;
        this.readOnly = readOnly;
        this.meters = meters == null ? NO_METERS : meters;
        this.page = new String(resource("dashboard.html"), StandardCharsets.UTF_8);
        this.script = resource("dashboard.js");
        this.style = resource("dashboard.css");
    }

    public String path() {
        return path;
    }

    public boolean isReadOnly() {
        return readOnly;
    }

    private static byte[] resource(String name) {
        try (InputStream in = RmqDashboard.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("RMQ dashboard resource " + name + " is missing");
            }
            return in.readAllBytes();
        }
        catch (IOException ex) {
            throw new IllegalStateException("Cannot read RMQ dashboard resource " + name, ex);
        }
    }

    private static final tools.jackson.databind.json.JsonMapper JSON = tools.jackson.databind.json.JsonMapper.builder()
            .build();

    /** A reply's body as JSON text (the same in Servlet and Reactive applications, whatever their converters). */
    public static String json(Object body) {
        return JSON.writeValueAsString(body);
    }

    /** A POST's JSON object; an empty or absent body is an empty object. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parse(@Nullable String body) {
        if (body == null || body.isBlank()) {
            return Map.of();
        }
        try {
            return JSON.readValue(body, Map.class);
        }
        catch (RuntimeException ex) {
            throw new RmqInvalidArgumentException("request body", body.length() > 100 ? body.substring(0, 100) + "…"
                    : body, "must be a JSON object");
        }
    }

    /** The route under {@code <path>/api/} of a request's path within the application, or null. */
    public @Nullable String route(String pathWithinApplication) {
        String prefix = path + "/api/";
        return pathWithinApplication.startsWith(prefix) ? pathWithinApplication.substring(prefix.length()) : null;
    }

    /** The page, for an application served under {@code contextPath}. */
    public String page(@Nullable String contextPath) {
        String base = htmlEscape((contextPath == null ? "" : contextPath) + path);
        return page.replace("{{base}}", base).replace("{{readOnly}}", String.valueOf(readOnly));
    }

    /** The page's script or style by file name, or null. */
    public @Nullable Asset asset(String name) {
        return switch (name) {
            case "dashboard.js" -> new Asset("text/javascript;charset=UTF-8", script);
            case "dashboard.css" -> new Asset("text/css;charset=UTF-8", style);
            default -> null;
        };
    }

    static String htmlEscape(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            switch (c) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    // ---------------------------------------------------------------- JSON routes

    /**
     * A GET under {@code <path>/api}.
     *
     * @param route the path after {@code <path>/api/}, still URL-encoded
     * @param query a query parameter by name, or null
     */
    public Reply get(String route, Function<String, String> query) {
        return answer(() -> {
            List<String> s = segments(route);
            if (s.size() == 1 && s.get(0).equals("overview")) {
                return Reply.ok(overview());
            }
            if (s.size() == 1 && s.get(0).equals("redis")) {
                return Reply.ok(operations.redis());
            }
            if (s.size() >= 2 && s.get(0).equals("topics")) {
                String topic = s.get(1);
                operations.requireTopic(topic);
                if (s.size() == 2) {
                    return Reply.found(operations.topic(topic), () -> RmqNotFoundException.topic(topic));
                }
                if (s.size() == 3) {
                    return switch (s.get(2)) {
                        case "dead" -> present(query.apply("error")) || present(query.apply("prefix"))
                                ? Reply.ok(operations.dead(topic, offset(query), limit(query), query.apply("error"),
                                        query.apply("prefix")))
                                : Reply.ok(operations.dead(topic, offset(query), limit(query)));
                        case "dead-groups" -> Reply.ok(operations.deadGroups(topic));
                        case "retries" -> Reply.ok(operations.retries(topic, offset(query), limit(query)));
                        case "waiting" -> Reply.ok(operations.waiting(topic, query.apply("cursor"), limit(query)));
                        case "in-flight" -> Reply.found(operations.inFlight(topic, offset(query), limit(query)),
                                () -> RmqNotFoundException.topic(topic));
                        case "history" -> Reply.found(operations.history(topic, query.apply("resolution")),
                                () -> RmqNotFoundException.topic(topic));
                        case "find" -> find(topic, query);
                        default -> Reply.noRoute("GET " + route);
                    };
                }
            }
            if (s.size() == 2 && s.get(0).equals("listeners")) {
                return Reply.found(operations.listener(s.get(1)), () -> RmqNotFoundException.listener(s.get(1)));
            }
            if (s.size() == 1 && s.get(0).equals("instances")) {
                return Reply.ok(operations.instances());
            }
            if (s.size() == 2 && s.get(0).equals("instances")) {
                return Reply.found(operations.instance(s.get(1)), () -> RmqNotFoundException.instance(s.get(1)));
            }
            if (s.size() == 1 && s.get(0).equals("pauses")) {
                return Reply.ok(operations.pauses());
            }
            return Reply.noRoute("GET " + route);
        });
    }

    /** {@code find?id=} (a message sent with an id) or {@code find?body=} (one without): exactly one of the two. */
    private Reply find(String topic, Function<String, String> query) {
        String id = query.apply("id");
        String body = query.apply("body");
        if (id != null && body != null) {
            throw new RmqInvalidArgumentException("id and body", "both given", "must name the message by exactly one:"
                    + " id (a message sent with one) or body");
        }
        if (id != null) {
            return Reply.ok(operations.findById(topic, id));
        }
        if (body == null || body.isEmpty()) {
            throw new RmqInvalidArgumentException("body", body, "must be given (or id, for a message sent with one)");
        }
        return Reply.ok(operations.find(topic, body));
    }

    /**
     * A POST under {@code <path>/api}: refused with 403 while read-only.
     *
     * @param route the path after {@code <path>/api/}, still URL-encoded
     * @param body  the request's JSON object (may be empty)
     */
    public Reply post(String route, String body) {
        return post(route, body, "anonymous");
    }

    /**
     * A POST as {@link #post(String, String)}, by {@code who} (the request's principal and address): each one, done,
     * refused or failed, writes one audit line (see docs/operations.md, "Dashboard").
     */
    public Reply post(String route, String body, String who) {
        Reply reply = readOnly ? Reply.error(403, "The RMQ dashboard is read-only (rmq.dashboard.read-only=true)")
                : change(route, body);
        Map<String, Object> named;
        try {
            named = parse(body);
        }
        catch (RmqInvalidArgumentException ex) {
            named = Map.of();
        }
        DashboardAudit.log(who, route, named, reply);
        return reply;
    }

    private Reply change(String route, String body) {
        return answer(() -> {
            List<String> s = segments(route);
            Map<String, Object> in = parse(body);
            io.rmq.spring.schedule.RmqSchedules scheduled = schedules;
            if (s.size() == 3 && s.get(0).equals("schedules")) {
                String name = s.get(1);
                return switch (s.get(2)) {
                    case "pause" -> Reply.found(scheduled == null ? null : scheduled.pause(name),
                            () -> RmqNotFoundException.schedule(name));
                    case "resume" -> Reply.found(scheduled == null ? null : scheduled.resume(name),
                            () -> RmqNotFoundException.schedule(name));
                    default -> Reply.noRoute("POST " + route);
                };
            }
            if (s.size() == 3 && s.get(0).equals("listeners")) {
                String id = s.get(1);
                java.util.function.Supplier<RmqNotFoundException> here = () -> RmqNotFoundException.listener(id);
                java.util.function.Supplier<RmqNotFoundException> anywhere = () -> new RmqNotFoundException(
                        "listener", id, "must be the id of a listener here or on a live instance");
                return switch (s.get(2)) {
                    case "pause" -> Reply.found(operations.pause(id), here);
                    case "resume" -> Reply.found(operations.resume(id), here);
                    case "pause-cluster" -> Reply.found(operations.pauseListenerCluster(id, "dashboard"), anywhere);
                    case "resume-cluster" -> Reply.found(operations.resumeListenerCluster(id), anywhere);
                    default -> Reply.noRoute("POST " + route);
                };
            }
            if (s.size() >= 3 && s.get(0).equals("topics")) {
                String topic = s.get(1);
                operations.requireTopic(topic);
                String action = String.join("/", s.subList(2, s.size()));
                return switch (action) {
                    case "dead/requeue" -> Reply.ok(byId(in)
                            ? operations.requeueDead(topic, slot(in), text(in, "id"), null)
                            : operations.requeueDead(topic, slot(in), text(in, "body")));
                    case "dead/delete" -> Reply.ok(byId(in)
                            ? operations.deleteDead(topic, slot(in), text(in, "id"), null)
                            : operations.deleteDead(topic, slot(in), text(in, "body")));
                    case "dead/requeue-selected" -> Reply.ok(operations.requeueDeadSelected(topic,
                            RmqOperations.selection(in.get("messages"))));
                    case "dead/delete-selected" -> Reply.ok(operations.deleteDeadSelected(topic,
                            RmqOperations.selection(in.get("messages"))));
                    case "dead/requeue-matching" -> Reply.ok(operations.requeueDeadMatching(topic,
                            optional(in, "error"), optional(in, "prefix")));
                    case "dead/delete-matching" -> Reply.ok(operations.deleteDeadMatching(topic,
                            optional(in, "error"), optional(in, "prefix")));
                    case "retries/run-now", "waiting/run-now" -> Reply.ok(operations.runNow(topic,
                            RmqOperations.selection(in.get("messages"))));
                    case "retries/delete", "waiting/delete" -> Reply.ok(operations.deleteWaiting(topic,
                            RmqOperations.selection(in.get("messages"))));
                    case "dead/requeue-all" -> Reply.ok(operations.requeueAllDead(topic));
                    case "dead/purge" -> Reply.ok(operations.purgeDead(topic));
                    case "pause" -> Reply.found(operations.pauseTopicCluster(topic, "dashboard"),
                            () -> RmqNotFoundException.topic(topic));
                    case "resume" -> Reply.found(operations.resumeTopicCluster(topic),
                            () -> RmqNotFoundException.topic(topic));
                    case "cancel" -> Reply.ok(byId(in) ? operations.cancelById(topic, text(in, "id"))
                            : operations.cancel(topic, text(in, "body")));
                    case "reschedule" -> Reply.ok(Map.of("result", byId(in)
                            ? operations.rescheduleById(topic, text(in, "id"), text(in, "when"))
                            : operations.reschedule(topic, text(in, "body"), text(in, "when"))));
                    default -> Reply.noRoute("POST " + route);
                };
            }
            return Reply.noRoute("POST " + route);
        });
    }

    public Overview overview() {
        RmqOperations.Overview overview = operations.overview();
        List<TopicRow> rows = new ArrayList<>(overview.topics().size());
        for (TopicView topic : overview.topics()) {
            rows.add(new TopicRow(topic, meters.topic(topic.name())));
        }
        io.rmq.spring.schedule.RmqSchedules scheduled = schedules;
        return new Overview(readOnly, meters.available(), rows, overview.listeners(),
                scheduled == null ? List.of() : scheduled.list());
    }

    private interface Work {
        Reply run();
    }

    private static Reply answer(Work work) {
        try {
            return work.run();
        }
        catch (RuntimeException ex) {
            ErrorReply error = ErrorReply.of(ex);
            if (error.status() == 500) {
                log.warn("RMQ dashboard request failed: {}", ex.toString());
            }
            return Reply.of(error);
        }
    }

    private static List<String> segments(String route) {
        List<String> out = new ArrayList<>();
        for (String segment : route.split("/")) {
            if (!segment.isEmpty()) {
                out.add(URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    private static long offset(Function<String, String> query) {
        return PageParameters.offset(query.apply("offset"));
    }

    private static int limit(Function<String, String> query) {
        return PageParameters.limit(query.apply("limit"));
    }

    private static String required(@Nullable String value, String name) {
        if (value == null || value.isEmpty()) {
            throw new RmqInvalidArgumentException(name, value, "must be given");
        }
        return value;
    }

    private static boolean present(@Nullable String value) {
        return value != null && !value.isEmpty();
    }

    /**
     * A message named by its id ({@code "id"}, even empty: refused naming the id) rather than by its body
     * ({@code "body"}).
     */
    private static boolean byId(Map<String, Object> body) {
        return body.get("id") != null;
    }

    private static String text(Map<String, Object> body, String name) {
        Object value = body.get(name);
        return required(value == null ? null : value.toString(), name);
    }

    private static @Nullable String optional(Map<String, Object> body, String name) {
        Object value = body.get(name);
        return value == null ? null : value.toString();
    }

    private static int slot(Map<String, Object> body) {
        Object value = body.get("slot");
        if (value instanceof Number number) {
            return number.intValue();
        }
        try {
            return Integer.parseInt(String.valueOf(value));
        }
        catch (NumberFormatException ex) {
            throw new RmqInvalidArgumentException("slot", value, "must be a slot number");
        }
    }
}
