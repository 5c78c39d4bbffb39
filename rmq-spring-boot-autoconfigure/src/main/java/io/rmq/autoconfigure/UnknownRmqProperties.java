package io.rmq.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.jspecify.annotations.Nullable;

/**
 * Refuses keys under {@code rmq.} that RMQ does not take ({@link RmqPropertyKeys}): a misspelt key such as
 * {@code rmq.consumer.max-retry} would otherwise be ignored and its default silently apply. Fails with an
 * {@link UnknownRmqPropertyException} naming the first such key as written (sources in precedence order, keys in the
 * order of their file), its value and the nearest valid key; the failure analyzer adds the file and line.
 * <p>
 * Why not {@code @ConfigurationProperties(ignoreUnknownFields = false)}: Boot's check would see topic names with dots
 * ({@code rmq.topics.orders.dlt.type}, which {@link TopicEntries} reads) as unknown, could not say which key was meant,
 * and would check environment variables. Those are not checked here: the environment is shared with other software
 * ({@code RMQ_HOST} of a RabbitMQ client, the tests' {@code RMQ_TEST_REDIS_URL}) that Boot maps onto {@code rmq.*} all
 * the same, and an underscore there may stand for a dot or for nothing. Every other source that lists its names is
 * checked: configuration files, system properties, command-line arguments, {@code SPRING_APPLICATION_JSON}, test
 * properties.
 */
final class UnknownRmqProperties {

    private static final ConfigurationPropertyName RMQ = ConfigurationPropertyName.of("rmq");
    /** How many further unknown keys the failure lists by name. */
    private static final int MORE_LISTED = 5;

    private UnknownRmqProperties() {
    }

    static void check(Environment environment) {
        List<String> unknown = new ArrayList<>();
        @Nullable EnumerablePropertySource<?> firstSource = null;
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source.getUnderlyingSource() instanceof EnumerablePropertySource<?> names)
                    || names instanceof SystemEnvironmentPropertySource) {
                continue;
            }
            for (String key : names.getPropertyNames()) {
                if (!key.regionMatches(true, 0, "rmq", 0, 3)) {
                    continue;
                }
                ConfigurationPropertyName name = ConfigurationPropertyName.adapt(key, '.');
                if (RMQ.isAncestorOf(name) && !RmqPropertyKeys.RMQ.isKnown(name) && !unknown.contains(key)) {
                    unknown.add(key);
                    firstSource = firstSource == null ? names : firstSource;
                }
            }
        }
        if (unknown.isEmpty()) {
            return;
        }
        String key = unknown.get(0);
        ConfigurationPropertyName name = ConfigurationPropertyName.adapt(key, '.');
        String nearest = RmqPropertyKeys.RMQ.nearest(name);
        String rule = "is not an RMQ property; "
                + (nearest != null ? "did you mean " + nearest + "?" : RmqPropertyKeys.RMQ.keysNear(name));
        if (unknown.size() > 1) {
            rule += " (also not RMQ properties: " + unknown.stream().skip(1).limit(MORE_LISTED)
                    .collect(Collectors.joining(", ")) + (unknown.size() > 1 + MORE_LISTED ? ", ..." : "") + ")";
        }
        throw new UnknownRmqPropertyException(key, firstSource.getProperty(key), rule);
    }
}
