package io.rmq.spring.listener;

import java.util.Objects;

/**
 * Adjusts the containers {@link RmqListenerContainerFactory} builds, instead of replacing the factory (as Spring
 * Kafka's {@code ContainerCustomizer}). Every bean of this type is applied to every listener's container, in
 * {@link org.springframework.core.annotation.Order @Order} / {@link org.springframework.core.Ordered} order, after the
 * annotation's attributes and the {@code rmq.*} properties were resolved, so a customizer has the last word; use
 * {@link #forListener} to customize one listener by its id.
 * <p>
 * The container is described by a {@link RmqListenerContainerSpec} (its engine {@code ConsumerSettings} and
 * {@code ContainerOptions}); the container is built from what the customizers leave there.
 */
@FunctionalInterface
public interface RmqListenerContainerCustomizer {

    void customize(RmqListenerContainerSpec container);

    /** A customizer applied only to the container of the listener with this id (e.g. {@code orders.close}). */
    static RmqListenerContainerCustomizer forListener(String listenerId, RmqListenerContainerCustomizer customizer) {
        Objects.requireNonNull(listenerId, "listenerId");
        Objects.requireNonNull(customizer, "customizer");
        return container -> {
            if (container.listenerId().equals(listenerId)) {
                customizer.customize(container);
            }
        };
    }
}
