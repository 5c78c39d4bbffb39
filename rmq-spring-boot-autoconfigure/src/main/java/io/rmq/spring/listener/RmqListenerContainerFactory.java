package io.rmq.spring.listener;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;

import io.rmq.Rmq;
import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.RmqErrorHandler;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.DeadLetterRetention;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RateLimit;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

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
    private final SlotCoordinator coordinator;
    private final Duration ownershipTimeout;
    private final Function<String, ConsumeMode> modeByListener;
    private final Function<String, RateLimit> rateLimitByTopic;
    private volatile @Nullable RmqErrorHandler defaultErrorHandler;
    private volatile List<RmqListenerContainerCustomizer> customizers = List.of();
    private volatile Function<String, @Nullable DeadLetterRetention> deadLettersByTopic = topic -> null;

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
        this(rmq, defaultSettings, defaultConcurrency, threadFactory, maxIdle, shutdownTimeout, commandTimeout,
                rmq.slotCoordinator(), ContainerOptions.DEFAULT_OWNERSHIP_TIMEOUT, id -> null, topic -> null);
    }

    /**
     * @param coordinator      shares the slots of ORDERLY listeners among instances
     * @param ownershipTimeout how long a dead ORDERLY instance keeps its slots
     * @param modeByListener   the mode configured for a listener id ({@code rmq.listeners.<id>.mode}), or null
     * @param rateLimitByTopic the rate limit configured for a topic ({@code rmq.topics.<name>.rate-limit}), or null
     */
    public RmqListenerContainerFactory(Rmq rmq, ConsumerSettings defaultSettings, int defaultConcurrency,
            ThreadFactory threadFactory, Duration maxIdle, Duration shutdownTimeout, Duration commandTimeout,
            SlotCoordinator coordinator, Duration ownershipTimeout, Function<String, ConsumeMode> modeByListener,
            Function<String, RateLimit> rateLimitByTopic) {
        this.coordinator = coordinator;
        this.ownershipTimeout = ownershipTimeout;
        this.modeByListener = modeByListener;
        this.rateLimitByTopic = rateLimitByTopic;
        this.rmq = rmq;
        this.defaultSettings = defaultSettings;
        this.defaultConcurrency = defaultConcurrency;
        this.threadFactory = threadFactory;
        this.maxIdle = maxIdle;
        this.shutdownTimeout = shutdownTimeout;
        this.commandTimeout = commandTimeout;
    }

    /** The error handler of listeners that name none (null: the standard decision). */
    public @Nullable RmqErrorHandler getDefaultErrorHandler() {
        return defaultErrorHandler;
    }

    public void setDefaultErrorHandler(@Nullable RmqErrorHandler defaultErrorHandler) {
        this.defaultErrorHandler = defaultErrorHandler;
    }

    /** The customizers applied, in this order, to every container this factory builds. */
    public List<RmqListenerContainerCustomizer> getContainerCustomizers() {
        return customizers;
    }

    public void setContainerCustomizers(List<RmqListenerContainerCustomizer> customizers) {
        this.customizers = List.copyOf(customizers);
    }

    /**
     * The dead-letter retention configured for a topic ({@code rmq.topics.<name>.dead-letter-max-count} and
     * {@code -max-age}), or null for none: then a listener keeps its settings' retention.
     */
    public void setDeadLettersByTopic(Function<String, @Nullable DeadLetterRetention> deadLettersByTopic) {
        this.deadLettersByTopic = deadLettersByTopic;
    }

    /** The dead-letter retention of a listener of {@code topic}: the topic's own, else the default settings'. */
    public DeadLetterRetention deadLetters(String topic) {
        DeadLetterRetention configured = deadLettersByTopic.apply(topic);
        return configured != null ? configured : defaultSettings.retry().deadLetters();
    }

    public ConsumerSettings getDefaultSettings() {
        return defaultSettings;
    }

    public int getDefaultConcurrency() {
        return defaultConcurrency;
    }

    /**
     * A factory like this one (same engine, threads, timeouts, error handler and customizers) whose listeners handle
     * on {@code concurrency} threads unless they set their own: the start of a second factory bean that
     * {@code @RmqListener(containerFactory = "...")} names.
     */
    public RmqListenerContainerFactory withDefaultConcurrency(int concurrency) {
        return copy(defaultSettings, concurrency);
    }

    /** A factory like this one whose listeners pop and retry with {@code settings} unless they set their own. */
    public RmqListenerContainerFactory withDefaultSettings(ConsumerSettings settings) {
        return copy(settings, defaultConcurrency);
    }

    private RmqListenerContainerFactory copy(ConsumerSettings settings, int concurrency) {
        RmqListenerContainerFactory copy = new RmqListenerContainerFactory(rmq, settings, concurrency, threadFactory,
                maxIdle, shutdownTimeout, commandTimeout, coordinator, ownershipTimeout, modeByListener,
                rateLimitByTopic);
        copy.setDefaultErrorHandler(defaultErrorHandler);
        copy.setContainerCustomizers(customizers);
        copy.setDeadLettersByTopic(deadLettersByTopic);
        return copy;
    }

    /** The mode configured for a listener id in properties, or null. */
    public @Nullable ConsumeMode configuredMode(String listenerId) {
        return modeByListener.apply(listenerId);
    }

    /** The rate limit configured for a topic in properties, or null. */
    public @Nullable RateLimit configuredRateLimit(String topic) {
        return rateLimitByTopic.apply(topic);
    }

    /**
     * Defines the endpoint's topic when it carries a definition, then builds its container (not started), as the
     * {@linkplain #setContainerCustomizers customizers} leave its settings and options.
     */
    public ListenerContainer createContainer(RmqListenerEndpoint endpoint) {
        if (endpoint.definition() != null) {
            rmq.defineTopic(endpoint.definition());
        }
        RmqListenerContainerSpec spec = new RmqListenerContainerSpec(endpoint.id(), endpoint.topic(),
                endpoint.settings(), new ContainerOptions(endpoint.id(), endpoint.concurrency(), maxIdle,
                        shutdownTimeout, threadFactory, commandTimeout, endpoint.mode(), endpoint.rateLimit(),
                        ownershipTimeout));
        for (RmqListenerContainerCustomizer customizer : customizers) {
            customizer.customize(spec);
        }
        if (endpoint.handler() instanceof BatchMessageHandler<?> batch) {
            return batchContainer(endpoint, spec, batch);
        }
        @SuppressWarnings("unchecked")
        MessageHandler<Object> handler = (MessageHandler<Object>) endpoint.handler();
        return rmq.container(endpoint.topic(), spec.settings(), endpoint.payloadType(), handler, spec.options(),
                coordinator);
    }

    /**
     * A batch listener's container (its handler is also a {@link BatchMessageHandler}; the endpoint's payload type is
     * then the element type): CONCURRENT only, the engine refuses ORDERLY options (a customizer's too).
     */
    private ListenerContainer batchContainer(RmqListenerEndpoint endpoint, RmqListenerContainerSpec spec,
            BatchMessageHandler<?> batch) {
        @SuppressWarnings("unchecked")
        BatchMessageHandler<Object> handler = (BatchMessageHandler<Object>) batch;
        return rmq.batchContainer(endpoint.topic(), spec.settings(), endpoint.payloadType(), handler, spec.options());
    }
}
