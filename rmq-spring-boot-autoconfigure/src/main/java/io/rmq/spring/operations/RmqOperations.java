package io.rmq.spring.operations;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.rmq.Rmq;
import io.rmq.admin.BrowsePage;
import io.rmq.admin.CancelResult;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.RescheduleResult;
import io.rmq.admin.RmqAdmin;
import io.rmq.admin.TopicHistory;
import io.rmq.admin.TopicStats;
import io.rmq.admin.WaitingMessage;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.internal.RmqInternals;
import io.rmq.redis.internal.RedisGateway;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.listener.RmqListenerState;
import org.jspecify.annotations.Nullable;

/**
 * What an operator sees and does, in one place for the {@code /actuator/rmq} endpoint and the dashboard (so the two
 * never disagree): topics with their queue sizes, listeners with their state, dead and waiting messages page by page,
 * and the changes an operator makes (requeue, delete, purge, cancel, reschedule, pause, resume). Results are plain
 * records that serialize to JSON as they are; bodies are shown as UTF-8 text (what RMQ's JSON codec writes), and
 * where a change must name the exact stored body (a dead message without an id) it also travels as base64. A message
 * sent with an id shows its id, and is named by it; every message shows its headers (values cut to
 * {@value #HEADER_VALUE_CHARS} characters).
 */
public class RmqOperations {

    /** Most messages one page of dead or waiting messages may ask for. */
    public static final int MAX_PAGE = 200;

    /** How much of a header value the views show (a value may be up to {@code rmq.max-header-value-size} long). */
    public static final int HEADER_VALUE_CHARS = 200;

    /** Most messages one bulk requeue or delete of dead messages may name. */
    public static final int MAX_SELECTION = 200;

    private final Rmq rmq;
    private final RmqListenerEndpointRegistry registry;
    /** rmq.dashboard.show-bodies: whether the retries and in-flight views show body text. */
    private volatile boolean showBodies;

    public RmqOperations(Rmq rmq, RmqListenerEndpointRegistry registry) {
        this.rmq = rmq;
        this.registry = registry;
    }

    /** Whether the retries and in-flight views show body text ({@code rmq.dashboard.show-bodies}). */
    public boolean showBodies() {
        return showBodies;
    }

    public void setShowBodies(boolean showBodies) {
        this.showBodies = showBodies;
    }

    // ---------------------------------------------------------------- the views

    /** Topics and listeners at a glance (what {@code GET /actuator/rmq} returns). */
    public record Overview(List<TopicView> topics, List<ListenerView> listeners) {
    }

    /**
     * One topic.
     *
     * @param name       topic name
     * @param type       RANGE_MERGE, PRIORITY or FIXED_TIME
     * @param slots      slot amount
     * @param mode       consume mode registered for the topic (CONCURRENT or ORDERLY), null when none is registered
     * @param waiting    messages waiting for their time or turn (not counting those in {@code retrying})
     * @param inFlight   messages taken by a consumer and not settled
     * @param retrying   failed messages waiting out their backoff before the next attempt
     * @param dead       messages in the dead queue
     * @param oldestDue  earliest due time in the store of a time-typed topic (retries included), or null
     * @param perSlot    sizes per slot (the one-topic read; null in the overview)
     */
    public record TopicView(String name, TopicType type, int slots, @Nullable String mode, long waiting,
            long inFlight, long retrying, long dead, @Nullable Instant oldestDue,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
            @Nullable List<SlotView> perSlot) {
    }

    /** Figures of one slot. */
    public record SlotView(int slot, long waiting, long inFlight, long retrying, long dead) {
    }

    /**
     * One listener container.
     *
     * @param state          running, paused or stopped
     * @param ownedSlots     ORDERLY: the slots it owns now; CONCURRENT: empty
     * @param suspendedSlots ORDERLY: owned slots waiting for their failed head's retry
     * @param watchdogRepairs stalls its watchdog found and repaired (0 when healthy)
     * @param pausedHere     whether this instance's own pause is on ({@code listeners/{id}/pause})
     * @param pausedCluster  whether a cluster-wide pause of the listener or its topic is on (stored in Redis)
     */
    public record ListenerView(String id, String topic, String mode, String state, int concurrency,
            List<Integer> ownedSlots, List<Integer> suspendedSlots, long watchdogRepairs, boolean pausedHere,
            boolean pausedCluster) {
    }

    /**
     * A dead message.
     *
     * @param body       the body (for a message sent with an id, its payload) as text
     * @param bodyBase64 the exact stored body (name it to requeue or delete a message without an id)
     * @param id         the id it was sent with (name it to requeue or delete this message), or null
     * @param headers    its headers, values cut to {@value #HEADER_VALUE_CHARS} characters
     * @param handle     the member as stored (base64: the body, or 0xFF + the id): names it in a selection
     */
    public record DeadView(int slot, String body, String bodyBase64, String error, int attempts, Instant diedAt,
            @Nullable Long priority, @Nullable String id, Map<String, String> headers, String handle) {
    }

