package io.rmq.spring.operations;

import io.rmq.core.RmqInvalidArgumentException;
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

    public RmqEndpoint(RmqOperations operations) {
        this.operations = operations;
    }

    @ReadOperation
    public RmqOperations.Overview overview() {
        return operations.overview();
    }

    /** @param kind {@code topics} or {@code listeners} */
    @ReadOperation
    public @Nullable Object one(@Selector String kind, @Selector String name) {
        return switch (kind) {
            case "topics" -> operations.topic(name);
            case "listeners" -> operations.listener(name);
            default -> null;
        };
    }

    /**
     * @param kind   {@code topics} or {@code listeners}
     * @param action listeners: {@code pause} or {@code resume}; topics: {@code requeue-dead} or {@code purge-dead}
     */
    @WriteOperation
    public Object act(@Selector String kind, @Selector String name, String action) {
        try {
            return switch (kind + " " + action) {
                case "listeners pause" -> found(operations.pause(name), kind, name);
                case "listeners resume" -> found(operations.resume(name), kind, name);
                case "topics requeue-dead" -> operations.requeueAllDead(name);
                case "topics purge-dead" -> operations.purgeDead(name);
                default -> throw new InvalidEndpointRequestException("Unknown action '" + action + "' for " + kind
                        + " (listeners: pause, resume; topics: requeue-dead, purge-dead)", "Unknown action");
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
