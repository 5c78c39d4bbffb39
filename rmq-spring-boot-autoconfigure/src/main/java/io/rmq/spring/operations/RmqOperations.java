package io.rmq.spring.operations;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.rmq.Rmq;
import io.rmq.admin.CancelResult;
import io.rmq.admin.RescheduleResult;
import io.rmq.admin.TopicHistory;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import org.jspecify.annotations.Nullable;

/**
 * What an operator sees and does, in one place for the {@code /actuator/rmq} endpoint and the dashboard (so the two
 * never disagree): topics with their queue sizes, listeners with their state, dead and waiting messages page by page,
 * and the changes an operator makes (requeue, delete, purge, cancel, reschedule, pause, resume). Results are plain
 * records that serialize to JSON as they are; bodies are shown as UTF-8 text (what RMQ's JSON codec writes), and
 * where a change must name the exact stored body (a dead message without an id) it also travels as base64. A message
 * sent with an id shows its id, and is named by it; every message shows its headers (values cut to
 * {@value #HEADER_VALUE_CHARS} characters).
 * <p>
 * This class is the front: it holds the records the views return and the {@code show-bodies} switch, and hands
 * each call to the package's class that does that job ({@code TopicOperations}, {@code DeadLetterOperations},
 * {@code RetryOperations}, {@code WaitingOperations}, {@code FleetOperations}); those share {@code TopicLookup} for
 * topic names and {@code Views} for how messages are shown. The switch is written by configuration and read by any
 * request thread, hence volatile; nothing else here changes after construction.
 */
public class RmqOperations {

    /** Most messages one page of dead or waiting messages may ask for. */
    public static final int MAX_PAGE = 200;

    /** How much of a header value the views show (a value may be up to {@code rmq.max-header-value-size} long). */
    public static final int HEADER_VALUE_CHARS = 200;

    /** Most messages one bulk requeue or delete of dead messages may name. */
    public static final int MAX_SELECTION = 200;

    private final Rmq rmq;
    /** rmq.dashboard.show-bodies: whether the retries and in-flight views show body text. */
    private volatile boolean showBodies;
    private final TopicLookup topicLookup;
    private final TopicOperations topics;
    private final DeadLetterOperations deadLetters;
    private final RetryOperations retries;
    private final WaitingOperations waiting;
    private final FleetOperations fleet;