    /** A page of dead messages: slot by slot, oldest death first within a slot. */
    public record DeadPage(String topic, long offset, int limit, long total, List<DeadView> messages) {
    }

    /**
     * A waiting message.
     *
     * @param dueAt    when it falls due (time types), else null
     * @param priority its priority (PRIORITY), else null
     * @param failedAttempts failed attempts so far (above 0: it waits for a retry)
     * @param id       the id it was sent with, or null (its body is its identity)
     * @param headers  its headers, values cut to {@value #HEADER_VALUE_CHARS} characters
     */
    public record WaitingView(int slot, String body, @Nullable Instant dueAt, @Nullable Long priority,
            int failedAttempts, @Nullable String id, Map<String, String> headers) {
    }

    /**
     * A page of waiting messages in taking order.
     *
     * @param next the cursor of the next page (pass it back as {@code cursor}), or null at the end
     */
    public record WaitingPage(String topic, List<WaitingView> messages, @Nullable String next) {
    }

    /**
     * Where a message (by its body or its id) is.
     *
     * @param body    the body (for a message sent with an id, its payload; empty when it is not there) as text
     * @param id      the id looked for, or null
     * @param headers its headers, values cut to {@value #HEADER_VALUE_CHARS} characters
     */
    public record FindView(String topic, int slot, String body, boolean waiting, @Nullable Instant dueAt,
            @Nullable Long priority, boolean inFlight, @Nullable Instant retryAt, int failedAttempts,
            @Nullable Instant diedAt, @Nullable String deadReason, boolean cancelled, @Nullable String id,
            Map<String, String> headers) {
    }

    /**
     * What a topic's senders and consumers did over the last hour or day (see {@link TopicHistory}).
     *
     * @param resolution {@code minute} (60 points, the last hour) or {@code hour} (24 points, the last day)
     * @param from       the start of the first point
     * @param to         the end of the last point (the current minute or hour, still filling)
     * @param points     oldest first: {@code at} (the point's start), {@code sent}, {@code handled}, {@code failed}
     *                   (handler failures, retried or not), {@code dead} (of those, moved to the dead queue)
     */
    public record HistoryView(String topic, String resolution, Instant from, Instant to,
            List<TopicHistory.Point> points) {
    }

    /** What a change did: {@code count} messages (or 1/0 for one message or listener). */
    public record Result(String action, String target, long count) {
    }

    // ---------------------------------------------------------------- topics and listeners

    public Overview overview() {
        List<TopicView> topics = new ArrayList<>();
        for (TopicDefinition topic : topicDefinitions().values()) {
            topics.add(topicView(topic, false));
        }
        return new Overview(List.copyOf(topics), listeners());
    }

    /** Every topic defined here or registered in Redis (under this key prefix), by name. */
    public Map<String, TopicDefinition> topicDefinitions() {
        // Redis's registry is the cluster-wide truth (it knows the consume mode); local definitions not registered
        // yet (Redis was down at start) are shown too
        Map<String, TopicDefinition> all = new TreeMap<>(rmq.topics().all());
        all.putAll(RedisGateway.await(RmqInternals.redisAdmin(rmq).topics(), "reading the registered topics"));
        return all;
    }

    /** One topic with its sizes per slot; null when no such topic is defined here or registered in Redis. */
    public @Nullable TopicView topic(String name) {
        TopicDefinition topic = definition(name);
        return topic == null ? null : topicView(topic, true);
    }

    private @Nullable TopicDefinition definition(String name) {
        try {
            TopicDefinition.validateName(name);
            TopicDefinition registered = RedisGateway.await(RmqInternals.redis(rmq).topic(name),
                    "reading topic " + name);
            return registered != null ? registered : rmq.topics().all().get(name);
        }
        catch (RmqInvalidArgumentException ex) {
            return null; // not a topic name at all
        }
    }

    private TopicDefinition required(String name) {
        TopicDefinition topic = definition(name);
        if (topic == null) {
            throw new RmqInvalidArgumentException("topic", name, "is not defined here nor registered in Redis");
        }
        return topic;
    }

    private TopicView topicView(TopicDefinition topic, boolean perSlot) {
        TopicStats stats = rmq.admin().stats(topic.name());
        List<SlotView> slots = null;
        if (perSlot) {
            slots = stats.slots().stream().map(s -> new SlotView(s.slot(), s.waiting(), s.inFlight(), s.retrying(),
                    s.dead())).toList();
        }
        return new TopicView(topic.name(), topic.type(), topic.slotAmount(),
                topic.mode() == null ? null : topic.mode().name(), stats.waiting(), stats.inFlight(), stats.retrying(),
                stats.dead(), stats.oldestDue(), slots);
    }

