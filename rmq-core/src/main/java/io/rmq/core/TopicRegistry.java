package io.rmq.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Topic definitions known to this process, each checked once against the cluster-wide registry in Redis.
 * Conflicts (here or in Redis) fail with both definitions named. Definitions agree when type and slot amount are equal
 * and their consume modes do not differ ({@link TopicDefinition#agreesWith}): a definition without a mode (a
 * producer's) agrees with any; a listener declares its mode ({@code Rmq.declareConsumeMode}), which the first one
 * fixes.
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
            if (!sameShape(local, definition)) {
                throw new TopicConflictException(local, definition, "defined earlier in this application");
            }
            if (definition.mode() == null || definition.mode() == local.mode()) {
                return local;
            }
            // another mode than known here: Redis decides (RmqAdmin may have changed it since)
        }
        TopicDefinition registered = redisRegistration.apply(definition);
        if (!registered.agreesWith(definition)) {
            throw new TopicConflictException(registered, definition, "registered in Redis");
        }
        // what Redis holds, with the mode a listener declared there (or earlier) when this definition has none
        TopicDefinition known = definition.mode() == null ? registered : definition;
        return topics.merge(definition.name(), known, (raced, mine) -> {
            if (!sameShape(raced, mine)) {
                throw new TopicConflictException(raced, mine, "defined concurrently in this application");
            }
            return mine.mode() != null ? mine : raced;
        });
    }

    private static boolean sameShape(TopicDefinition a, TopicDefinition b) {
        return a.type() == b.type() && a.slotAmount() == b.slotAmount();
    }

    /** Replaces what this process knows of a topic by what Redis now holds (after its consume mode was changed). */
    public void redefined(TopicDefinition registered) {
        topics.put(registered.name(), registered);
    }

    /**
     * Takes the consume mode Redis holds for a topic this process knows without one (a producer's definition, made
     * before any listener declared the mode): cached definitions are never re-read otherwise. Ignored when this process knows
     * a mode by now, or knows the topic in another shape (a conflict is reported where the topic is defined).
     *
     * @param registered what Redis holds for the topic
     */
    public void modeLearned(TopicDefinition registered) {
        if (registered.mode() == null) {
            return;
        }
        topics.computeIfPresent(registered.name(), (name, local) -> local.mode() == null && sameShape(local, registered)
                ? local.withMode(registered.mode()) : local);
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
        if (!local.agreesWith(definition)) {
            throw new TopicConflictException(local, definition, "defined earlier in this application");
        }
        if (definition.mode() != null && local.mode() == null) {
            topics.put(definition.name(), definition);
            pending.add(definition.name());
            return definition;
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
            if (!registered.agreesWith(definition)) {
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
