package io.rmq.container.internal;

import java.lang.reflect.Type;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.OrderlyListenerContainer;
import io.rmq.container.RmqListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.core.internal.Seam;
import io.rmq.redis.internal.WakeUpSubscriber;

/**
 * Makes the {@link io.rmq.Rmq} facade's listener containers (and the benchmarks' and tests'): the containers'
 * constructors take engine internals and are not public, so {@link RmqListenerContainer} and
 * {@link OrderlyListenerContainer} register their constructors here when they are initialized. Stateless.
 */
public final class ListenerContainers {

    /** What {@link RmqListenerContainer} registers: its constructor for a per-message handler. */
    @FunctionalInterface
    public interface Concurrent {

        <T> RmqListenerContainer create(RmqConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
                MessageHandler<T> handler, ContainerOptions options);
    }

    /** What {@link RmqListenerContainer} registers: its constructor for a batch handler. */
    @FunctionalInterface
    public interface Batch {

        <T> RmqListenerContainer create(RmqConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
                BatchMessageHandler<T> handler, ContainerOptions options);
    }

    /** What {@link OrderlyListenerContainer} registers: its constructor. */
    @FunctionalInterface
    public interface Orderly {

        <T> OrderlyListenerContainer create(RmqConsumer consumer, WakeUpSubscriber wakeUps,
                SlotCoordinator coordinator, Type payloadType, MessageHandler<T> handler, ContainerOptions options);
    }

    public static final Seam<Concurrent> CONCURRENT = new Seam<>(RmqListenerContainer.class);
    public static final Seam<Batch> BATCH = new Seam<>(RmqListenerContainer.class);
    public static final Seam<Orderly> ORDERLY = new Seam<>(OrderlyListenerContainer.class);

    private ListenerContainers() {
    }

    /** The container for {@code options.mode()}; {@code coordinator} is used by ORDERLY containers only. */
    public static <T> ListenerContainer create(RmqConsumer consumer, WakeUpSubscriber wakeUps,
            SlotCoordinator coordinator, Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        return options.mode() == ConsumeMode.ORDERLY
                ? ORDERLY.get().create(consumer, wakeUps, coordinator, payloadType, handler, options)
                : concurrent(consumer, wakeUps, payloadType, handler, options);
    }

    /** A CONCURRENT container with a per-message handler, whatever {@code options.mode()} says. */
    public static <T> RmqListenerContainer concurrent(RmqConsumer consumer, WakeUpSubscriber wakeUps,
            Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        return CONCURRENT.get().create(consumer, wakeUps, payloadType, handler, options);
    }

    /**
     * A CONCURRENT container in batch mode: {@code handler} gets one slot's deliveries of one pop at a time (see
     * {@link BatchMessageHandler}). Fails with {@link io.rmq.core.RmqInvalidArgumentException} naming the listener
     * when {@code options.mode()} is ORDERLY (an ordered slot is handled one message after another).
     */
    public static <T> RmqListenerContainer createBatch(RmqConsumer consumer, WakeUpSubscriber wakeUps,
            Type payloadType, BatchMessageHandler<T> handler, ContainerOptions options) {
        return BATCH.get().create(consumer, wakeUps, payloadType, handler, options);
    }
}
