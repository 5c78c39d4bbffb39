package io.rmq.core;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Topic definitions known to this process, each checked once against the cluster-wide registry in Redis.
 * Conflicts (here or in Redis) fail with both definitions named.
 */
public final class TopicRegistry {

    private final Map<String, TopicDefinition> topics = new ConcurrentHashMap<>();
    private final Function<TopicDefinition, TopicDefinition> redisRegistration;
    private final Function<String, TopicDefinition> redisLookup;

    /**
     * @param redisRegistration registers a definition in Redis and returns the one Redis holds for that name
     * @param redisLookup       the definition Redis holds for a name, or null
     */
    public TopicRegistry(Function<TopicDefinition, TopicDefinition> redisRegistration,
            Function<String, TopicDefinition> redisLookup) {
        this.redisRegistration = redisRegistration;
        this.redisLookup = redisLookup;
    }

    public TopicDefinition define(TopicDefinition definition) {
        TopicDefinition local = topics.get(definition.name());
        if (local != null) {
            if (!local.equals(definition)) {
                throw new TopicConflictException(local, definition, "defined earlier in this application");
            }
            return local;
        }
        TopicDefinition registered = redisRegistration.apply(definition);
        if (!registered.equals(definition)) {
            throw new TopicConflictException(registered, definition, "registered in Redis");
        }
        TopicDefinition raced = topics.putIfAbsent(definition.name(), definition);
        if (raced != null && !raced.equals(definition)) {
            throw new TopicConflictException(raced, definition, "defined concurrently in this application");
        }
        return definition;
    }

    /**
     * The definition of a topic: defined in this process, or else registered in Redis by another process (then
     * cached here). A clear error when neither has it.
     */
    public TopicDefinition get(String name) {
        TopicDefinition definition = name == null ? null : topics.get(name);
        if (definition != null) {
            return definition; // a known name was validated when it was defined
        }
        TopicDefinition.validateName(name);
        TopicDefinition registered = redisLookup.apply(name);
        if (registered == null) {
            throw new RmqInvalidArgumentException("topic", name, "is not defined here nor registered in Redis; define"
                    + " it first (rmq.topics." + name + ".type and .slot-amount, or Rmq.defineTopic)");
        }
        TopicDefinition raced = topics.putIfAbsent(name, registered);
        return raced != null ? raced : registered;
    }

    /** Whether a topic is defined here or registered in Redis (looks it up there when not known here). */
    public boolean isKnown(String name) {
        return topics.containsKey(name) || redisLookup.apply(TopicDefinition.validateName(name)) != null;
    }

    public Map<String, TopicDefinition> all() {
        return Map.copyOf(topics);
    }
}
