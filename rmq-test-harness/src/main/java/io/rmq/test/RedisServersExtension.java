package io.rmq.test;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts/stops test Redis servers; JUnit extension.
 * <p>
 * Servers start lazily (on the first {@link RedisTopology#newClient()}, {@link TestRedisServers#standalone()} …) and
 * are shared by every test class in the JVM. This extension ties their lifetime to the JUnit run: it puts an
 * {@link AutoCloseable} into the root context's store, which JUnit closes once all tests have finished, stopping the
 * servers this JVM started (external servers given through the environment are never stopped). A JVM shutdown hook
 * does the same as a backup when the extension is not used.
 */
public final class RedisServersExtension implements BeforeAllCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RedisServersExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(NAMESPACE)
                .computeIfAbsent(ServersCloser.class.getName(), key -> new ServersCloser(), ServersCloser.class);
    }

    /** Closed by JUnit with the root store, i.e. after the last test of the run. */
    static final class ServersCloser implements AutoCloseable {
        @Override
        public void close() {
            TestRedisServers.stopAll();
        }
    }
}
