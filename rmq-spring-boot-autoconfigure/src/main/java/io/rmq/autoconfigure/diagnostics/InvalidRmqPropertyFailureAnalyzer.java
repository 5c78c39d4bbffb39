package io.rmq.autoconfigure.diagnostics;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

import io.rmq.autoconfigure.RmqProperties;
import io.rmq.autoconfigure.UnknownRmqPropertyException;
import io.rmq.core.RmqInvalidArgumentException;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.jspecify.annotations.Nullable;

/**
 * An {@code rmq.*} property that is invalid: a key RMQ does not take ({@code rmq.consumer.max-retry}), a rule RMQ
 * checks ({@code rmq.topics.<name>.slot-amount} not a power of two, a missing type, ...) or a value that does not
 * convert; with where it was set (file and line, or the environment variable, system property, ...), looked up in the
 * application's environment as Boot's own property analyzers do. Ordered before Boot's binding analyzer, whose report
 * of the same failure names the record's constructor rather than the rule.
 */
@Order(Ordered.HIGHEST_PRECEDENCE + 10)
public class InvalidRmqPropertyFailureAnalyzer implements FailureAnalyzer {

    private static final String TOPIC_NAME = "topic name in rmq.topics";

    private final @Nullable Environment environment;

    /** {@code environment}: the failed application's, which Boot passes (null when it failed before having one). */
    public InvalidRmqPropertyFailureAnalyzer(@Nullable Environment environment) {
        this.environment = environment;
    }

    @Override
    public @Nullable FailureAnalysis analyze(Throwable failure) {
        RmqInvalidArgumentException invalid = Causes.find(failure, RmqInvalidArgumentException.class,
                ex -> ex.getField().startsWith("rmq.") || ex.getField().equals(TOPIC_NAME));
        if (invalid != null) {
            String property = invalid.getField();
            String origin = property.equals(TOPIC_NAME)
                    ? find("rmq.topics[" + invalid.getValue() + "]", true)
                    : origin(property);
            return analysis(property, String.valueOf(invalid.getValue()), origin, invalid.getRule(),
                    invalid instanceof UnknownRmqPropertyException, failure);
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
        String name = bind.getName().toString();
        String origin = property != null && property.getOrigin() != null ? property.getOrigin().toString()
                : origin(name);
        return analysis(name, value, origin, rule, false, failure);
    }

    private static FailureAnalysis analysis(String property, String value, @Nullable String origin, String rule,
            boolean unknown, Throwable failure) {
        String description = "Invalid RMQ configuration:\n\n    Property: " + property + "\n    Value:    " + value
                + "\n" + (origin == null ? "" : "    Origin:   " + origin + "\n") + "    Rule:     " + rule + "\n";
        boolean topic = !property.startsWith("rmq.") || property.startsWith("rmq.topics");
        String action = (unknown
                ? "Rename " + property + " to the RMQ property meant, or remove it: RMQ refuses keys under rmq. that it"
                        + " does not take, which would otherwise be ignored (the configuration reference lists them)."
                : "Correct " + (property.startsWith("rmq.") ? property : "the topic name") + " in the"
                        + " application's configuration (application.yml/.properties or the environment).")
                + (topic ? " A topic entry rmq.topics.<name> takes " + String.join(", ", RmqProperties.TOPIC_KEYS)
                        + "; type is one of RANGE_MERGE, PRIORITY, FIXED_TIME; slot-amount is a power of two"
                        + " (default 16)." : "");
        return new FailureAnalysis(description, action, failure);
    }

    /**
     * Where {@code property} was set, as the binder found it (the first source that has it); for a topic's property
     * that is not set (its type), where the topic's entry was. Names are compared element by element, relaxed (case,
     * dashes, underscores aside), and a dotted topic name in brackets equals the same written with dots.
     */
    private @Nullable String origin(String property) {
        String found = find(property, false);
        if (found != null || !property.startsWith("rmq.topics.")) {
            return found;
        }
        String entry = property.substring(0, property.lastIndexOf('.'));
        String entryFound = find(entry, true);
        return entryFound == null ? null : "not set; " + entry + " is at " + entryFound;
    }

    /** The origin of {@code property}, or with {@code under} of the first property under it. */
    private @Nullable String find(String property, boolean under) {
        if (environment == null) {
            return null;
        }
        String wanted = comparable(ConfigurationPropertyName.adapt(property, '.'));
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource names)) {
                continue;
            }
            for (ConfigurationPropertyName name : (Iterable<ConfigurationPropertyName>) names.stream()::iterator) {
                String candidate = comparable(name);
                if (under ? candidate.startsWith(wanted + ".") : candidate.equals(wanted)) {
                    ConfigurationProperty found = names.getConfigurationProperty(name);
                    Origin origin = found == null ? null : found.getOrigin();
                    return origin == null ? null : origin.toString();
                }
            }
        }
        return null;
    }

    private static String comparable(ConfigurationPropertyName name) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            text.append(i == 0 ? "" : ".").append(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL)
                    .toLowerCase(Locale.ROOT).replace("-", "").replace("_", ""));
        }
        return text.toString();
    }

    private static String rootMessage(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return String.valueOf(root.getMessage());
    }
}
