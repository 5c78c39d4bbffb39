package io.rmq.samples;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Ends the sample on Ctrl-C (SIGINT) and SIGTERM as its {@code exit-when-done} mode does: the context closes
 * (listeners stop and hand back, the embedded Redis stops after them) and the JVM exits with the sample's exit code,
 * 0 when every story ended as expected. The JVM's default would exit with 128 + the signal's number, and
 * {@code spring-boot:run} counts 130 (SIGINT) as success but 143 (SIGTERM, what it sends when Maven itself is
 * stopped) as a build failure.
 * <p>
 * Uses {@code sun.misc.Signal} ({@code jdk.unsupported}, as Boot's own run tooling does); where the platform does not
 * let a signal be handled, that signal keeps the JVM's default, which still closes the context from Boot's shutdown
 * hook.
 */
final class ExitOnSignal {

    private static final Logger log = LoggerFactory.getLogger(ExitOnSignal.class);

    private final AtomicReference<ConfigurableApplicationContext> context = new AtomicReference<>();
    private final AtomicBoolean exiting = new AtomicBoolean();

    /** Handles INT and TERM from now on; the context is handed over once it exists. */
    static ExitOnSignal install() {
        ExitOnSignal exit = new ExitOnSignal();
        for (String name : new String[] {"INT", "TERM"}) {
            try {
                Signal.handle(new Signal(name), exit::onSignal);
            }
            catch (IllegalArgumentException ex) {
                log.debug("SIG{} keeps the JVM's default handling: {}", name, ex.getMessage());
            }
        }
        return exit;
    }

    void closes(ConfigurableApplicationContext context) {
        this.context.set(context);
    }

    private void onSignal(Signal signal) {
        if (!exiting.compareAndSet(false, true)) {
            return; // a second Ctrl-C, or Maven's SIGTERM after the terminal's SIGINT: the first one is being handled
        }
        ConfigurableApplicationContext running = context.get();
        // before the context exists there is nothing to close: exit as the JVM would
        System.exit(running == null ? 128 + signal.getNumber() : SpringApplication.exit(running));
    }
}
