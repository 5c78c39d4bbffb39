package io.rmq.autoconfigure;

import java.util.List;
import java.util.Locale;

import io.rmq.core.RmqInvalidArgumentException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Rejects keys inside a {@code rmq.topics.<name>} entry that no topic property matches (a typo such as
 * {@code slot-amont} would otherwise be ignored and the topic silently get the default).
 * <p>
 * Why not {@code @ConfigurationProperties(ignoreUnknownFields = false)}: Boot's {@code NoUnboundElementsBindHandler}
 * would then check everything under {@code rmq.}, and other things live there ({@code rmq.samples.*} of the sample
 * application, and any environment variable starting with {@code RMQ_}, such as the tests' {@code RMQ_TEST_REDIS_URL},
 * which Boot maps to {@code rmq.test.redis.url}). So only topic entries are checked, and only in sources that can
 * spell a key exactly: environment variables are skipped, their underscores being ambiguous.
 */
final class TopicKeysCheck {

    private static final ConfigurationPropertyName TOPICS = ConfigurationPropertyName.of("rmq.topics");
    private static final List<String> UNIFORM_KEYS = RmqProperties.TOPIC_KEYS.stream()
            .map(key -> key.replace("-", "")).toList();

    private TopicKeysCheck() {
    }

    /** Throws {@link RmqInvalidArgumentException} naming the first unknown key, its value and the valid keys. */
    static void check(Environment environment) {
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)
                    || source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource) {
                continue;
            }
            iterable.filter(TOPICS::isAncestorOf).stream().sorted().forEach(name -> check(iterable, name));
        }
    }

    private static void check(IterableConfigurationPropertySource source, ConfigurationPropertyName name) {
        // rmq.topics.<topic>.<key>: a shorter name gives the topic no entry at all, which binding reports
        if (name.getNumberOfElements() < 4) {
            return;
        }
        String key = name.getElement(3, Form.UNIFORM).toLowerCase(Locale.ROOT);
        if (name.getNumberOfElements() == 4 && UNIFORM_KEYS.contains(key)) {
            return;
        }
        ConfigurationProperty property = source.getConfigurationProperty(name);
        Object value = property == null ? null : property.getValue();
        String origin = property == null || property.getOrigin() == null ? "" : " (from " + property.getOrigin() + ")";
        throw new RmqInvalidArgumentException("rmq.topics." + name.getElement(2, Form.ORIGINAL) + "."
                + name.subName(3), value, "is not a topic property; a topic entry takes only "
                + String.join(", ", RmqProperties.TOPIC_KEYS) + origin);
    }
}
