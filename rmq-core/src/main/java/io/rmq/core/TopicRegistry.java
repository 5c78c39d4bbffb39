package io.rmq.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Topic definitions known to this process, each checked once against the cluster-wide registry in Redis.
 * Conflicts (here or in Redis) fail with both definitions named.
 */
public final class TopicRegistry {

    private final Map<String, TopicDefinition> topics = new ConcurrentHashMap<>();
    /** Defined here while Redis was unreachable; registered in Redis by {@link #registerPending()}. */
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    /** Defined here, then found to conflict with Redis when registered late: using them fails with the conflict. */
    private final Map<String, TopicConflictException> conflicts = new ConcurrentHashMap<>();
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
     * Defines a topic in this process only (checked against its other definitions), to be registered in Redis by
     * {@link #registerPending()} once Redis is reachable: so an application can start while Redis is down.
     */
    public TopicDefinition defineLocally(TopicDefinition definition) {
        TopicDefinition local = topics.putIfAbsent(definition.name(), definition);
        if (local == null) {
            pending.add(definition.name());
            return definition;
        }
        if (!local.equals(definition)) {
            throw new TopicConflictException(local, definition, "defined earlier in this application");
        }
        return local;
    }

    /**
     * Registers in Redis what {@link #defineLocally} kept. A definition that conflicts with Redis's is withdrawn
     * (sends and new consumers of that topic then fail with the conflict) and returned; one that could not be
     * registered (Redis gone again) stays pending and the failure is thrown.
     */
    public List<TopicConflictException> registerPending() {
        List<TopicConflictException> found = new ArrayList<>();
        for (String name : List.copyOf(pending)) {
            TopicDefinition definition = topics.get(name);
            TopicDefinition registered = redisRegistration.apply(definition);
            pending.remove(name);
            if (!registered.equals(definition)) {
                TopicConflictException conflict = new TopicConflictException(registered, definition,
                        "registered in Redis");
                topics.remove(name, definition);
                conflicts.put(name, conflict);
                found.add(conflict);
            }
        }
        return found;
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
        TopicConflictException conflict = name == null ? null : conflicts.get(name);
        if (conflict != null) {
            throw new TopicConflictException(conflict.getExisting(), conflict.getRequested(), "registered in Redis");
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
