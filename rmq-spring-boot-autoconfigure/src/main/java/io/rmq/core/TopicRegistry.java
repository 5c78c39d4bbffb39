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

    /**
     * @param redisRegistration registers a definition in Redis and returns the one Redis holds for that name
     */
    public TopicRegistry(Function<TopicDefinition, TopicDefinition> redisRegistration) {
        this.redisRegistration = redisRegistration;
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

    /** The definition of a topic defined earlier; a clear error otherwise. */
    public TopicDefinition get(String name) {
        TopicDefinition definition = topics.get(TopicDefinition.validateName(name));
        if (definition == null) {
            throw new RmqInvalidArgumentException("topic", name,
                    "is not defined; define it first (rmq.topics." + name + ".type / .slot-amount, or Rmq.defineTopic)");
        }
        return definition;
    }

    public Map<String, TopicDefinition> all() {
        return Map.copyOf(topics);
    }
}