    public List<ListenerView> listeners() {
        return registry.getListenerStates().stream().map(this::listenerView).toList();
    }

    /** One listener; null when there is none with this id. */
    public @Nullable ListenerView listener(String id) {
        return registry.getListenerContainer(id) == null ? null : listenerView(registry.getListenerState(id));
    }

    private ListenerView listenerView(RmqListenerState s) {
        io.rmq.container.ListenerContainer container = registry.getListenerContainer(s.id());
        return new ListenerView(s.id(), s.topic(), s.mode().name(), s.status().name().toLowerCase(Locale.ROOT),
                s.concurrency(), List.copyOf(s.ownedSlots()), List.copyOf(s.suspendedSlots()), s.stallsRepaired(),
                container != null && container.isPausedHere(), container != null && container.isPausedCluster());
    }

    /** Stops the listener taking messages (what it has in hand is finished); null when there is none. */
    public @Nullable ListenerView pause(String id) {
        if (registry.getListenerContainer(id) == null) {
            return null;
        }
        registry.pause(id);
        return listener(id);
    }

    /** Lets a paused listener take messages again; null when there is none. */
    public @Nullable ListenerView resume(String id) {
        if (registry.getListenerContainer(id) == null) {
            return null;
        }
        registry.resume(id);
        return listener(id);
    }

    // ---------------------------------------------------------------- history

    /**
     * The topic's history at {@code resolution} ({@code minute}, the default, or {@code hour}; anything else is refused
     * naming it); null when no such topic is defined here or registered in Redis.
     */
    public @Nullable HistoryView history(String topic, @Nullable String resolution) {
        TopicHistory.Resolution r = TopicHistory.Resolution.parse(resolution == null || resolution.isBlank()
                ? "minute" : resolution);
        if (definition(topic) == null) {
            return null;
        }
        TopicHistory history = rmq.admin().history(topic, r);
        return new HistoryView(history.topic(), r.label(), history.from(), history.to(), history.points());
    }

    // ---------------------------------------------------------------- dead messages

    public DeadPage dead(String topic, long offset, int limit) {
        required(topic);
        checkLimit(limit);
        long total = rmq.admin().deadCount(topic);
        List<DeadView> page = rmq.admin().deadMessages(topic, offset, limit).stream().map(RmqOperations::deadView)
                .toList();
        return new DeadPage(topic, offset, limit, total, page);
    }

    private static DeadView deadView(DeadMessage d) {
        return new DeadView(d.slot(), d.bodyAsString(), Base64.getEncoder().encodeToString(d.body()), d.lastError(),
                d.attempts(), d.diedAt(), d.priority(), d.id(), shown(d.headers()), handle(d.id(), d.body()));
    }

    /** Requeues one dead message (its exact stored body, base64); count 0 when it was not dead (any more). */
    public Result requeueDead(String topic, int slot, String bodyBase64) {
        return requeueDead(topic, slot, null, bodyBase64);
    }

    /**
     * Requeues one dead message, named by its id when it was sent with one, else by its exact stored body (base64);
     * count 0 when it was not dead (any more).
     */
    public Result requeueDead(String topic, int slot, @Nullable String id, @Nullable String bodyBase64) {
        boolean done = rmq.admin().requeueDead(deadMessage(topic, slot, id, bodyBase64));
        return new Result("requeue-dead", topic, done ? 1 : 0);
    }

    public Result deleteDead(String topic, int slot, String bodyBase64) {
        return deleteDead(topic, slot, null, bodyBase64);
    }

    /** Deletes one dead message, named as in {@link #requeueDead(String, int, String, String)}. */
    public Result deleteDead(String topic, int slot, @Nullable String id, @Nullable String bodyBase64) {
        boolean done = rmq.admin().deleteDead(deadMessage(topic, slot, id, bodyBase64));
        return new Result("delete-dead", topic, done ? 1 : 0);
    }

    public Result requeueAllDead(String topic) {
        required(topic);
        return new Result("requeue-dead", topic, rmq.admin().requeueAllDead(topic));
    }

    public Result purgeDead(String topic) {
        required(topic);
        return new Result("purge-dead", topic, rmq.admin().purgeDead(topic));
    }

    private DeadMessage deadMessage(String topic, int slot, @Nullable String id, @Nullable String bodyBase64) {
        required(topic);
        if (id != null && !id.isEmpty()) {
            return new DeadMessage(topic, slot, new byte[0], Instant.EPOCH, 0, null, "", id, Map.of());
        }
        byte[] body;
        try {
            body = Base64.getDecoder().decode(bodyBase64 == null ? "" : bodyBase64);
        }
        catch (IllegalArgumentException ex) {
            throw new RmqInvalidArgumentException("body", bodyBase64, "must be base64 (the bodyBase64 of a dead message)");
        }
        if (body.length == 0) {
            throw new RmqInvalidArgumentException("body", bodyBase64, "must not be empty");
        }
        return new DeadMessage(topic, slot, body, null, 0, null, null);
    }

