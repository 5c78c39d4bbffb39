package io.rmq.spring.listener;

import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqNonRetryableException;
import io.rmq.core.BodyCodec;
import io.rmq.spring.RmqHeaders;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;
import org.jspecify.annotations.Nullable;

/**
 * The handler of a class-level {@code @RmqListener}: gives a delivery whose {@link RmqHeaders#TYPE_ID} names a
 * handler's payload type to that handler; any other to the first {@code @RmqHandler} method whose payload type the body
 * fits (see {@link io.rmq.spring.annotation.RmqHandler} for the order), else to the default handler, else fails it as
 * non-retryable with the types tried. The container hands over the stored bytes
 * ({@code byte[]} payload type); each route reads them as its own type.
 */
final class HandlerDispatcher implements MessageHandler<Object> {

    /**
     * One {@code @RmqHandler} method.
     *
     * @param description  the method, for messages ({@code OrderEvents.created})
     * @param payloadType  what the method's payload is read as
     * @param rawType      its class (boxed), which a read value must be an instance of
     * @param strictReader reads the body as {@code payloadType}, failing on unknown properties and trailing input
     *                     (and, with the strict payload mapping, on missing required properties); null for
     *                     {@code String} and {@code byte[]}, which take any body
     * @param invoker      calls the method with the payload read
     */
    record Route(String description, Type payloadType, Class<?> rawType, ObjectReader strictReader,
            MessageHandler<Object> invoker) {

        static Route of(String description, Type payloadType, BodyCodec codec, MessageHandler<Object> invoker) {
            return new Route(description, payloadType,
                    ClassUtils.resolvePrimitiveIfNecessary(ResolvableType.forType(payloadType).toClass()),
                    takesAnyBody(payloadType) ? null : HandlerDispatcher.strictReader(codec.readMapper(), payloadType),
                    invoker);
        }

        /** The payload type with simple names, as messages show it ({@code Map<String, Object>}). */
        String typeName() {
            return simpleName(payloadType);
        }

        private static String simpleName(Type type) {
            if (type instanceof Class<?> c) {
                return c.getSimpleName();
            }
            if (type instanceof java.lang.reflect.ParameterizedType p) {
                return simpleName(p.getRawType()) + java.util.Arrays.stream(p.getActualTypeArguments())
                        .map(Route::simpleName).collect(java.util.stream.Collectors.joining(", ", "<", ">"));
            }
            return type.getTypeName();
        }
    }

    private final String listener;
    private final List<Route> routes;
    private final Route defaultRoute;
    private final BodyCodec codec;
    private final @Nullable ClassLoader classLoader;
    /** Type header value -> its handler ({@link #NO_ROUTE}: none); see {@link #routeOf}. */
    private final Map<String, Route> byTypeId = new ConcurrentHashMap<>();

    private static final int MAX_REMEMBERED_TYPE_IDS = 256;
    private static final Route NO_ROUTE = new Route("none", Object.class, Object.class, null, (payload, delivery) -> {
    });

    /**
     * @param listener     the class-level listener, for messages
     * @param routes       the handlers to try, in order
     * @param defaultRoute the default handler, or null
     */
    HandlerDispatcher(String listener, List<Route> routes, @Nullable Route defaultRoute, BodyCodec codec) {
        this.listener = listener;
        // the class loader of the thread that builds the listeners (the application's): type headers name its classes
        this.classLoader = ClassUtils.getDefaultClassLoader();
        this.routes = List.copyOf(routes);
        this.defaultRoute = defaultRoute;
        this.codec = codec;
    }

    static boolean takesAnyBody(Type payloadType) {
        return payloadType == String.class || payloadType == CharSequence.class || payloadType == byte[].class;
    }

    private static ObjectReader strictReader(JsonMapper mapper, Type type) {
        return mapper.readerFor(mapper.constructType(type)).with(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES,
                DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    List<Route> routes() {
        return routes;
    }

    Route defaultRoute() {
        return defaultRoute;
    }

    @Override
    public void handle(Object payload, Delivery delivery) throws Exception {
        byte[] body = delivery.body();
        String typeId = delivery.headers().get(RmqHeaders.TYPE_ID);
        Route named = typeId == null ? null : routeOf(typeId);
        if (named != null) {
            Object read;
            try {
                read = codec.decode(body, named.payloadType());
            }
            catch (RuntimeException ex) {
                // the header is the sender's: at most a class name's worth of it in the reason
                String shown = typeId.length() <= 200 ? typeId : typeId.substring(0, 200) + "...";
                throw new RmqNonRetryableException(listener + ": the message's " + RmqHeaders.TYPE_ID + " '" + shown
                        + "' chose the @RmqHandler " + named.description() + ", which cannot read it as "
                        + named.typeName() + ": " + ex.getMessage(), ex);
            }
            named.invoker().handle(read, delivery);
            return;
        }
        List<String> tried = new ArrayList<>(routes.size() + 1);
        for (Route route : routes) {
            Object read = read(route, body);
            if (read != null) {
                route.invoker().handle(read, delivery);
                return;
            }
            tried.add(route.typeName());
        }
        if (defaultRoute != null) {
            Object read;
            try {
                read = codec.decode(body, defaultRoute.payloadType());
            }
            catch (RuntimeException ex) {
                throw new RmqNonRetryableException(listener + ": no @RmqHandler takes this body (tried " + tried
                        + ") and the default handler " + defaultRoute.description() + " cannot read it as "
                        + defaultRoute.typeName() + ": " + ex.getMessage(), ex);
            }
            defaultRoute.invoker().handle(read, delivery);
            return;
        }
        throw new RmqNonRetryableException(listener + ": no @RmqHandler takes this body (tried " + tried + ", in this"
                + " order) and there is no @RmqHandler(isDefault = true)");
    }

    /**
     * The handler a type header names, or null: the one whose payload class has that name, else (when the class can
     * be loaded) the first, in the order handlers are tried, whose payload class it is assignable to. Answers are
     * remembered for a bounded number of names: the header is the sender's, any string may come.
     */
    private @Nullable Route routeOf(String typeId) {
        Route known = byTypeId.get(typeId);
        if (known != null) {
            return known == NO_ROUTE ? null : known;
        }
        Route found = findRoute(typeId);
        if (byTypeId.size() < MAX_REMEMBERED_TYPE_IDS) {
            byTypeId.put(typeId, found == null ? NO_ROUTE : found);
        }
        return found;
    }

    private @Nullable Route findRoute(String typeId) {
        List<Route> all = new ArrayList<>(routes);
        if (defaultRoute != null) {
            all.add(defaultRoute);
        }
        for (Route route : all) {
            if (route.rawType().getName().equals(typeId)) {
                return route;
            }
        }
        Class<?> type;
        try {
            // not initialised: naming a class in a header must not run its static code
            type = ClassUtils.forName(typeId, classLoader);
        }
        catch (ClassNotFoundException | LinkageError | IllegalArgumentException ex) {
            return null;
        }
        for (Route route : all) {
            if (route.rawType() != Object.class && route.rawType().isAssignableFrom(type)) {
                return route;
            }
        }
        return null;
    }

    /** The body as the route's type, or null when it does not fit. */
    private Object read(Route route, byte[] body) {
        if (route.strictReader() == null) {
            return codec.decode(body, route.payloadType());
        }
        try {
            Object value = route.strictReader().readValue(body);
            return route.rawType().isInstance(value) ? value : null;
        }
        catch (RuntimeException ex) {
            return null;
        }
    }
}
