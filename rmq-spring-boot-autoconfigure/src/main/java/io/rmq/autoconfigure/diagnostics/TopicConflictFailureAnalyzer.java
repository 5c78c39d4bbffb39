package io.rmq.autoconfigure.diagnostics;

import io.rmq.core.TopicConflictException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/** Two definitions of one topic name that differ: both are named, and how to make them agree. */
@Order(Ordered.HIGHEST_PRECEDENCE + 20)
public class TopicConflictFailureAnalyzer extends AbstractFailureAnalyzer<TopicConflictException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, TopicConflictException cause) {
        return new FailureAnalysis(describe(cause), cause.isModeConflict() ? modeAction(cause) : ACTION, cause);
    }

    static String describe(TopicConflictException conflict) {
        // the message says where the existing definition comes from: "<existing> (<where>) versus <requested> ..."
        String message = conflict.getMessage();
        String existing = conflict.getExisting().describe() + " (";
        int from = message.indexOf(existing);
        int to = from < 0 ? -1 : message.indexOf(") versus ", from);
        String where = to < 0 ? "existing" : message.substring(from + existing.length(), to);
        return "Topic '" + conflict.getRequested().name() + "' is defined twice, differently:\n\n    "
                + conflict.getExisting().describe() + " (" + where + ")\n    " + conflict.getRequested().describe()
                + " (requested)\n";
    }

    static String modeAction(TopicConflictException conflict) {
        return "A topic is consumed in one mode everywhere (ORDERLY slots have owners and keep their messages in order,"
                + " which CONCURRENT consumers must not touch); the first listener registers it with the topic. Make"
                + " the listeners' modes agree (@RmqListener(mode), rmq.listeners.<id>.mode), or change the topic's"
                + " mode: " + conflict.getRule().substring(conflict.getRule().indexOf(": ") + 2) + ".";
    }

    static final String ACTION = "A topic name has one type and slot amount everywhere: rmq.topics.<name>,"
            + " @RmqListener(type, slotAmount), Rmq.defineTopic, and every service on the same Redis and key prefix."
            + " Make them agree, or use another name. To redefine a topic in Redis, drain it first and remove its"
            + " entry: HDEL <rmq.key-prefix>:topics <name>.";
}
