package io.rmq.container.internal;

import java.lang.reflect.Type;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.SlotConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.redis.internal.WakeUpSubscriber;

/**
 * Makes the {@link io.rmq.Rmq} facade's listener containers (and the benchmarks' and tests'). Stateless.
 */
public final class ListenerContainers {

    private ListenerContainers() {
    }

    /** The containers' port to a consumer made by {@link io.rmq.Rmq#consumer} (every engine consumer is one). */
    private static SlotConsumer port(RmqConsumer consumer) {
        if (consumer instanceof SlotConsumer port) {
            return port;
        }
        throw new io.rmq.core.RmqInvalidArgumentException("consumer", consumer, "must be made by Rmq.consumer");
    }

    /** The container for {@code options.mode()}; {@code coordinator} is used by ORDERLY containers only. */
    public static <T> ListenerContainer create(RmqConsumer consumer, WakeUpSubscriber wakeUps,
            SlotCoordinator coordinator, Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        return options.mode() == ConsumeMode.ORDERLY
                ? new OrderlyListenerContainer(port(consumer), wakeUps, coordinator, payloadType, handler, options)
                : concurrent(consumer, wakeUps, payloadType, handler, options);
    }

    /** A CONCURRENT container with a per-message handler, whatever {@code options.mode()} says. */
    public static <T> RmqListenerContainer concurrent(RmqConsumer consumer, WakeUpSubscriber wakeUps,
            Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        return new RmqListenerContainer(port(consumer), wakeUps, payloadType, handler, options);
    }

    /**
     * A CONCURRENT container in batch mode: {@code handler} gets one slot's deliveries of one pop at a time (see
     * {@link BatchMessageHandler}). Fails with {@link io.rmq.core.RmqInvalidArgumentException} naming the listener
     * when {@code options.mode()} is ORDERLY (an ordered slot is handled one message after another).
     */
    public static <T> RmqListenerContainer createBatch(RmqConsumer consumer, WakeUpSubscriber wakeUps,
            Type payloadType, BatchMessageHandler<T> handler, ContainerOptions options) {
        return new RmqListenerContainer(port(consumer), wakeUps, payloadType, handler, options);
    }
}
