package io.rmq.spring.listener;

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
 * @param payloadType what the body is converted to
 * @param handler     the handler
 * @param description where the endpoint comes from, for error messages (e.g. {@code bean 'x' method 'y'})
 */
public record RmqListenerEndpoint(String id, String topic, TopicDefinition definition, ConsumerSettings settings,
        int concurrency, boolean autoStartup, Type payloadType, MessageHandler<?> handler, String description) {
}
