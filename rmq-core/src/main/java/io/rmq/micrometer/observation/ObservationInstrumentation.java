package io.rmq.micrometer.observation;

import java.util.HashMap;
import java.util.Map;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.rmq.consumer.Delivery;
import io.rmq.observe.RmqInstrumentation;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer Observations around RMQ's work: one {@link RmqObservation#SEND} observation per send call and one
 * {@link RmqObservation#PROCESS} observation per handler call, so tracing, metrics or logging work wherever the
 * application set its {@link ObservationRegistry} up.
 *
 * <p>With {@code propagateContext}, the send observation's carrier is the map RMQ stores beside every message of the
 * send ({@link SendScope#context()}): a tracing handler injects the send span's context ({@code traceparent}) into it,
 * and the handler's observation continues that trace from {@link Delivery#context()} — hours later, on another host.
 * The consumer must read contexts too ({@code RmqOptions#propagateContext}). Only a sampled trace's context is stored
 * ({@link TraceSampling}, decided here, before anything reaches the engine): an unsampled send hands the engine an
 * empty context, so it costs what a send without propagation costs, and its listener's trace starts as its own sampler
 * decides. {@code propagateUnsampled} stores every context, for those who need every link.
 *
 * <p>The process observation is started, and its scope opened, on the handler's thread in {@link #handleStarted};
 * {@link HandleScope#handlerReturned} records the error, closes the scope and stops it, on the same thread.
 */
public final class ObservationInstrumentation implements RmqInstrumentation {

    private final ObservationRegistry registry;
    private final boolean propagateContext;
    private final boolean propagateUnsampled;
    private final @Nullable RmqSendObservationConvention sendConvention;
    private final @Nullable RmqProcessObservationConvention processConvention;

    /** Observations with the default conventions, without context propagation. */
    public ObservationInstrumentation(ObservationRegistry registry) {
        this(registry, false, false, null, null);
    }

    /**
     * Sampled traces' contexts only, when {@code propagateContext}.
     *
     * @param propagateContext  whether sends of sampled traces carry their trace context for storage beside the message
     * @param sendConvention    replaces the default send convention (null: the default)
     * @param processConvention replaces the default process convention (null: the default)
     */
    public ObservationInstrumentation(ObservationRegistry registry, boolean propagateContext,
            @Nullable RmqSendObservationConvention sendConvention,
            @Nullable RmqProcessObservationConvention processConvention) {
        this(registry, propagateContext, false, sendConvention, processConvention);
    }

    /**
     * @param propagateContext   whether sends carry their trace context for storage beside the message
     * @param propagateUnsampled with {@code propagateContext}: whether unsampled traces' contexts are stored too (false:
     *                           only sampled ones, {@link TraceSampling})
     * @param sendConvention     replaces the default send convention (null: the default)
     * @param processConvention  replaces the default process convention (null: the default)
     */
    public ObservationInstrumentation(ObservationRegistry registry, boolean propagateContext,
            boolean propagateUnsampled, @Nullable RmqSendObservationConvention sendConvention,
            @Nullable RmqProcessObservationConvention processConvention) {
        this.registry = registry;
        this.propagateContext = propagateContext;
        this.propagateUnsampled = propagateUnsampled;
        this.sendConvention = sendConvention;
        this.processConvention = processConvention;
    }

    @Override
    public SendScope sendStarted(String topic, int messages) {
        if (registry.isNoop()) {
            return SendScope.NONE;
        }
        Map<String, String> carrier = propagateContext ? new HashMap<>(4) : null;
        RmqSendContext context = new RmqSendContext(topic, messages, carrier);
        Observation observation = RmqObservation.SEND.observation(sendConvention,
                RmqSendObservationConvention.Default.INSTANCE, () -> context, registry).start();
        // the tracing handler filled the carrier when the observation started, sampling decision included
        Map<String, String> stored = carrier == null || !(propagateUnsampled || TraceSampling.sampled(carrier))
                ? Map.of() : carrier;
        return new Send(observation, stored);
    }

    private record Send(Observation observation, Map<String, String> context) implements SendScope {

        @Override
        public void finished(int added, int merged, @Nullable Throwable error) {
            if (error != null) {
                observation.error(error);
            }
            observation.stop();
        }
    }

    @Override
    public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
        if (registry.isNoop()) {
            return HandleScope.NONE;
        }
        RmqProcessContext context = new RmqProcessContext(listenerId, delivery, latenessMillis);
        Observation observation = RmqObservation.PROCESS.observation(processConvention,
                RmqProcessObservationConvention.Default.INSTANCE, () -> context, registry).start();
        return new Process(observation, observation.openScope());
    }

    private record Process(Observation observation, Observation.Scope scope) implements HandleScope {

        @Override
        public void handlerReturned(@Nullable Throwable error) {
            if (error != null) {
                observation.error(error);
            }
            scope.close();
            observation.stop();
        }
    }
}
