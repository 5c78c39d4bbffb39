package io.rmq.test;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * For test classes that make Spring contexts fail to start on purpose and assert the failure: the WARN line Spring
 * logs for each ("Exception encountered during context initialization - cancelling refresh attempt: ...") is
 * captured instead of printed, and must name the failure. Anything else Spring logs still reaches the build output.
 */
public final class ContextFailureLogs implements BeforeEachCallback, AfterEachCallback {

    private static final String LINE = "Exception encountered during context initialization";

    @Override
    public void beforeEach(ExtensionContext context) {
        store(context).put(LogCapture.class, LogCapture.of("org.springframework.context").expecting(LINE));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        try (LogCapture log = store(context).remove(LogCapture.class, LogCapture.class)) {
            assertThat(log.warnings()).as("Spring's report of a failed start-up").allSatisfy(line ->
                    assertThat(line).contains("cancelling refresh attempt: "));
        }
    }

    private static ExtensionContext.Store store(ExtensionContext context) {
        return context.getStore(ExtensionContext.Namespace.create(ContextFailureLogs.class, context.getUniqueId()));
    }
}
