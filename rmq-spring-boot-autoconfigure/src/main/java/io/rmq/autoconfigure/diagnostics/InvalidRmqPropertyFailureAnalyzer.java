package io.rmq.autoconfigure.diagnostics;

import java.util.Arrays;
import java.util.stream.Collectors;

import io.rmq.autoconfigure.RmqProperties;
import io.rmq.core.RmqInvalidArgumentException;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.jspecify.annotations.Nullable;

/**
 * An {@code rmq.*} property that is invalid: a rule RMQ checks ({@code rmq.topics.<name>.slot-amount} not a power of
 * two, a missing type, an unknown key in a topic entry, ...) or a value that does not convert. Ordered before Boot's
 * own binding analyzer, whose report of the same failure names the record's constructor rather than the rule.
 */
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
public class InvalidRmqPropertyFailureAnalyzer implements FailureAnalyzer {

    @Override
    public @Nullable FailureAnalysis analyze(Throwable failure) {
        RmqInvalidArgumentException invalid = Causes.find(failure, RmqInvalidArgumentException.class,
                ex -> ex.getField().startsWith("rmq.") || ex.getField().endsWith(" in rmq.topics"));
        if (invalid != null) {
            return analysis(invalid.getField(), String.valueOf(invalid.getValue()), invalid.getRule(), failure);
        }
        BindException bind = Causes.find(failure, BindException.class,
                ex -> ex.getName().toString().startsWith("rmq."));
        if (bind == null || Causes.find(bind, RmqInvalidArgumentException.class) != null) {
            return null;
        }
        ConfigurationProperty property = bind.getProperty();
        String value = property == null ? "" : String.valueOf(property.getValue());
        Class<?> type = bind.getTarget().getType().resolve(Object.class);
        String rule = type.isEnum()
                ? "must be one of " + Arrays.stream(type.getEnumConstants()).map(c -> ((Enum<?>) c).name())
                        .collect(Collectors.joining(", "))
                : "cannot be read as " + type.getSimpleName() + ": " + rootMessage(bind);
        if (property != null && property.getOrigin() != null) {
            rule += " (from " + property.getOrigin() + ")";
        }
        return analysis(bind.getName().toString(), value, rule, failure);
    }

    private static FailureAnalysis analysis(String property, String value, String rule, Throwable failure) {
        String description = "Invalid RMQ configuration:\n\n    Property: " + property + "\n    Value:    " + value
                + "\n    Rule:     " + rule + "\n";
        boolean topic = !property.startsWith("rmq.") || property.startsWith("rmq.topics");
        String action = "Correct " + (property.startsWith("rmq.") ? property : "the topic name") + " in the"
                + " application's configuration (application.yml/.properties or the environment)."
                + (topic ? " A topic entry rmq.topics.<name> takes " + String.join(", ", RmqProperties.TOPIC_KEYS)
                        + "; type is one of RANGE_MERGE, PRIORITY, FIXED_TIME; slot-amount is a power of two"
                        + " (default 16)." : "");
        return new FailureAnalysis(description, action, failure);
    }

    private static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return String.valueOf(root.getMessage());
    }
}
