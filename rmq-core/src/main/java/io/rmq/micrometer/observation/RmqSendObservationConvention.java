package io.rmq.micrometer.observation;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.rmq.micrometer.observation.RmqObservationKeys.SendHighCardinalityKeys;
import io.rmq.micrometer.observation.RmqObservationKeys.SendLowCardinalityKeys;

/**
 * Names and key values of the send observation. Every method has a default; implement this interface (overriding
 * what you change) and declare it as a bean, or pass it to {@link ObservationInstrumentation}, to replace the
 * default. Keep low-cardinality values bounded: never a body or an id.
 */
public interface RmqSendObservationConvention extends ObservationConvention<RmqSendContext> {

    /** Observation name; also the base name of the meters Micrometer's observation handlers derive from it. */
    String NAME = "rmq.send";

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof RmqSendContext;
    }

    @Override
    default String getName() {
        return NAME;
    }

    /** OpenTelemetry's span name for messaging: {@code "send <topic>"}. */
    @Override
    default String getContextualName(RmqSendContext context) {
        return "send " + context.topic();
    }

    @Override
    default KeyValues getLowCardinalityKeyValues(RmqSendContext context) {
        Throwable error = context.getError();
        return KeyValues.of(
                SendLowCardinalityKeys.MESSAGING_SYSTEM.withValue("rmq"),
                SendLowCardinalityKeys.MESSAGING_DESTINATION_NAME.withValue(context.topic()),
                SendLowCardinalityKeys.MESSAGING_OPERATION_NAME.withValue("send"),
                SendLowCardinalityKeys.ERROR_TYPE.withValue(error == null ? "none" : error.getClass().getSimpleName()));
    }

    @Override
    default KeyValues getHighCardinalityKeyValues(RmqSendContext context) {
        return KeyValues.of(SendHighCardinalityKeys.MESSAGING_BATCH_MESSAGE_COUNT.withValue(
                Integer.toString(context.messages())));
    }

    /** The default convention (everything as above). */
    final class Default implements RmqSendObservationConvention {

        public static final Default INSTANCE = new Default();
    }
}
