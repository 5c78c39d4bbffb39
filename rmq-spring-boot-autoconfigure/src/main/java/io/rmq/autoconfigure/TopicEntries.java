package io.rmq.autoconfigure;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
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
            TopicType type = keys.containsKey("type")
                    ? binder.bind(keys.get("type"), Bindable.of(TopicType.class)).orElse(null)
                    : bound == null ? null : bound.type();
            int slotAmount = keys.containsKey("slot-amount")
                    ? binder.bind(keys.get("slot-amount"), Bindable.of(Integer.class)).orElse(16)
                    : bound == null ? 16 : bound.slotAmount();
            String rateLimit = keys.containsKey("rate-limit")
                    ? binder.bind(keys.get("rate-limit"), Bindable.of(String.class)).orElse(null)
                    : bound == null ? null : bound.rateLimit();
            Long deadLetterMaxCount = keys.containsKey("dead-letter-max-count")
                    ? binder.bind(keys.get("dead-letter-max-count"), Bindable.of(Long.class)).orElse(null)
                    : bound == null ? null : bound.deadLetterMaxCount();
            java.time.Duration deadLetterMaxAge = keys.containsKey("dead-letter-max-age")
                    ? binder.bind(keys.get("dead-letter-max-age"), Bindable.of(java.time.Duration.class)).orElse(null)
                    : bound == null ? null : bound.deadLetterMaxAge();
            Boolean keepExpired = keys.containsKey("dead-letter-keep-expired")
                    ? binder.bind(keys.get("dead-letter-keep-expired"), Bindable.of(Boolean.class)).orElse(null)
                    : bound == null ? null : bound.deadLetterKeepExpired();
            java.time.Duration expireAfter = keys.containsKey("expire-after")
                    ? binder.bind(keys.get("expire-after"), Bindable.of(java.time.Duration.class)).orElse(null)
                    : bound == null ? null : bound.expireAfter();
            topics.put(name, new RmqProperties.Topic(type, slotAmount, rateLimit, deadLetterMaxCount,
                    deadLetterMaxAge, keepExpired, expireAfter));
        });
        topics.forEach(RmqProperties::check);
        return topics;
    }
}