    // ---------------------------------------------------------------- retries, dead search, selections, Redis

    /**
     * A message waiting for a retry.
     *
     * @param id            the id it was sent with, or null (its body is its identity)
     * @param body          its body as text, only with {@code rmq.dashboard.show-bodies=true}; else null
     * @param handle        the member as stored (base64): names the message in write requests
     * @param attempt       attempts made so far, all failed (the next is {@code attempt + 1})
     * @param nextAttemptAt when its backoff ends
     * @param lastError     why its latest attempt failed (cut to 500 bytes), null when that failure was recorded by an
     *                      engine that kept no reason for retries
     * @param failedAt      when its latest attempt failed, null with {@code lastError}
     */
    public record RetryView(int slot, @Nullable String id, @Nullable String body, String handle, int attempt,
            Instant nextAttemptAt, @Nullable String lastError, @Nullable Instant failedAt) {
    }

    /**
     * A page of messages waiting for a retry: slot by slot, soonest next attempt first within a slot.
     *
     * @param capped a slot had more failed messages than one request examines (10,000 per slot): {@code total} and
     *               the pages cover those examined
     */
    public record RetriesPage(String topic, long offset, int limit, long total, boolean capped,
            List<RetryView> messages) {
    }

    /**
     * A page of the dead messages that match a search.
     *
     * @param error   the error text looked for (case-insensitive), or null
     * @param prefix  the id or body prefix looked for, or null
     * @param total   matches among the dead messages examined
     * @param scanned dead messages examined (at most 10,000 per request)
     * @param capped  the search stopped at that bound: {@code total} is a lower bound
     */
    public record DeadSearchView(String topic, long offset, int limit, long total, @Nullable String error,
            @Nullable String prefix, long scanned, boolean capped, List<DeadView> messages) {
    }

    /** A dead message named by a selection: its slot and its handle (base64 member) or id. */
    public record Selected(int slot, @Nullable String handle, @Nullable String id) {
    }

    /** Whether a topic of this name is defined here or registered in Redis. */
    public boolean isTopic(String name) {
        return definition(name) != null;
    }

    /** A page of the topic's messages waiting for a retry (bodies only with show-bodies). */
    public RetriesPage retries(String topic, long offset, int limit) {
        required(topic);
        checkLimit(limit);
        checkOffset(offset);
        io.rmq.admin.RetryPage page = rmq.admin().retries(topic, offset, limit);
        boolean bodies = showBodies;
        List<RetryView> messages = page.messages().stream().map(m -> new RetryView(m.slot(), m.id(),
                bodies ? m.bodyAsString() : null, handle(m.id(), m.body()), m.attempts(), m.nextAttemptAt(),
                m.lastError(), m.failedAt())).toList();
        return new RetriesPage(topic, offset, limit, page.total(), page.capped(), messages);
    }

    /**
     * Dead messages that match {@code error} (case-insensitive substring of the last error) and {@code prefix} (of the
     * id, or of the body for messages without one); blank filters match all.
     */
    public DeadSearchView dead(String topic, long offset, int limit, @Nullable String error, @Nullable String prefix) {
        required(topic);
        checkLimit(limit);
        checkOffset(offset);
        String err = error == null || error.isEmpty() ? null : error;
        String pre = prefix == null || prefix.isEmpty() ? null : prefix;
        io.rmq.admin.DeadSearchPage page = rmq.admin().searchDead(topic, err, pre, offset, limit);
        return new DeadSearchView(topic, offset, limit, page.total(), err, pre, page.scanned(), page.capped(),
                page.messages().stream().map(RmqOperations::deadView).toList());
    }

    /** Requeues a selection of dead messages (at most {@value #MAX_SELECTION}); count: how many were dead. */
    public Result requeueDeadSelected(String topic, List<Selected> selection) {
        required(topic);
        return new Result("requeue-dead-selected", topic, rmq.admin().requeueDead(topic, selected(topic, selection)));
    }

    /** Deletes a selection of dead messages (at most {@value #MAX_SELECTION}); count: how many were dead. */
    public Result deleteDeadSelected(String topic, List<Selected> selection) {
        required(topic);
        return new Result("delete-dead-selected", topic, rmq.admin().deleteDead(topic, selected(topic, selection)));
    }

