package io.rmq.spring.operations;

import java.util.Map;
import java.util.TreeMap;

import io.rmq.Rmq;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import io.rmq.internal.RmqInternals;
import io.rmq.redis.internal.RedisGateway;
import org.jspecify.annotations.Nullable;

/**
 * Which topics the operations know: those defined here and those registered in Redis (under this key prefix). Holds
 * no state of its own; any request thread of the endpoint or the dashboard calls it.
 */
final class TopicLookup {

    private final Rmq rmq;

    TopicLookup(Rmq rmq) {
        this.rmq = rmq;
    }

    /** Every topic defined here or registered in Redis (under this key prefix), by name. */
    Map<String, TopicDefinition> topicDefinitions() {
        // Redis's registry is the cluster-wide truth (it knows the consume mode); local definitions not registered
        // yet (Redis was down at start) are shown too
        Map<String, TopicDefinition> all = new TreeMap<>(rmq.topics().all());
        all.putAll(RedisGateway.await(RmqInternals.redisAdmin(rmq).topics(), "reading the registered topics"));
        return all;
    }

    /** The topic of this name; null when it is not defined here nor registered in Redis, or is no topic name. */
    @Nullable TopicDefinition definition(String name) {
        try {
            TopicDefinition.validateName(name);
            TopicDefinition registered = RedisGateway.await(RmqInternals.redis(rmq).topic(name),
                    "reading topic " + name);
            return registered != null ? registered : rmq.topics().all().get(name);
        }
        catch (RmqInvalidArgumentException ex) {
            return null; // not a topic name at all
        }
    }

    /**
     * The topic of this name; refused naming the rule when the name breaks the naming rule, and with
     * {@link RmqNotFoundException} when it is not defined here nor registered in Redis.
     */
    TopicDefinition required(String name) {
        TopicDefinition.validateName(name);
        TopicDefinition topic = definition(name);
        if (topic == null) {
            throw RmqNotFoundException.topic(name);
        }
        return topic;
    }
}
