package io.rmq.test.context;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The JUnit side of {@link RmqTest}: ties the test Redis servers' lifetime to the JUnit run. The servers start with the
 * first context that needs them (see {@link RmqTestContextCustomizerFactory}) and are shared by the run; once every
 * test has finished, JUnit closes the root store, and this extension closes the application contexts still wired to
 * them (Spring's context cache would otherwise close them at JVM exit, after their Redis was gone, and RMQ would log
 * the loss), then stops the container and the servers this JVM started. A JVM shutdown hook stops the servers as well
 * when JUnit does not get there.
 */
public final class RmqTestExtension implements BeforeAllCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RmqTestExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(NAMESPACE)
                .computeIfAbsent(Closer.class.getName(), key -> new Closer(), Closer.class);
    }

    /** Closed by JUnit with the root store, after the last test of the run. */
    static final class Closer implements AutoCloseable {
        @Override
        public void close() {
            RmqTestContextCustomizerFactory.closeLiveContexts();
            RmqTestRedis.stopAll();
        }
    }
}