    /**
     * A selection as JSON gives it ({@code [{"slot":3,"handle":"..."} or {"slot":3,"id":"..."}]}), checked: every
     * problem names the entry, e.g. {@code messages[2].slot}.
     */
    public static List<Selected> selection(@Nullable Object messages) {
        if (!(messages instanceof List<?> list) || list.isEmpty()) {
            throw new RmqInvalidArgumentException("messages", messages, "must be a non-empty list of {slot, handle}"
                    + " or {slot, id}");
        }
        if (list.size() > MAX_SELECTION) {
            throw new RmqInvalidArgumentException("messages", list.size() + " entries", "must name at most "
                    + MAX_SELECTION + " messages per request");
        }
        List<Selected> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            String at = "messages[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> entry)) {
                throw new RmqInvalidArgumentException(at, list.get(i), "must be an object {slot, handle} or {slot, id}");
            }
            Object slot = entry.get("slot");
            int number;
            if (slot instanceof Integer || slot instanceof Long || slot instanceof Short) {
                number = ((Number) slot).intValue();
            }
            else {
                try {
                    number = Integer.parseInt(String.valueOf(slot));
                }
                catch (NumberFormatException ex) {
                    throw new RmqInvalidArgumentException(at + ".slot", slot, "must be a slot number");
                }
            }
            Object handle = entry.get("handle");
            Object id = entry.get("id");
            boolean hasHandle = handle != null && !handle.toString().isEmpty();
            boolean hasId = id != null && !id.toString().isEmpty();
            if (hasHandle == hasId) {
                throw new RmqInvalidArgumentException(at, entry, "must name the message by exactly one of handle"
                        + " and id");
            }
            out.add(new Selected(number, hasHandle ? handle.toString() : null, hasId ? id.toString() : null));
        }
        return out;
    }

    private List<DeadMessage> selected(String topic, List<Selected> selection) {
        if (selection.size() > MAX_SELECTION) {
            throw new RmqInvalidArgumentException("messages", selection.size() + " entries", "must name at most "
                    + MAX_SELECTION + " messages per request");
        }
        List<DeadMessage> out = new ArrayList<>(selection.size());
        for (int i = 0; i < selection.size(); i++) {
            Selected s = selection.get(i);
            if (s.id() != null) {
                out.add(new DeadMessage(topic, s.slot(), new byte[0], Instant.EPOCH, 0, null, "", s.id(), Map.of()));
                continue;
            }
            byte[] member;
            try {
                member = Base64.getDecoder().decode(s.handle() == null ? "" : s.handle());
            }
            catch (IllegalArgumentException ex) {
                throw new RmqInvalidArgumentException("messages[" + i + "].handle", s.handle(), "must be base64 (the"
                        + " handle of a listed message)");
            }
            if (member.length == 0) {
                throw new RmqInvalidArgumentException("messages[" + i + "].handle", s.handle(), "must not be empty");
            }
            String id = io.rmq.redis.internal.EnvelopeKeys.idOf(member);
            out.add(id != null
                    ? new DeadMessage(topic, s.slot(), new byte[0], Instant.EPOCH, 0, null, "", id, Map.of())
                    : new DeadMessage(topic, s.slot(), member, null, 0, null, null));
        }
        return out;
    }

    /** The member a message is stored as (0xFF + id, or its body), in base64: its handle in the views. */
    static String handle(@Nullable String id, byte[] body) {
        return Base64.getEncoder().encodeToString(id == null ? body : io.rmq.redis.internal.EnvelopeKeys.idMember(id));
    }

    /** The Redis RMQ uses: version, mode, memory, clients, RMQ's keys, cluster nodes. */
    public io.rmq.admin.RedisFigures redis() {
        return rmq.admin().redis();
    }

    private static void checkOffset(long offset) {
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
    }

    // ---------------------------------------------------------------- waiting messages

    /**
     * A page of waiting messages in taking order.
     *
     * @param cursor null for the first page, else the {@code next} of the previous page
     */
    public WaitingPage waiting(String topic, @Nullable String cursor, int limit) {
        TopicDefinition definition = required(topic);
        checkLimit(limit);
        BrowsePage page = rmq.admin().browse(topic, decodeCursor(cursor), limit);
        boolean priority = definition.type() == TopicType.PRIORITY;
        List<WaitingView> messages = new ArrayList<>(page.messages().size());
        for (WaitingMessage m : page.messages()) {
            messages.add(new WaitingView(m.slot(), m.bodyAsString(), priority ? null : Instant.ofEpochMilli((long) m.score()),
                    priority ? (long) m.score() : null, m.failedAttempts(), m.id(), shown(m.headers())));
        }
        return new WaitingPage(topic, messages, encodeCursor(page.next()));
    }

    /** The browse cursor as one opaque URL-safe string: score, slot, tie and the member. */
    static @Nullable String encodeCursor(BrowsePage.@Nullable Cursor cursor) {
        if (cursor == null) {
            return null;
        }
        String raw = Double.doubleToRawLongBits(cursor.score()) + ":" + cursor.slot() + ":" + cursor.tie() + ":"
                + Base64.getEncoder().encodeToString(cursor.member());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
    }

    static BrowsePage.@Nullable Cursor decodeCursor(@Nullable String cursor) {
        if (cursor == null || cursor.isEmpty()) {
            return null;
        }
        try {
            String[] parts = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8).split(":", 4);
            return new BrowsePage.Cursor(Double.longBitsToDouble(Long.parseLong(parts[0])), Integer.parseInt(parts[1]),
                    Base64.getDecoder().decode(parts[3]), Long.parseLong(parts[2]));
        }
        catch (RuntimeException ex) {
            throw new RmqInvalidArgumentException("cursor", cursor, "is not the next cursor of a waiting page");
        }
    }

    // ---------------------------------------------------------------- by body or by id

    /** Where the message with this body (as text, exactly as stored) is. */
    public FindView find(String topic, String body) {
        TopicDefinition definition = required(topic);
        return findView(definition, rmq.admin().find(topic, body));
    }

    /** Where the message sent with this id is. */
    public FindView findById(String topic, String id) {
        TopicDefinition definition = required(topic);
        return findView(definition, rmq.admin().findById(topic, id));
    }

    private static FindView findView(TopicDefinition definition, MessageStatus s) {
        boolean priority = definition.type() == TopicType.PRIORITY;
        Double score = s.waitingScore();
        return new FindView(definition.name(), s.slot(), s.bodyAsString(), s.isWaiting(),
                score == null || priority ? null : Instant.ofEpochMilli(score.longValue()),
                score == null || !priority ? null : score.longValue(), s.inFlight(), s.retryAt(), s.failedAttempts(),
                s.diedAt(), s.deadReason(), s.cancelled(), s.id(), shown(s.headers()));
    }

    public CancelResult cancel(String topic, String body) {
        required(topic);
        return rmq.admin().cancel(topic, body);
    }

    public CancelResult cancelById(String topic, String id) {
        required(topic);
        return rmq.admin().cancelById(topic, id);
    }

    /**
     * A new due time (time types) or priority (PRIORITY) for a waiting message.
     *
     * @param when PRIORITY: a whole number; time types: {@code now}, an ISO-8601 instant
     *             ({@code 2030-01-01T09:00:00Z}) or a delay from now ({@code 90s}, {@code 5m}, {@code PT1H})
     */
    public RescheduleResult reschedule(String topic, String body, String when) {
        return reschedule(topic, when, (t, priority) -> rmq.admin().reprioritize(t, body, priority),
                (t, dueAt) -> rmq.admin().reschedule(t, body, dueAt));
    }

    /** As {@link #reschedule(String, String, String)}, for the message sent with this id. */
    public RescheduleResult rescheduleById(String topic, String id, String when) {
        return reschedule(topic, when, (t, priority) -> rmq.admin().reprioritizeById(t, id, priority),
                (t, dueAt) -> rmq.admin().rescheduleById(t, id, dueAt));
    }

    private RescheduleResult reschedule(String topic, String when,
            java.util.function.BiFunction<String, Long, RescheduleResult> reprioritize,
            java.util.function.BiFunction<String, Instant, RescheduleResult> reschedule) {
        TopicDefinition definition = required(topic);
        if (when == null || when.isBlank()) {
            throw new RmqInvalidArgumentException("when", when, "must be set");
        }
        String value = when.trim();
        if (definition.type() == TopicType.PRIORITY) {
            long priority;
            try {
                priority = Long.parseLong(value);
            }
            catch (NumberFormatException ex) {
                throw new RmqInvalidArgumentException("when", when, "must be a whole number: " + topic
                        + " is a PRIORITY topic");
            }
            return reprioritize.apply(topic, priority);
        }
        return reschedule.apply(topic, dueAt(value));
    }

    /** Headers as the views show them: every name, values cut to {@link #HEADER_VALUE_CHARS} characters. */
    static Map<String, String> shown(Map<String, String> headers) {
        if (headers.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new java.util.LinkedHashMap<>(headers.size() * 2);
        headers.forEach((name, value) -> out.put(name, cut(value)));
        return java.util.Collections.unmodifiableMap(out);
    }

    private static String cut(String value) {
        if (value.length() <= HEADER_VALUE_CHARS) {
            return value;
        }
        int end = Character.isHighSurrogate(value.charAt(HEADER_VALUE_CHARS - 1)) ? HEADER_VALUE_CHARS - 1
                : HEADER_VALUE_CHARS; // never half a character
        return value.substring(0, end) + "…";
    }

    private static Instant dueAt(String value) {
        if (value.equalsIgnoreCase("now")) {
            return Instant.now();
        }
        try {
            return Instant.parse(value);
        }
        catch (RuntimeException notAnInstant) {
            try {
                Duration delay = org.springframework.boot.convert.DurationStyle.detectAndParse(value);
                return Instant.now().plus(delay);
            }
            catch (RuntimeException notADuration) {
                throw new RmqInvalidArgumentException("when", value, "must be now, an ISO-8601 instant"
                        + " (2030-01-01T09:00:00Z) or a delay (90s, 5m, PT1H)");
            }
        }
    }

    // ---------------------------------------------------------------- instances and cluster-wide pauses

    /**
     * A running RMQ instance as it last described itself in Redis (see docs/operations.md, "Instances and
     * cluster-wide pause").
     *
     * @param busy       handler threads busy now
     * @param lastSeenAt its latest heartbeat
     * @param inFlight   {@link #instance(String)} only: the messages its busy handlers work on (else null, left out)
     */
    public record InstanceView(String id, String application, String host, long pid, String version,
            Instant startedAt, Instant lastSeenAt, int busy, List<InstanceListenerView> listeners,
            List<OwnedSlotView> ownedSlots,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
            @Nullable List<InFlightView> inFlight) {
    }

    /**
     * A listener of an instance.
     *
     * @param state         running, paused or stopped
     * @param busy          its handler threads busy now
     * @param pausedHere    whether that instance's own pause is on
     * @param pausedCluster whether a cluster-wide pause of the listener or its topic is on
     */
    public record InstanceListenerView(String id, String topic, String mode, String state, int concurrency, int busy,
            boolean pausedHere, boolean pausedCluster) {
    }

    /** An ORDERLY slot an instance owns. */
    public record OwnedSlotView(String topic, int slot) {
    }

    /**
     * A message in flight.
     *
     * @param id            the id it was sent with, or null
     * @param body          its body as text, only with {@code rmq.dashboard.show-bodies=true}, else null
     * @param handle        base64 of the stored member (what write actions accept)
     * @param since         when its handler started (that instance's clock), or null when no instance says it
     *                      handles it (taken, not started yet; or its instance does not take part in the registry)
     * @param leaseDeadline when its lease runs out unless extended; null for ORDERLY topics (their prepare score is
     *                      the message's store score: the slot's ownership is the lease)
     * @param instance      the instance whose handler works on it, or null when none says so
     * @param attempt       which delivery this is (1 for the first)
     */
    public record InFlightView(int slot, @Nullable String id, @Nullable String body, String handle,
            @Nullable Instant since, @Nullable Instant leaseDeadline, @Nullable String instance, int attempt) {
    }

    /** A page of messages in flight: slot by slot, soonest lease deadline first within a slot. */
    public record InFlightPage(String topic, long offset, int limit, long total, List<InFlightView> messages) {
    }

    /**
     * A cluster-wide pause.
     *
     * @param kind "listener" or "topic"
     * @param by   an instance id, "dashboard" or "endpoint"
     */
    public record PauseView(String kind, String name, Instant since, String by) {
    }

    /** The live instances (every application on this Redis and key prefix), by id. */
    public List<InstanceView> instances() {
        return rmq.instances().list().stream().map(i -> instanceView(i, null)).toList();
    }

    /** One live instance with the messages its busy handlers work on; null when there is none with this id. */
    public @Nullable InstanceView instance(String id) {
        io.rmq.instances.RmqInstance instance = rmq.instances().get(id);
        if (instance == null) {
            return null;
        }
        // the instance names its messages by digest: find them in their topics' prepare sets for handle, deadline
        Map<String, InFlightView> byDigest = new java.util.HashMap<>();
        for (String topic : instance.handling().stream().map(io.rmq.instances.RmqInstance.Handling::topic)
                .distinct().toList()) {
            if (definition(topic) == null) {
                continue;
            }
            Map<String, io.rmq.instances.RmqInstance.Handling> mine = new java.util.HashMap<>();
            instance.handling().stream().filter(h -> h.topic().equals(topic)).forEach(h -> mine.put(h.digest(), h));
            for (io.rmq.admin.InFlightMessage m : rmq.admin().inFlightMessages(topic, 0, MAX_PAGE)) {
                String digest = io.rmq.instances.RmqInstances.digest(m.member());
                io.rmq.instances.RmqInstance.Handling h = mine.get(digest);
                if (h != null) {
                    byDigest.put(topic + "\n" + digest, inFlightView(m, h, instance.id()));
                }
            }
        }
        List<InFlightView> inFlight = instance.handling().stream()
                .map(h -> byDigest.get(h.topic() + "\n" + h.digest())).filter(java.util.Objects::nonNull).toList();
        return instanceView(instance, inFlight);
    }

    private static InstanceView instanceView(io.rmq.instances.RmqInstance i, @Nullable List<InFlightView> inFlight) {
        return new InstanceView(i.id(), i.application(), i.host(), i.pid(), i.version(), i.startedAt(),
                i.lastSeenAt(), i.busy(), i.listeners().stream().map(l -> new InstanceListenerView(l.id(), l.topic(),
                        l.mode(), l.state(), l.concurrency(), l.busy(), l.pausedHere(), l.pausedCluster())).toList(),
                i.ownedSlots().stream().map(o -> new OwnedSlotView(o.topic(), o.slot())).toList(), inFlight);
    }

    /**
     * A page of a topic's messages in flight, each with the instance whose handler works on it and since when
     * (when an instance says so); null when the topic is not defined.
     */
    public @Nullable InFlightPage inFlight(String topic, long offset, int limit) {
        if (definition(topic) == null) {
            return null;
        }
        checkLimit(limit);
        if (offset < 0) {
            throw new RmqInvalidArgumentException("offset", offset, "must be zero or positive");
        }
        long total = rmq.admin().inFlightCount(topic);
        List<io.rmq.admin.InFlightMessage> page = rmq.admin().inFlightMessages(topic, offset, limit);
        Map<String, String> instanceByKey = new java.util.HashMap<>();
        Map<String, io.rmq.instances.RmqInstance.Handling> handlingByKey = new java.util.HashMap<>();
        if (!page.isEmpty()) {
            for (io.rmq.instances.RmqInstance i : rmq.instances().list()) {
                for (io.rmq.instances.RmqInstance.Handling h : i.handling()) {
                    if (h.topic().equals(topic)) {
                        String key = h.slot() + "\n" + h.digest();
                        instanceByKey.put(key, i.id());
                        handlingByKey.put(key, h);
                    }
                }
            }
        }
        List<InFlightView> messages = new ArrayList<>(page.size());
        for (io.rmq.admin.InFlightMessage m : page) {
            String key = m.slot() + "\n" + io.rmq.instances.RmqInstances.digest(m.member());
            messages.add(inFlightView(m, handlingByKey.get(key), instanceByKey.get(key)));
        }
        return new InFlightPage(topic, offset, limit, total, messages);
    }

    private InFlightView inFlightView(io.rmq.admin.InFlightMessage m,
            io.rmq.instances.RmqInstance.@Nullable Handling handling, @Nullable String instance) {
        return new InFlightView(m.slot(), m.id(), showBodies ? new String(m.body(), StandardCharsets.UTF_8) : null,
                Base64.getEncoder().encodeToString(m.member()), handling == null ? null : handling.since(),
                m.leaseDeadlineMillis() == null ? null : Instant.ofEpochMilli(m.leaseDeadlineMillis()), instance,
                m.attempt());
    }

    /** The cluster-wide pauses of listeners and topics. */
    public List<PauseView> pauses() {
        return rmq.instances().pauses().stream().map(p -> new PauseView(p.kind(), p.name(), p.since(), p.by()))
                .toList();
    }

    /**
     * Pauses a topic on every instance (each within one heartbeat; this one at once), whatever its listeners' own
     * pauses; null when the topic is not defined.
     *
     * @param by who pauses: "dashboard" or "endpoint"
     */
    public @Nullable Result pauseTopicCluster(String topic, String by) {
        if (definition(topic) == null) {
            return null;
        }
        return new Result("pause-cluster", topic, rmq.instances().pauseTopic(topic, by) ? 1 : 0);
    }

    /** Lifts a topic's cluster-wide pause; null when the topic is not defined. */
    public @Nullable Result resumeTopicCluster(String topic) {
        if (definition(topic) == null) {
            return null;
        }
        return new Result("resume-cluster", topic, rmq.instances().resumeTopic(topic) ? 1 : 0);
    }

    /**
     * Pauses a listener id on every instance; null when no listener has this id here nor on a live instance. A
     * pause already there counts 0.
     */
    public @Nullable Result pauseListenerCluster(String id, String by) {
        if (!knownListener(id)) {
            return null;
        }
        return new Result("pause-cluster", id, rmq.instances().pauseListener(id, by) ? 1 : 0);
    }

    /** Lifts a listener's cluster-wide pause; null when it is unknown and not paused. */
    public @Nullable Result resumeListenerCluster(String id) {
        boolean known = knownListener(id);
        boolean lifted = rmq.instances().resumeListener(id);
        return !known && !lifted ? null : new Result("resume-cluster", id, lifted ? 1 : 0);
    }

    private boolean knownListener(String id) {
        return registry.getListenerContainer(id) != null || rmq.instances().list().stream()
                .anyMatch(i -> i.listeners().stream().anyMatch(l -> l.id().equals(id)));
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > MAX_PAGE) {
            throw new RmqInvalidArgumentException("limit", limit, "must be between 1 and " + MAX_PAGE);
        }
    }
}
