package io.rmq.container.internal;

/**
 * The names of the listener containers' loggers: one per mode, shared by the classes each container is made of, so
 * that operators tune one logger per kind of listener container. The names are a stable part of the operations
 * contract, independent of where the implementation classes live; they are compile-time constants, so a class that
 * logs under one depends on nothing here. Stateless.
 */
final class ContainerLoggers {

    /** CONCURRENT (and batch) containers: the poller, the handler threads, the lease keeper. */
    static final String CONCURRENT = "io.rmq.container.RmqListenerContainer";
    /** ORDERLY containers: the coordination thread, the steps, the lanes. */
    static final String ORDERLY = "io.rmq.container.OrderlyListenerContainer";

    private ContainerLoggers() {
    }
}
