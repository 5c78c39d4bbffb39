package io.rmq.container;

import java.lang.reflect.Type;

import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.redis.WakeUpSubscriber;

/** Runs one listener on one topic: {@link RmqListenerContainer} (CONCURRENT) or {@link OrderlyListenerContainer}. */
public interface ListenerContainer {

    String id();

    String topic();

    ConsumeMode mode();

    boolean isRunning();

    void start();

    /** Graceful stop; returns when the container has stopped (or its shutdown timeout has passed). */
    void stop();

    /** Stalls the container's watchdog found and repaired (zero in a healthy container; each is logged as an ERROR). */
    long stallsRepaired();

    /** The container for {@code options.mode()}; {@code coordinator} is used by ORDERLY containers only. */
    static <T> ListenerContainer create(RmqConsumer consumer, WakeUpSubscriber wakeUps, SlotCoordinator coordinator,
            Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        return options.mode() == ConsumeMode.ORDERLY
                ? new OrderlyListenerContainer(consumer, wakeUps, coordinator, payloadType, handler, options)
                : new RmqListenerContainer(consumer, wakeUps, payloadType, handler, options);
    }
}
