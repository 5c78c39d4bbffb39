package io.rmq.spring.operations;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.spring.schedule.RmqSchedules;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.jspecify.annotations.Nullable;

/**
 * The {@code rmq} Actuator endpoint ({@code /actuator/rmq} over HTTP):
 * <ul>
 * <li>{@code GET /actuator/rmq}: topics (type, slots, mode, waiting, in flight, retrying, dead, oldest due) and
 * listeners (id, topic, mode, state, concurrency, owned slots, watchdog repairs);</li>
 * <li>{@code GET /actuator/rmq/topics/{name}}: one topic with its sizes per slot;
 * {@code GET /actuator/rmq/listeners/{id}}: one listener;</li>
 * <li>{@code POST /actuator/rmq/listeners/{id}} with {@code {"action":"pause"}} or {@code "resume"};
 * {@code POST /actuator/rmq/topics/{name}} with {@code {"action":"requeue-dead"}} or {@code "purge-dead"}.</li>
 * <li>{@code GET /actuator/rmq/instances}: the live instances; {@code GET /actuator/rmq/instances/{id}}: one, with
 * the messages its busy handlers work on; {@code GET /actuator/rmq/pauses}: the cluster-wide pauses;
 * {@code GET /actuator/rmq/topics/{name}/in-flight?offset=&limit=}: messages in flight;
 * {@code POST /actuator/rmq/topics/{name}} with {@code {"action":"pause"}} or {@code "resume"}: cluster-wide, and
 * {@code POST /actuator/rmq/listeners/{id}} with {@code "pause-cluster"} or {@code "resume-cluster"} (while
 * {@code "pause"}/{@code "resume"} stay this instance's own).</li>
 * <li>{@code GET /actuator/rmq/topics/{name}/history?resolution=minute|hour}: the topic's sent, handled, failed and
 * dead counts per minute over the last hour (the default) or per hour over the last day;</li>
 * <li>{@code GET /actuator/rmq/schedules}: the schedules (next and last firing, outcome of the latest run, paused);
 * {@code GET /actuator/rmq/schedules/{name}}: one; {@code POST /actuator/rmq/schedules/{name}} with
 * {@code {"action":"pause"}} or {@code "resume"}: cluster-wide.</li>
 * <li>{@code GET /actuator/rmq/topics/{name}/retries} and {@code .../dead} (see {@link #part}); {@code POST
 * /actuator/rmq/topics/{name}} with {@code {"action":"requeue-dead-selected"}} or {@code "delete-dead-selected"} and
 * {@code "messages"}: the selection as a JSON array in a string, {@code "[{\"slot\":3,\"handle\":\"...\"}]"}
 * (at most 200; Actuator reads a write request's fields as text); {@code GET /actuator/rmq/redis}:
 * the Redis figures.</li>
 * </ul>
 * Over HTTP, {@link RmqEndpointWebExtension} answers every failure with its status and a JSON body that names it
 * (404: what is not there; 400: field, value and rule), whatever {@code server.error.include-message} says. Called
 * directly (or over JMX) a read of a name that is not there answers null, and a bad argument or a write to a name that
 * is not there throws {@link io.rmq.core.RmqInvalidArgumentException} ({@link RmqNotFoundException} for the latter).
 * <p>
 * Read-only by default, as Boot restricts its own sensitive endpoints ({@code shutdown}, {@code heapdump}) by
 * default: the writes pause listeners and requeue or delete dead messages, so they exist only with
 * {@code management.endpoint.rmq.access=unrestricted}. Until then Boot does not map them at all (over HTTP a POST
 * answers 405).
 */
@Endpoint(id = "rmq", defaultAccess = Access.READ_ONLY)
public class RmqEndpoint {

    private final RmqOperations operations;
    private final @Nullable RmqSchedules schedules;

    public RmqEndpoint(RmqOperations operations) {
        this(operations, null);
    }

    /** @param schedules the application's schedules, or null when it has none */
    public RmqEndpoint(RmqOperations operations, @Nullable RmqSchedules schedules) {
        this.operations = operations;
        this.schedules = schedules;
    }

    /** @param kind {@code schedules}: every schedule; {@code instances}: the live instances; {@code pauses}: the
     *  cluster-wide pauses; {@code redis}: the Redis figures */
    @ReadOperation
    public @Nullable Object all(@Selector String kind) {
        return switch (kind) {
            case "schedules" -> schedules == null ? java.util.List.of() : schedules.list();
            case "instances" -> operations.instances();
            case "pauses" -> operations.pauses();
            case "redis" -> operations.redis();
            default -> null;
        };
    }

    @ReadOperation
    public RmqOperations.Overview overview() {
        return operations.overview();
    }

    /** @param kind {@code topics}, {@code listeners} or {@code schedules} */
    @ReadOperation
    public @Nullable Object one(@Selector String kind, @Selector String name) {
        return switch (kind) {
            case "topics" -> operations.topic(name);
            case "listeners" -> operations.listener(name);
            case "schedules" -> schedules == null ? null : schedules.get(name);
            case "instances" -> instance(name);
            default -> null;
        };
    }

