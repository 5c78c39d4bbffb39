package io.rmq.test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

/**
 * Captures what RMQ logs while a test causes failures on purpose: the lines go to the test (to assert on), not to the
 * build output. Use in try-with-resources; closing restores the console.
 */
public final class LogCapture implements AutoCloseable {

    private final Logger logger;
    private final boolean additive;
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
    private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            event.prepareForDeferredProcessing();
            events.add(event);
        }
    };

    private LogCapture(String loggerName) {
        logger = (Logger) LoggerFactory.getLogger(loggerName);
        additive = logger.isAdditive();
        appender.setContext(logger.getLoggerContext());
        appender.start();
        logger.addAppender(appender);
        logger.setAdditive(false);
    }

    /** Captures everything logged under {@code io.rmq}. */
    public static LogCapture rmq() {
        return new LogCapture("io.rmq");
    }

    /** Captures everything logged under {@code loggerName} (e.g. a library's package). */
    public static LogCapture of(String loggerName) {
        return new LogCapture(loggerName);
    }

    /** The formatted messages captured so far (without stack traces). */
    public List<String> messages() {
        return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** The captured events, with level and throwable. */
    public List<ILoggingEvent> events() {
        return List.copyOf(events);
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        logger.setAdditive(additive);
        appender.stop();
    }
}
