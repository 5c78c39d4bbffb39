package io.rmq.spring.operations;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code rmq} endpoint over HTTP: the same operations as {@link RmqEndpoint}, which it calls, with every failure
 * answered by {@link ErrorReply} (404 naming what is not there, 400 naming field, value and rule, 409, 500) in a JSON
 * body of its own. Boot would otherwise answer a missing name with an empty 404 and a bad argument with its error
 * page, whose message it hides by default ({@code server.error.include-message=never}). It checks a topic's name
 * before anything else (an invalid name is 400, an unknown topic 404, on every route), and reads {@code offset} and
 * {@code limit} as text so that a value out of range is refused naming it rather than by Boot's conversion. Holds no
 * state; any request thread calls it.
 */
@EndpointWebExtension(endpoint = RmqEndpoint.class)
public class RmqEndpointWebExtension {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RmqEndpointWebExtension.class);

    private static final String KINDS = "must be topics, listeners, schedules or instances followed by a name, or"
            + " schedules, instances, pauses or redis alone";

    private final RmqEndpoint endpoint;
    private final RmqOperations operations;

    public RmqEndpointWebExtension(RmqEndpoint endpoint, RmqOperations operations) {
        this.endpoint = endpoint;
        this.operations = operations;
    }

    /** See {@link RmqEndpoint#overview()}. */
    @ReadOperation
    public WebEndpointResponse<Object> overview() {
        return answer(endpoint::overview);
    }

    /** See {@link RmqEndpoint#all(String)}; 404 naming the route for another kind. */
    @ReadOperation
    public WebEndpointResponse<Object> all(@Selector String kind) {
        return answer(() -> found(endpoint.all(kind), () -> new RmqNotFoundException("route", kind, KINDS)));
    }

    /** See {@link RmqEndpoint#one(String, String)}; 404 naming the topic, listener, schedule or instance. */
    @ReadOperation
    public WebEndpointResponse<Object> one(@Selector String kind, @Selector String name) {
        return answer(() -> {
            if (kind.equals("topics")) {
                operations.requireTopic(name);
            }
            return found(endpoint.one(kind, name), () -> switch (kind) {
                case "topics" -> RmqNotFoundException.topic(name);
                case "listeners" -> RmqNotFoundException.listener(name);
                case "schedules" -> RmqNotFoundException.schedule(name);
                case "instances" -> RmqNotFoundException.instance(name);
                default -> new RmqNotFoundException("route", kind + "/" + name, KINDS);
            });
        });
    }

    /** See {@link RmqEndpoint#part}; 404 naming the topic or the part, 400 naming a bad page or resolution. */
    @ReadOperation
    public WebEndpointResponse<Object> part(@Selector String kind, @Selector String name, @Selector String part,
            @Nullable String offset, @Nullable String limit, @Nullable String error, @Nullable String prefix,
            @Nullable String resolution) {
        return answer(() -> {
            String route = kind + "/" + name + "/" + part;
            if (!kind.equals("topics")) {
                throw new RmqNotFoundException("route", route, "must be topics/{name}/retries, in-flight, dead or"
                        + " history");
            }
            operations.requireTopic(name);
            boolean paged = part.equals("retries") || part.equals("in-flight") || part.equals("dead");
            Long from = paged ? PageParameters.offset(offset) : null;
            Integer size = paged ? PageParameters.limit(limit) : null;
            return found(endpoint.part(kind, name, part, from, size, error, prefix, resolution),
                    () -> new RmqNotFoundException("route", route, "the part must be retries, in-flight, dead or"
                            + " history"));
        });
    }

    /** See {@link RmqEndpoint#act(String, String, String, String)}; 400 for a missing or unknown action. */
    @WriteOperation
    public WebEndpointResponse<Object> act(@Selector String kind, @Selector String name, @Nullable String action,
            @Nullable String messages) {
        return answer(() -> {
            if (kind.equals("topics")) {
                operations.requireTopic(name);
            }
            if (action == null || action.isBlank()) {
                throw new io.rmq.core.RmqInvalidArgumentException("action", action, RmqEndpoint.ACTIONS
                        .getOrDefault(kind, "must be given"));
            }
            return endpoint.act(kind, name, action, messages);
        });
    }

    private static Object found(@Nullable Object result, Supplier<RmqNotFoundException> otherwise) {
        if (result == null) {
            throw otherwise.get();
        }
        return result;
    }

    private static WebEndpointResponse<Object> answer(Supplier<Object> work) {
        try {
            return new WebEndpointResponse<>(work.get(), WebEndpointResponse.STATUS_OK);
        }
        catch (RuntimeException ex) {
            ErrorReply reply = ErrorReply.of(ex);
            if (reply.status() == 500) {
                log.warn("RMQ endpoint request failed: {}", ex.toString());
            }
            return new WebEndpointResponse<>(reply.body(), reply.status());
        }
    }
}
