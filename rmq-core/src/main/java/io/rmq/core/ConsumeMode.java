package io.rmq.core;

/** How a listener consumes a topic. */
public enum ConsumeMode {

    /**
     * Any consumer instance and thread takes any due message; a failed message is retried after its backoff while
     * later ones go on. The fastest mode.
     */
    CONCURRENT,

    /**
     * Each slot is owned by one consumer instance at a time (across every JVM on the same Redis) and handled by one
     * thread, one message at a time, in the topic type's order; a failed message suspends its slot until its retry.
     * Messages sent with the same {@code slotBasis} are therefore handled serially, in order. As RocketMQ's
     * {@code ConsumeMode.ORDERLY}.
     */
    ORDERLY
}
