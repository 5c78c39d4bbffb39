package io.rmq.container;

import java.lang.reflect.Type;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.redis.internal.WakeUpSubscriber;

/** Runs one listener on one topic: {@link RmqListenerContainer} (CONCURRENT) or {@link OrderlyListenerContainer}. */
public interface ListenerContainer {

    String id();

    String topic();

    ConsumeMode mode();

    boolean isRunning();

    void start();

    /** Graceful stop; returns when the container has stopped (or its shutdown timeout has passed). */
    void stop();

    /**
     * Stops taking new messages while staying started: deliveries in hand are handled and settled, leases of running
     * handlers keep being extended, ORDERLY slots stay owned (their in-hand messages finish, no new ones are taken),
     * and the watchdog does not count the pause as a stall. Returns once nothing more will be taken (at most about the
     * command timeout later). Idempotent; a stopped container started again stays paused until {@link #resume()}.
     */
    void pause();

    /** Takes messages again after {@link #pause()}, at once (the poller or the slots' threads are woken). Idempotent. */
    void resume();

    /** True between {@link #pause()} and {@link #resume()} (also while stopped, if it was paused). */
    boolean isPaused();

    /** How many handler threads (CONCURRENT) or at most how many slots at once (ORDERLY) this container runs. */
    int concurrency();

    /** ORDERLY: the slots this container owns now (sorted); CONCURRENT: empty (every consumer pops every slot). */
    default java.util.Set<Integer> ownedSlots() {
        return java.util.Set.of();
    }

    /** ORDERLY: owned slots whose head failed and waits for its retry (sorted); CONCURRENT: empty. */
    default java.util.Set<Integer> suspendedSlots() {
        return java.util.Set.of();
    }

    /**
     * What the last {@link #stop()} handed back: CONCURRENT, fetched messages it had not started, returned to the store
     * (no attempt counted); ORDERLY, the slots it released for other instances to take over at once.
     */
    default int handedBackOnStop() {
        return 0;
    }

    /**
     * What the last {@link #stop()} left behind because handlers still ran after the shutdown timeout: CONCURRENT,
     * those messages (redelivered after their lease); ORDERLY, those slots (taken over when their ownership runs out).
     */
    default int abandonedOnStop() {
        return 0;
    }

    /** Stalls the container's watchdog found and repaired (zero in a healthy container; each is logged as an ERROR). */
    long stallsRepaired();

    /**
     * The container for {@code options.mode()}; {@code coordinator} is used by ORDERLY containers only. Not API (it
     * takes engine internals): use {@link io.rmq.Rmq#container}.
     */
    static <T> ListenerContainer create(RmqConsumer consumer, WakeUpSubscriber wakeUps, SlotCoordinator coordinator,
            Type payloadType, MessageHandler<T> handler, ContainerOptions options) {
        return options.mode() == ConsumeMode.ORDERLY
                ? new OrderlyListenerContainer(consumer, wakeUps, coordinator, payloadType, handler, options)
                : new RmqListenerContainer(consumer, wakeUps, payloadType, handler, options);
    }

    /**
     * A CONCURRENT container in batch mode: {@code handler} gets one slot's deliveries of one pop at a time (see
     * {@link BatchMessageHandler}). Fails with {@link io.rmq.core.RmqInvalidArgumentException} naming the listener
     * when {@code options.mode()} is ORDERLY (an ordered slot is handled one message after another). Not API (it
     * takes engine internals): use {@link io.rmq.Rmq#batchContainer}.
     */
    static <T> ListenerContainer createBatch(RmqConsumer consumer, WakeUpSubscriber wakeUps, Type payloadType,
            BatchMessageHandler<T> handler, ContainerOptions options) {
        return new RmqListenerContainer(consumer, wakeUps, payloadType, handler, options);
    }
}
