package io.rmq.test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

/**
 * Captures what RMQ logs while a test causes failures on purpose: the lines go to the test (to assert on), not to the
 * build output. They still go to the test log file ({@code target/test.log}, with their stack traces), so the story
 * of a failing test stays complete there. Use in try-with-resources; closing restores the console.
 * <p>
 * {@link #expecting} narrows the capture to the lines the test causes: any other line is logged as usual, so a
 * problem the test did not cause still stands out in the build output.
 */
public final class LogCapture implements AutoCloseable {

    /** The file appender of logback-test.xml: captured lines still go there. */
    private static final String FILE_APPENDER = "FILE";

    /** One captured logger and what it was before, to restore on close. */
    private record Capture(Logger logger, boolean additive) {
    }

    private final Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
    private final List<Capture> captures = new ArrayList<>();
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
    private volatile Predicate<ILoggingEvent> expected = event -> true;
    private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            if (expected.test(event)) {
                event.prepareForDeferredProcessing();
                events.add(event);
                Appender<ILoggingEvent> file = root.getAppender(FILE_APPENDER);
                if (file != null) {
                    file.doAppend(event);
                }
            }
            else {
                for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext();) {
                    it.next().doAppend(event);
                }
            }
        }
    };

    private LogCapture(String... loggerNames) {
        appender.setContext(root.getLoggerContext());
        appender.start();
        for (String name : loggerNames) {
            Logger logger = (Logger) LoggerFactory.getLogger(name);
            captures.add(new Capture(logger, logger.isAdditive()));
            logger.addAppender(appender);
            logger.setAdditive(false);
        }
    }

    /** Captures everything logged under {@code io.rmq}. */
    public static LogCapture rmq() {
        return new LogCapture("io.rmq");
    }

    /**
     * Captures everything logged under the given loggers (e.g. a library's logger that reports the failure a test
     * causes on purpose).
     */
    public static LogCapture of(String... loggerNames) {
        return new LogCapture(loggerNames);
    }

    /**
     * Captures from now on only the lines whose message (or exception's message) contains one of {@code fragments}:
     * the failures the test causes. Every other line is logged as usual.
     */
    public LogCapture expecting(String... fragments) {
        expected = event -> {
            String message = event.getFormattedMessage();
            String error = event.getThrowableProxy() == null ? null : event.getThrowableProxy().getMessage();
            for (String fragment : fragments) {
                if (message != null && message.contains(fragment) || error != null && error.contains(fragment)) {
                    return true;
                }
            }
            return false;
        };
        return this;
    }

    /** The formatted messages captured so far (without stack traces). */
    public List<String> messages() {
        return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** The captured events, with level and throwable. */
    public List<ILoggingEvent> events() {
        return List.copyOf(events);
    }

    /** The formatted messages captured so far at WARN or above: what the build output would have shown. */
    public List<String> warnings() {
        return events.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                .map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Override
    public void close() {
        for (Capture capture : captures) {
            capture.logger().detachAppender(appender);
            capture.logger().setAdditive(capture.additive());
        }
        appender.stop();
    }
}
