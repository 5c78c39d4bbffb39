package io.rmq.micrometer.observation;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.rmq.micrometer.observation.RmqObservationKeys.ProcessHighCardinalityKeys;
import io.rmq.micrometer.observation.RmqObservationKeys.ProcessLowCardinalityKeys;

/**
 * Names and key values of the handler (process) observation. Every method has a default; implement this interface
 * (overriding what you change) and declare it as a bean, or pass it to {@link ObservationInstrumentation}, to replace
 * the default. Keep low-cardinality values bounded: never a body, a slot or an attempt.
 */
public interface RmqProcessObservationConvention extends ObservationConvention<RmqProcessContext> {

    /** Observation name; also the base name of the meters Micrometer's observation handlers derive from it. */
    String NAME = "rmq.process";

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof RmqProcessContext;
    }

    @Override
    default String getName() {
        return NAME;
    }

    /** OpenTelemetry's span name for messaging: {@code "process <topic>"}. */
    @Override
    default String getContextualName(RmqProcessContext context) {
        return "process " + context.topic();
    }

    @Override
    default KeyValues getLowCardinalityKeyValues(RmqProcessContext context) {
        Throwable error = context.getError();
        return KeyValues.of(
                ProcessLowCardinalityKeys.MESSAGING_SYSTEM.withValue("rmq"),
                ProcessLowCardinalityKeys.MESSAGING_DESTINATION_NAME.withValue(context.topic()),
                ProcessLowCardinalityKeys.MESSAGING_OPERATION_NAME.withValue("process"),
                ProcessLowCardinalityKeys.RMQ_LISTENER_ID.withValue(context.listenerId()),
                ProcessLowCardinalityKeys.ERROR_TYPE.withValue(error == null ? "none"
                        : error.getClass().getSimpleName()));
    }

    @Override
    default KeyValues getHighCardinalityKeyValues(RmqProcessContext context) {
        return KeyValues.of(
                ProcessHighCardinalityKeys.RMQ_SLOT.withValue(Integer.toString(context.delivery().slot())),
                ProcessHighCardinalityKeys.RMQ_DELIVERY_ATTEMPT.withValue(
                        Integer.toString(context.delivery().attempt())));
    }

    /** The default convention (everything as above). */
    final class Default implements RmqProcessObservationConvention {

        public static final Default INSTANCE = new Default();
    }
}
