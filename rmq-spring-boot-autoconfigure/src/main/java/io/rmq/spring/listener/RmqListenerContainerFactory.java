package io.rmq.spring.listener;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;

import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.RmqConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.RmqListenerContainer;

/**
 * Builds listener containers from endpoints, with the application's thread factory and timeouts.
 */
public class RmqListenerContainerFactory {

    private final Rmq rmq;
    private final ConsumerSettings defaultSettings;
    private final int defaultConcurrency;
    private final ThreadFactory threadFactory;
    private final Duration maxIdle;
    private final Duration shutdownTimeout;
    private final Duration commandTimeout;

    /**
     * @param defaultSettings    pop and retry settings of listeners that do not set their own
     * @param defaultConcurrency handler threads of listeners that do not set their own
     * @param threadFactory      makes poller and handler threads
     * @param maxIdle            longest idle sleep before polling every slot again
     * @param shutdownTimeout    how long a stop waits for running handlers
     * @param commandTimeout     longest a container waits for a Redis reply before it moves on
     */
    public RmqListenerContainerFactory(Rmq rmq, ConsumerSettings defaultSettings, int defaultConcurrency,
            ThreadFactory threadFactory, Duration maxIdle, Duration shutdownTimeout, Duration commandTimeout) {
        this.rmq = rmq;
        this.defaultSettings = defaultSettings;
        this.defaultConcurrency = defaultConcurrency;
        this.threadFactory = threadFactory;
        this.maxIdle = maxIdle;
        this.shutdownTimeout = shutdownTimeout;
        this.commandTimeout = commandTimeout;
    }

    public ConsumerSettings getDefaultSettings() {
        return defaultSettings;
    }

    public int getDefaultConcurrency() {
        return defaultConcurrency;
    }

    /** Defines the endpoint's topic when it carries a definition, then builds its container (not started). */
    public RmqListenerContainer createContainer(RmqListenerEndpoint endpoint) {
        if (endpoint.definition() != null) {
            rmq.defineTopic(endpoint.definition());
        }
        RmqConsumer consumer = rmq.consumer(endpoint.topic(), endpoint.settings());
        return new RmqListenerContainer(consumer, rmq.wakeUps(), endpoint.payloadType(), endpoint.handler(),
                new ContainerOptions(endpoint.id(), endpoint.concurrency(), maxIdle, shutdownTimeout, threadFactory,
                        commandTimeout));
    }
}
