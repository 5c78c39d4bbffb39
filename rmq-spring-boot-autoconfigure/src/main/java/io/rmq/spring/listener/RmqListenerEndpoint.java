package io.rmq.spring.listener;

import io.rmq.core.ConsumeMode;
import io.rmq.core.RateLimit;
import java.lang.reflect.Type;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.MessageHandler;
import io.rmq.core.TopicDefinition;

/**
 * Everything needed to build one listener container.
 *
 * @param id          container id
 * @param topic       topic name
 * @param definition  topic definition made by the listener itself, or null (defined elsewhere)
 * @param settings    pop and retry settings
 * @param concurrency handler threads
 * @param autoStartup whether the container starts with the context
 * @param payloadType what the body is converted to (a batch listener's: each element's)
 * @param handler     the handler; a batch listener's is also a {@link io.rmq.consumer.BatchMessageHandler}, which
 *                    makes the factory build a batch container
 * @param description where the endpoint comes from, for error messages (e.g. {@code bean 'x' method 'y'})
 * @param mode        CONCURRENT or ORDERLY
 * @param rateLimit   the topic's cluster-wide rate limit, or null
 */
public record RmqListenerEndpoint(String id, String topic, TopicDefinition definition, ConsumerSettings settings,
        int concurrency, boolean autoStartup, Type payloadType, MessageHandler<?> handler, String description,
        ConsumeMode mode, RateLimit rateLimit) {

    public RmqListenerEndpoint(String id, String topic, TopicDefinition definition, ConsumerSettings settings,
            int concurrency, boolean autoStartup, Type payloadType, MessageHandler<?> handler, String description) {
        this(id, topic, definition, settings, concurrency, autoStartup, payloadType, handler, description,
                ConsumeMode.CONCURRENT, null);
    }
}
