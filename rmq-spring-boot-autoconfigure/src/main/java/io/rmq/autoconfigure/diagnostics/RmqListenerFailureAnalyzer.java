package io.rmq.autoconfigure.diagnostics;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.RmqUnavailableException;
import io.rmq.core.TopicConflictException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.jspecify.annotations.Nullable;

/**
 * An unusable {@code @RmqListener}: the annotation post-processor's failure already names the bean, the method and
 * the problem; this puts it on one screen with an action that fits the problem. First of RMQ's analyzers, since the
 * problem inside (a conflict, an invalid value) has analyzers of its own that would lose the bean and method.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RmqListenerFailureAnalyzer implements FailureAnalyzer {

    static final String PREFIX = "@RmqListener on bean '";

    @Override
    public @Nullable FailureAnalysis analyze(Throwable failure) {
        IllegalStateException listener = Causes.find(failure, IllegalStateException.class,
                ex -> ex.getMessage() != null && ex.getMessage().startsWith(PREFIX));
        if (listener == null) {
            return null;
        }
        String message = listener.getMessage();
        int split = message.indexOf("': ");
        String where = split < 0 ? message : message.substring(0, split + 1);
        String problem = split < 0 ? "" : message.substring(split + 3);
        String action;
        TopicConflictException conflict = Causes.find(listener.getCause(), TopicConflictException.class);
        if (conflict != null) {
            action = conflict.isModeConflict() ? TopicConflictFailureAnalyzer.modeAction(conflict)
                    : TopicConflictFailureAnalyzer.ACTION;
        }
        else if (Causes.find(listener.getCause(), RmqUnavailableException.class) != null) {
            action = "Redis is down, so the listener's topic cannot be looked up there. Define the topic where the"
                    + " application can see it without Redis (rmq.topics.<name>.type and .slot-amount, or type and"
                    + " slotAmount on the annotation), or start Redis.";
        }
        else if (Causes.find(listener.getCause(), RmqInvalidArgumentException.class) != null) {
            action = "Correct the @RmqListener attribute (or the property its placeholder reads) as the rule says.";
        }
        else if (problem.startsWith("containerFactory '")) {
            action = "Name an RmqListenerContainerFactory bean in @RmqListener(containerFactory), or leave it empty"
                    + " for the bean named rmqListenerContainerFactory (the auto-configured one).";
        }
        else if (problem.contains(" already has the id '")) {
            action = "Give each listener its own id: set @RmqListener(id) on one of them (repeated annotations on"
                    + " one method default to <bean>.<method>, <bean>.<method>-2, ...).";
        }
        else {
            action = "Change the listener method or its @RmqListener attributes as the problem says: the method"
                    + " takes exactly one parameter (the payload, String, byte[] or RmqMessage<T>), and every"
                    + " attribute must be readable.";
        }
        return new FailureAnalysis("An RMQ listener cannot be started:\n\n    Listener: " + where + "\n    Problem:  "
                + problem + "\n", action, listener);
    }
}
