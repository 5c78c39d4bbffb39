package io.rmq.spring.operations;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.spring.schedule.RmqSchedules;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
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
 * <li>{@code GET /actuator/rmq/topics/{name}/history?resolution=minute|hour}: the topic's sent, handled, failed and
 * dead counts per minute over the last hour (the default) or per hour over the last day;</li>
 * <li>{@code GET /actuator/rmq/schedules}: the schedules (next and last firing, outcome of the latest run, paused);
 * {@code GET /actuator/rmq/schedules/{name}}: one; {@code POST /actuator/rmq/schedules/{name}} with
 * {@code {"action":"pause"}} or {@code "resume"}: cluster-wide.</li>
 * </ul>
 * A read of a name that is not there answers 404; a write to it, or an unknown action, 400 with the reason.
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

    /** @param kind {@code schedules}: every schedule */
    @ReadOperation
    public @Nullable Object all(@Selector String kind) {
        if (kind.equals("schedules")) {
            return schedules == null ? java.util.List.of() : schedules.list();
        }
        return null;
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
            default -> null;
        };
    }

    /**
     * A part of one topic (or other named thing); a name or part that is not there answers 404, a bad parameter 400.
     *
     * @param kind       {@code topics}
     * @param part       {@code history}
     * @param resolution history: {@code minute} (default) or {@code hour}
     */
    @ReadOperation
    public @Nullable Object part(@Selector String kind, @Selector String name, @Selector String part,
            @Nullable String resolution) {
        try {
            return switch (kind + " " + part) {
                case "topics history" -> operations.history(name, resolution);
                default -> null;
            };
        }
        catch (RmqInvalidArgumentException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
        }
    }

    /**
     * @param kind   {@code topics}, {@code listeners} or {@code schedules}
     * @param action listeners and schedules: {@code pause} or {@code resume}; topics: {@code requeue-dead} or
     *               {@code purge-dead}
     */
    @WriteOperation
    public Object act(@Selector String kind, @Selector String name, String action) {
        try {
            return switch (kind + " " + action) {
                case "listeners pause" -> found(operations.pause(name), kind, name);
                case "listeners resume" -> found(operations.resume(name), kind, name);
                case "topics requeue-dead" -> operations.requeueAllDead(name);
                case "topics purge-dead" -> operations.purgeDead(name);
                case "schedules pause" -> found(schedules == null ? null : schedules.pause(name), kind, name);
                case "schedules resume" -> found(schedules == null ? null : schedules.resume(name), kind, name);
                default -> throw new InvalidEndpointRequestException("Unknown action '" + action + "' for " + kind
                        + " (listeners: pause, resume; topics: requeue-dead, purge-dead; schedules: pause, resume)",
                        "Unknown action");
            };
        }
        catch (RmqInvalidArgumentException | UnsupportedOperationException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage());
        }
    }

    private static Object found(@Nullable Object result, String kind, String name) {
        if (result == null) {
            throw new InvalidEndpointRequestException("No " + kind.substring(0, kind.length() - 1) + " '" + name
                    + "'", "Not found");
        }
        return result;
    }
}
