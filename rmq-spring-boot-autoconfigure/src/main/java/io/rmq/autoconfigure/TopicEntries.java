package io.rmq.autoconfigure;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The {@code rmq.topics} entries as RMQ reads them: what Boot bound into {@link RmqProperties#topics()}, plus topics
 * whose names contain dots written without brackets, checked.
 * <p>
 * Topic names may contain dots ({@code orders.dlt}), which Boot's binding takes for nesting: it binds
 * {@code rmq.topics.orders.dlt.type} as a key {@code dlt.type} of a topic {@code orders} (and drops it), so only
 * {@code rmq.topics[orders.dlt].type} would work. The keys a topic takes are known ({@link RmqProperties#TOPIC_KEYS}),
 * so a name under {@code rmq.topics} that ends with one of them names its topic with everything in between:
 * {@code rmq.topics.orders.dlt.type} is the type of topic {@code orders.dlt} (and YAML's nested
 * {@code orders: dlt: type:} the same). The entry {@code orders} that Boot made of it is dropped unless a key of its
 * own was set.
 * <p>
 * A key that no topic property matches is not read (the entry keeps that property's default); start-up has already
 * failed on it ({@link UnknownRmqProperties}) unless it came from an environment variable, whose underscores are
 * ambiguous (they bind through Boot only, a dotted name in brackets).
 */
final class TopicEntries {

    static final ConfigurationPropertyName TOPICS = ConfigurationPropertyName.of("rmq.topics");
    /** Uniform form (no dashes, lower case) of each key -> its canonical form. */
    private static final Map<String, String> KEYS = RmqProperties.TOPIC_KEYS.stream()
            .collect(Collectors.toMap(key -> key.replace("-", ""), key -> key, (a, b) -> a, LinkedHashMap::new));

    private TopicEntries() {
    }

    /**
     * One key of a dotted topic entry: bound from the name it was written under when it was written (or
     * {@code fallback} when it does not bind), else what Boot bound for the entry, else {@code fallback}.
     */
    private static <T> @Nullable T value(Binder binder, Map<String, ConfigurationPropertyName> keys, String key,
            Class<T> type, RmqProperties.@Nullable Topic bound, Function<RmqProperties.Topic, @Nullable T> ofBound,
            @Nullable T fallback) {
        if (keys.containsKey(key)) {
            return binder.bind(keys.get(key), Bindable.of(type)).orElse(fallback);
        }
        return bound == null ? fallback : ofBound.apply(bound);
    }

    /** The topic definitions of {@code rmq.topics}, checked, by name. */
    static List<TopicDefinition> definitions(Environment environment, RmqProperties properties) {
        return read(environment, properties).entrySet().stream()
                .map(e -> new TopicDefinition(e.getKey(), e.getValue().type(), e.getValue().slotAmount()))
                .toList();
    }

    /**
     * Every {@code rmq.topics} entry by topic name, checked: throws {@link RmqInvalidArgumentException} naming the
     * first bad property, its value and the rule (a missing type, a slot amount that is not a power of two, an
     * unreadable rate limit, a bad topic name).
     */
    static SortedMap<String, RmqProperties.Topic> read(Environment environment, RmqProperties properties) {
        // dotted topic name -> canonical key -> the property's name (the first source that has it wins)
        Map<String, Map<String, ConfigurationPropertyName>> dotted = new TreeMap<>();
        // first elements under rmq.topics that have a key of their own (rmq.topics.<name>.<key>)
        Set<String> direct = new HashSet<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            boolean environmentVariables = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
            iterable.filter(TOPICS::isAncestorOf).stream().sorted().forEach(name -> {
                int elements = name.getNumberOfElements();
                // rmq.topics.<topic>.<key>: a shorter name gives the topic no entry at all, which binding reports
                if (elements < 4) {
                    return;
                }
                String key = KEYS.get(name.getElement(elements - 1, Form.UNIFORM).toLowerCase(Locale.ROOT));
                if (elements == 4 && key != null) {
                    direct.add(name.getElement(2, Form.ORIGINAL));
                    return;
                }
                if (environmentVariables || key == null) {
                    return;
                }
                String topic = IntStream.range(2, elements - 1).mapToObj(i -> name.getElement(i, Form.ORIGINAL))
                        .collect(Collectors.joining("."));
                dotted.computeIfAbsent(topic, t -> new LinkedHashMap<>()).putIfAbsent(key, name);
            });
        }
        SortedMap<String, RmqProperties.Topic> topics = new TreeMap<>();
        properties.topics().forEach((name, topic) -> {
            boolean madeOfDottedNames = !direct.contains(name)
                    && dotted.keySet().stream().anyMatch(d -> d.startsWith(name + "."));
            if (!madeOfDottedNames) {
                topics.put(name, topic);
            }
        });
        Binder binder = Binder.get(environment);
        dotted.forEach((name, keys) -> {
            RmqProperties.Topic bound = topics.get(name);
            topics.put(name, new RmqProperties.Topic(
                    value(binder, keys, "type", TopicType.class, bound, RmqProperties.Topic::type, null),
                    value(binder, keys, "slot-amount", Integer.class, bound, RmqProperties.Topic::slotAmount, 16),
                    value(binder, keys, "rate-limit", String.class, bound, RmqProperties.Topic::rateLimit, null),
                    value(binder, keys, "dead-letter-max-count", Long.class, bound,
                            RmqProperties.Topic::deadLetterMaxCount, null),
                    value(binder, keys, "dead-letter-max-age", Duration.class, bound,
                            RmqProperties.Topic::deadLetterMaxAge, null),
                    value(binder, keys, "dead-letter-keep-expired", Boolean.class, bound,
                            RmqProperties.Topic::deadLetterKeepExpired, null),
                    value(binder, keys, "expire-after", Duration.class, bound, RmqProperties.Topic::expireAfter,
                            null),
                    value(binder, keys, "dedupe-for", Duration.class, bound, RmqProperties.Topic::dedupeFor, null)));
        });
        topics.forEach(RmqProperties::check);
        return topics;
    }
}