    private @Nullable Object instance(String id) {
        return operations.instance(id);
    }

    /**
     * A topic's sub-resource: {@code GET /actuator/rmq/topics/{name}/retries?offset=&limit=} (messages waiting for a
     * retry), {@code GET /actuator/rmq/topics/{name}/in-flight?offset=&limit=} (messages in flight),
     * {@code GET /actuator/rmq/topics/{name}/dead?offset=&limit=&error=&prefix=} (dead messages, searched when
     * {@code error} or {@code prefix} is given) and {@code GET /actuator/rmq/topics/{name}/history?resolution=} (counts
     * per {@code minute}, the default, or {@code hour}). Null for an unknown topic or part; a bad page is refused.
     */
    @ReadOperation
    public @Nullable Object part(@Selector String kind, @Selector String name, @Selector String part,
            @Nullable Long offset, @Nullable Integer limit, @Nullable String error, @Nullable String prefix,
            @Nullable String resolution) {
        if (!kind.equals("topics") || !operations.isTopic(name)) {
            return null;
        }
        long from = offset == null ? 0 : offset;
        int size = limit == null ? PageParameters.DEFAULT_LIMIT : limit;
        return switch (part) {
            case "retries" -> operations.retries(name, from, size);
            case "in-flight" -> operations.inFlight(name, from, size);
            case "dead" -> operations.dead(name, from, size, error, prefix);
            case "history" -> operations.history(name, resolution);
            default -> null;
        };
    }

    /**
     * @param kind   {@code topics}, {@code listeners} or {@code schedules}
     * @param action listeners and schedules: {@code pause} or {@code resume}; topics: {@code requeue-dead} or
     *               {@code purge-dead}
     */
    public Object act(String kind, String name, String action) {
        return act(kind, name, action, null);
    }

    /**
     * As {@link #act(String, String, String)}; {@code messages}: the selection of the {@code -selected} actions, a
     * JSON array as text ({@code "[{\"slot\":3,\"handle\":\"...\"}]"}: Actuator reads a write request's fields as
     * text).
     */
    @WriteOperation
    public Object act(@Selector String kind, @Selector String name, String action,
            @Nullable String messages) {
        return switch (kind + " " + action) {
            case "listeners pause" -> found(operations.pause(name), () -> RmqNotFoundException.listener(name));
            case "listeners resume" -> found(operations.resume(name), () -> RmqNotFoundException.listener(name));
            case "listeners pause-cluster" -> found(operations.pauseListenerCluster(name, "endpoint"),
                    () -> clusterListener(name));
            case "listeners resume-cluster" -> found(operations.resumeListenerCluster(name),
                    () -> clusterListener(name));
            case "topics pause" -> found(operations.pauseTopicCluster(name, "endpoint"),
                    () -> RmqNotFoundException.topic(name));
            case "topics resume" -> found(operations.resumeTopicCluster(name),
                    () -> RmqNotFoundException.topic(name));
            case "topics requeue-dead" -> operations.requeueAllDead(name);
            case "topics purge-dead" -> operations.purgeDead(name);
            case "topics requeue-dead-selected" -> operations.requeueDeadSelected(name, selection(messages));
            case "topics delete-dead-selected" -> operations.deleteDeadSelected(name, selection(messages));
            case "schedules pause" -> found(schedules == null ? null : schedules.pause(name),
                    () -> RmqNotFoundException.schedule(name));
            case "schedules resume" -> found(schedules == null ? null : schedules.resume(name),
                    () -> RmqNotFoundException.schedule(name));
            default -> throw new RmqInvalidArgumentException("action", action, ACTIONS.getOrDefault(kind,
                    "is not an action: the kinds are listeners, topics and schedules"));
        };
    }

    /** The rule an unknown action breaks, by kind. */
    static final java.util.Map<String, String> ACTIONS = java.util.Map.of(
            "listeners", "must be pause, resume, pause-cluster or resume-cluster (listeners)",
            "topics", "must be pause, resume, requeue-dead, purge-dead, requeue-dead-selected or delete-dead-selected"
                    + " (topics)",
            "schedules", "must be pause or resume (schedules)");

    private static RmqNotFoundException clusterListener(String id) {
        return new RmqNotFoundException("listener", id, "must be the id of a listener here or on a live instance");
    }

    private static final tools.jackson.databind.json.JsonMapper JSON = tools.jackson.databind.json.JsonMapper.builder()
            .build();

    private static java.util.List<RmqOperations.Selected> selection(@Nullable String messages) {
        Object parsed;
        try {
            parsed = messages == null ? null : JSON.readValue(messages, Object.class);
        }
        catch (RuntimeException ex) {
            throw new RmqInvalidArgumentException("messages", messages, "must be a JSON array of {slot, handle} or"
                    + " {slot, id}, as text");
        }
        return RmqOperations.selection(parsed);
    }

    private static Object found(@Nullable Object result,
            java.util.function.Supplier<RmqNotFoundException> otherwise) {
        if (result == null) {
            throw otherwise.get();
        }
        return result;
    }
}
