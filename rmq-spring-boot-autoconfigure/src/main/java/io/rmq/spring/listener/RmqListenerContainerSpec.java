package io.rmq.spring.listener;

import java.util.Objects;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.container.ContainerOptions;

/**
 * The container about to be built for one listener, as {@link RmqListenerContainerCustomizer}s see it: its pop,
 * lease and failure settings and its container options (concurrency, threads, timeouts, mode, rate limit), as the
 * annotation and the properties made them. Replace either with a modified copy ({@code with…} methods). The listener
 * id and topic are fixed.
 */
public final class RmqListenerContainerSpec {

    private final String listenerId;
    private final String topic;
    private ConsumerSettings settings;
    private ContainerOptions options;

    RmqListenerContainerSpec(String listenerId, String topic, ConsumerSettings settings, ContainerOptions options) {
        this.listenerId = listenerId;
        this.topic = topic;
        this.settings = settings;
        this.options = options;
    }

    public String listenerId() {
        return listenerId;
    }

    public String topic() {
        return topic;
    }

    public ConsumerSettings settings() {
        return settings;
    }

    public void settings(ConsumerSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    public ContainerOptions options() {
        return options;
    }

    /** New options; their id must stay the listener's id (the registry finds the container by it). */
    public void options(ContainerOptions options) {
        Objects.requireNonNull(options, "options");
        if (!options.id().equals(listenerId)) {
            throw new IllegalArgumentException("A customizer of listener '" + listenerId
                    + "' cannot change the container id (to '" + options.id() + "'): set @RmqListener(id) instead");
        }
        this.options = options;
    }
}
