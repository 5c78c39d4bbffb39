package io.rmq.spring.aot;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.rmq.autoconfigure.RmqProperties;
import io.rmq.spring.dashboard.RmqDashboard;
import io.rmq.spring.operations.RmqOperations;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What a GraalVM native image needs of RMQ beyond what Spring's AOT processing finds by itself (registered in
 * {@code META-INF/spring/aot.factories}):
 * <ul>
 * <li>the Lua scripts of rmq-core ({@code io/rmq/redis/scripts/*.lua}, read as class path resources) and the
 * dashboard's page, script and style sheet;</li>
 * <li>the JDK proxy that stands in for Redis commands while RMQ has no connection;</li>
 * <li>JSON binding of what the dashboard and the {@code rmq} Actuator endpoint return (the records of
 * {@link RmqOperations} and {@link RmqDashboard}, and the return types of {@link RmqOperations}' methods, some of
 * which the endpoint returns as {@code Object});</li>
 * <li>the record components of {@link RmqProperties} and its nested records, from which the check of unknown
 * {@code rmq.*} keys derives the valid ones.</li>
 * </ul>
 * Listener methods and their payload types are registered per bean by {@link RmqListenerBeanRegistrationAotProcessor};
 * {@code @RmqScheduled} methods by Spring's processing of {@code @Reflective}, which that annotation carries;
 * {@code rmq.*} configuration properties by Spring Boot.
 */
class RmqRuntimeHints implements RuntimeHintsRegistrar {

    /** The Lua scripts, as {@code io.rmq.redis.internal.RmqScript} loads them. */
    static final String SCRIPTS = "io/rmq/redis/scripts/*.lua";

    /** dashboard.html, dashboard.js, dashboard.css, as {@link RmqDashboard} loads them. */
    static final String DASHBOARD = "io/rmq/spring/dashboard/dashboard.*";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(SCRIPTS);
        hints.resources().registerPattern(DASHBOARD);
        hints.proxies().registerJdkProxy(RedisClusterAsyncCommands.class);
        BindingReflectionHintsRegistrar binding = new BindingReflectionHintsRegistrar();
        for (Class<?> owner : new Class<?>[] {RmqOperations.class, RmqDashboard.class}) {
            for (Class<?> nested : owner.getDeclaredClasses()) {
                if (nested.isRecord() && Modifier.isPublic(nested.getModifiers())) {
                    binding.registerReflectionHints(hints.reflection(), nested);
                }
            }
        }
        binding.registerReflectionHints(hints.reflection(), RmqProperties.class);
        for (Method method : RmqOperations.class.getDeclaredMethods()) {
            if (Modifier.isPublic(method.getModifiers()) && method.getReturnType() != void.class) {
                binding.registerReflectionHints(hints.reflection(), method.getGenericReturnType());
            }
        }
    }
}
