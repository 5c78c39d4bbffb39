package io.rmq.producer.internal;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Learns the consume mode of topics this process knows without one, so that a producer that defined a topic before any
 * listener declared it ORDERLY (rmq.topics, or started first) stores groups once Redis has the mode: the registry
 * caches a definition for good. A sender asks {@link #lookUp} when it sends a grouped message to such a topic; at most
 * one lookup per topic runs per period, without waiting on the sender's thread (the reply updates the registry on
 * Lettuce's thread). Thread-safe: any sending thread calls it; the per-topic due times are a concurrent map that only
 * a compare-and-set advances, so of the senders that find a lookup due exactly one starts it.
 */
public final class ModeLookups {

    private static final Logger log = LoggerFactory.getLogger(ModeLookups.class);

    /** How often a topic without a known mode is looked up at most: cheap for Redis, soon enough for a sender. */
    public static final Duration PERIOD = Duration.ofSeconds(10);

    private final Function<String, CompletableFuture<@Nullable TopicDefinition>> lookup;
    private final TopicRegistry topics;
    private final long periodNanos;
    /** Per topic name, {@link System#nanoTime()} from which the next lookup may start. */
    private final Map<String, Long> nextLookup = new ConcurrentHashMap<>();

    /**
     * @param lookup the definition Redis holds for a name (null: none), without blocking the caller
     */
    public ModeLookups(Function<String, CompletableFuture<@Nullable TopicDefinition>> lookup, TopicRegistry topics,
            Duration period) {
        this.lookup = lookup;
        this.topics = topics;
        this.periodNanos = period.toNanos();
    }

    /** Looks up {@code topic}'s definition in Redis unless a lookup of it started less than a period ago. */
    public void lookUp(String topic) {
        long now = System.nanoTime();
        Long due = nextLookup.get(topic);
        if (due != null && now - due < 0) {
            return;
        }
        boolean mine = due == null ? nextLookup.putIfAbsent(topic, now + periodNanos) == null
                : nextLookup.replace(topic, due, now + periodNanos);
        if (!mine) {
            return; // another sender started it just now
        }
        CompletableFuture<@Nullable TopicDefinition> found;
        try {
            found = lookup.apply(topic);
        }
        catch (RuntimeException ex) {
            // Redis unreachable: the send that asked fails on its own; the next period tries again
            log.debug("RMQ could not look up the consume mode of topic '{}'", topic, ex);
            return;
        }
        found.whenComplete((registered, error) -> {
            if (error != null) {
                log.debug("RMQ could not look up the consume mode of topic '{}'", topic, error);
            }
            else if (registered != null) {
                topics.modeLearned(registered);
            }
        });
    }
}