    public RmqOperations(Rmq rmq, RmqListenerEndpointRegistry registry) {
        this.rmq = rmq;
        this.topicLookup = new TopicLookup(rmq);
        this.topics = new TopicOperations(rmq, registry, topicLookup);
        this.deadLetters = new DeadLetterOperations(rmq, topicLookup);
        this.retries = new RetryOperations(rmq, topicLookup, () -> showBodies);
        this.waiting = new WaitingOperations(rmq, topicLookup);
        this.fleet = new FleetOperations(rmq, registry, topicLookup, () -> showBodies);
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
     * @param handle   the member as stored (base64: the body, or 0xFF + the id): names it in write requests
     */
    public record WaitingView(int slot, String body, @Nullable Instant dueAt, @Nullable Long priority,
            int failedAttempts, @Nullable String id, Map<String, String> headers, String handle) {
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

    /**
     * What a requeue or delete of the dead messages matching a search did: {@code count} acted on (a match removed
     * meanwhile by someone else is not counted), {@code matched} found when the request searched, {@code scanned}
     * examined; {@code more}: matches were left for another request (one acts on at most 1,000 among at most 10,000
     * examined).
     */
    public record MatchingResult(String action, String target, @Nullable String error, @Nullable String prefix,
            long count, long matched, long scanned, boolean more) {
    }

    /**
     * A topic's dead messages counted by error class (the last error up to its first {@code :} or {@code ;}), most
     * first; {@code capped}: the count stopped after {@code scanned} (10,000) dead messages, the counts are lower bounds.
     */
    public record DeadGroupsView(String topic, List<io.rmq.admin.DeadErrorGroups.Group> groups, long scanned,
            boolean capped) {
    }

    /** A message named by a selection: its slot and its handle (base64 member) or id. */
    public record Selected(int slot, @Nullable String handle, @Nullable String id) {
    }

    /**
     * A running RMQ instance as it last described itself in Redis (see docs/operations.md, "Instances and
     * cluster-wide pause").
     *
     * Everything it reports (busy threads, listeners' states, owned slots, what it holds) is as of its latest report,
     * {@code reportAgeMillis} old when this was read.
     *
     * @param busy            handler threads busy when it reported
     * @param lastSeenAt      its latest heartbeat: when it made the report (Redis's clock)
     * @param inFlight        {@link #instance(String)} only: the messages it reported holding (in a handler, or
     *                        fetched and waiting for one) that are still in flight (else null, left out)
     * @param reportAgeMillis how old the report was when read ({@code readAt - lastSeenAt}, both Redis's clock)
     * @param prefetched      messages it had fetched and not yet started when it reported
     */
    public record InstanceView(String id, String application, String host, long pid, String version,
            Instant startedAt, Instant lastSeenAt, int busy, List<InstanceListenerView> listeners,
            List<OwnedSlotView> ownedSlots,
            @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
            @Nullable List<InFlightView> inFlight, long reportAgeMillis, int prefetched) {
    }

    /**
     * A listener of an instance.
     *
     * @param state         running, paused or stopped
     * @param busy          its handler threads busy when the instance reported
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
     * @param since           when its handler started (that instance's clock), or null when no handler has it
     *                        (prefetched, waiting for a handler; or no instance reported it)
     * @param leaseDeadline   when its lease runs out unless extended; null for ORDERLY topics (their prepare score
     *                        is the message's store score: the slot's ownership is the lease)
     * @param instance        the instance that holds it, as the instances' own reports say, or null when no report
     *                        names it (fetched after the holder's latest report, or its holder stopped reporting)
     * @param attempt         which delivery this is (1 for the first)
     * @param heldAs          how {@code instance} holds it: {@code handler} (a handler works on it),
     *                        {@code prefetched} (fetched, waiting in its buffer for a handler), {@code owner} (an
     *                        ORDERLY slot's owner, whose lane has it); null with {@code instance}
     * @param reportAgeMillis how old that instance's report was when read; null with {@code instance}
     */
    public record InFlightView(int slot, @Nullable String id, @Nullable String body, String handle,
            @Nullable Instant since, @Nullable Instant leaseDeadline, @Nullable String instance, int attempt,
            @Nullable String heldAs, @Nullable Long reportAgeMillis) {
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

    // ---------------------------------------------------------------- topics and listeners

    public Overview overview() {
        return topics.overview(topicDefinitions(), listeners());
    }

    /** Every topic defined here or registered in Redis (under this key prefix), by name. */
    public Map<String, TopicDefinition> topicDefinitions() {
        return topicLookup.topicDefinitions();
    }

    /** One topic with its sizes per slot; null when no such topic is defined here or registered in Redis. */
    public @Nullable TopicView topic(String name) {
        return topics.topic(name);
    }

    /** Whether a topic of this name is defined here or registered in Redis. */
    public boolean isTopic(String name) {
        return topicLookup.definition(name) != null;
    }

    /**
     * The topic of this name: refused naming the rule when the name is no topic name, and with
     * {@link RmqNotFoundException} when no such topic is defined here or registered in Redis.
     */
    public TopicDefinition requireTopic(String name) {
        return topicLookup.required(name);
    }

    public List<ListenerView> listeners() {
        return topics.listeners();
    }

    /** One listener; null when there is none with this id. */
    public @Nullable ListenerView listener(String id) {
        return topics.listener(id);
    }

    /** Stops the listener taking messages (what it has in hand is finished); null when there is none. */
    public @Nullable ListenerView pause(String id) {
        return topics.pause(id) ? listener(id) : null;
    }

    /** Lets a paused listener take messages again; null when there is none. */
    public @Nullable ListenerView resume(String id) {
        return topics.resume(id) ? listener(id) : null;
    }

    // ---------------------------------------------------------------- history

    /**
     * The topic's history at {@code resolution} ({@code minute}, the default, or {@code hour}; anything else is refused
     * naming it); null when no such topic is defined here or registered in Redis.
     */
    public @Nullable HistoryView history(String topic, @Nullable String resolution) {
        return topics.history(topic, resolution);
    }

    /** The Redis RMQ uses: version, mode, memory, clients, RMQ's keys, cluster nodes. */
    public io.rmq.admin.RedisFigures redis() {
        return rmq.admin().redis();
    }

    // ---------------------------------------------------------------- dead messages

    public DeadPage dead(String topic, long offset, int limit) {
        return deadLetters.dead(topic, offset, limit);
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
        return deadLetters.requeueDead(topic, slot, id, bodyBase64);
    }

    public Result deleteDead(String topic, int slot, String bodyBase64) {
        return deleteDead(topic, slot, null, bodyBase64);
    }

    /** Deletes one dead message, named as in {@link #requeueDead(String, int, String, String)}. */
    public Result deleteDead(String topic, int slot, @Nullable String id, @Nullable String bodyBase64) {
        return deadLetters.deleteDead(topic, slot, id, bodyBase64);
    }

    public Result requeueAllDead(String topic) {
        return deadLetters.requeueAllDead(topic);
    }

    public Result purgeDead(String topic) {
        return deadLetters.purgeDead(topic);
    }

    /**
     * Dead messages that match {@code error} (case-insensitive substring of the last error) and {@code prefix} (of the
     * id, or of the body for messages without one); blank filters match all.
     */
    public DeadSearchView dead(String topic, long offset, int limit, @Nullable String error, @Nullable String prefix) {
        return deadLetters.dead(topic, offset, limit, error, prefix);
    }

    /** Requeues a selection of dead messages (at most {@value #MAX_SELECTION}); count: how many were dead. */
    public Result requeueDeadSelected(String topic, List<Selected> selection) {
        return deadLetters.requeueDeadSelected(topic, selection);
    }

    /** Deletes a selection of dead messages (at most {@value #MAX_SELECTION}); count: how many were dead. */
    public Result deleteDeadSelected(String topic, List<Selected> selection) {
        return deadLetters.deleteDeadSelected(topic, selection);
    }

    /**
     * A selection as JSON gives it ({@code [{"slot":3,"handle":"..."} or {"slot":3,"id":"..."}]}), checked: every
     * problem names the entry, e.g. {@code messages[2].slot}.
     */
    public static List<Selected> selection(@Nullable Object messages) {
        return DeadLetterOperations.selection(messages);
    }

    /**
     * Requeues the dead messages that match a search (as {@link #dead(String, long, int, String, String)} finds them),
     * at most 1,000 per request; the answer counts those requeued and says whether more are left.
     */
    public MatchingResult requeueDeadMatching(String topic, @Nullable String error, @Nullable String prefix) {
        return deadLetters.matching("requeue-dead-matching", topic, error, prefix);
    }

    /** Deletes the dead messages that match a search, as {@link #requeueDeadMatching} requeues them. */
    public MatchingResult deleteDeadMatching(String topic, @Nullable String error, @Nullable String prefix) {
        return deadLetters.matching("delete-dead-matching", topic, error, prefix);
    }

    /** The topic's dead messages counted by error class, most first. */
    public DeadGroupsView deadGroups(String topic) {
        return deadLetters.groups(topic);
    }

    // ---------------------------------------------------------------- retries

    /** A page of the topic's messages waiting for a retry (bodies only with show-bodies). */
    public RetriesPage retries(String topic, long offset, int limit) {
        return retries.retries(topic, offset, limit);
    }

    // ---------------------------------------------------------------- waiting messages, by body or by id

    /**
     * A page of waiting messages in taking order.
     *
     * @param cursor null for the first page, else the {@code next} of the previous page
     */
    public WaitingPage waiting(String topic, @Nullable String cursor, int limit) {
        return waiting.waiting(topic, cursor, limit);
    }

    /** Where the message with this body (as text, exactly as stored) is. */
    public FindView find(String topic, String body) {
        return waiting.find(waiting.byBody(topic, body));
    }

    /** Where the message sent with this id is. */
    public FindView findById(String topic, String id) {
        return waiting.find(waiting.byId(topic, id));
    }

    public CancelResult cancel(String topic, String body) {
        return waiting.cancel(waiting.byBody(topic, body));
    }

    public CancelResult cancelById(String topic, String id) {
        return waiting.cancel(waiting.byId(topic, id));
    }

    /**
     * A new due time (time types) or priority (PRIORITY) for a waiting message.
     *
     * @param when PRIORITY: a whole number; time types: {@code now}, an ISO-8601 instant
     *             ({@code 2030-01-01T09:00:00Z}) or a delay from now ({@code 90s}, {@code 5m}, {@code PT1H})
     */
    public RescheduleResult reschedule(String topic, String body, String when) {
        return waiting.reschedule(waiting.byBody(topic, body), when);
    }

    /** As {@link #reschedule(String, String, String)}, for the message sent with this id. */
    public RescheduleResult rescheduleById(String topic, String id, String when) {
        return waiting.reschedule(waiting.byId(topic, id), when);
    }

    /**
     * "Run now" for a selection of waiting or retrying messages (at most {@value #MAX_SELECTION}, named as dead ones
     * are: slot and handle or id): a retry's backoff ends (its attempt count stays), a waiting message of a time-typed
     * topic becomes due now. A PRIORITY message waiting in the store is due already and is left alone (its turn is its
     * priority: {@link #reschedule} gives it another). Count: how many are due now.
     */
    public Result runNow(String topic, List<Selected> selection) {
        return waiting.runNow(topic, selection);
    }

    /**
     * Deletes a selection of waiting or retrying messages (named as in {@link #runNow}), as {@link #cancel} deletes
     * one; count: how many were removed (a delivery in flight is marked and not handed out again, and not counted).
     */
    public Result deleteWaiting(String topic, List<Selected> selection) {
        return waiting.delete(topic, selection);
    }

    // ---------------------------------------------------------------- instances, in flight, cluster-wide pauses

    /** The live instances (every application on this Redis and key prefix), by id. */
    public List<InstanceView> instances() {
        return fleet.instances();
    }

    /** One live instance with the messages its busy handlers work on; null when there is none with this id. */
    public @Nullable InstanceView instance(String id) {
        return fleet.instance(id);
    }

    /**
     * A page of a topic's messages in flight, each with the instance whose handler works on it and since when
     * (when an instance says so); null when the topic is not defined.
     */
    public @Nullable InFlightPage inFlight(String topic, long offset, int limit) {
        return fleet.inFlight(topic, offset, limit);
    }

    /** The cluster-wide pauses of listeners and topics. */
    public List<PauseView> pauses() {
        return fleet.pauses();
    }

    /**
     * Pauses a topic on every instance (each within one heartbeat; this one at once), whatever its listeners' own
     * pauses; null when the topic is not defined.
     *
     * @param by who pauses: "dashboard" or "endpoint"
     */
    public @Nullable Result pauseTopicCluster(String topic, String by) {
        return fleet.pauseTopicCluster(topic, by);
    }

    /** Lifts a topic's cluster-wide pause; null when the topic is not defined. */
    public @Nullable Result resumeTopicCluster(String topic) {
        return fleet.resumeTopicCluster(topic);
    }

    /**
     * Pauses a listener id on every instance; null when no listener has this id here nor on a live instance. A
     * pause already there counts 0.
     */
    public @Nullable Result pauseListenerCluster(String id, String by) {
        return fleet.pauseListenerCluster(id, by);
    }

    /** Lifts a listener's cluster-wide pause; null when it is unknown and not paused. */
    public @Nullable Result resumeListenerCluster(String id) {
        return fleet.resumeListenerCluster(id);
    }
}
