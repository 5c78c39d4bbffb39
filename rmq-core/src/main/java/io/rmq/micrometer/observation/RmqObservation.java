package io.rmq.micrometer.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * RMQ's observations: one per send call and one per handler call. Names and keys follow OpenTelemetry's messaging
 * conventions ({@code messaging.*}); the contextual (span) names are OTel's {@code "<operation> <destination>"}.
 * Their keys are {@link RmqObservationKeys}.
 */
public enum RmqObservation implements ObservationDocumentation {

    /** One send call: a single send, or one topic's part of a batch. */
    SEND {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return RmqSendObservationConvention.Default.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return RmqObservationKeys.SendLowCardinalityKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return RmqObservationKeys.SendHighCardinalityKeys.values();
        }
    },

    /** One handler call of a listener, from its start to its return (the settlement with Redis is not included). */
    PROCESS {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return RmqProcessObservationConvention.Default.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return RmqObservationKeys.ProcessLowCardinalityKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return RmqObservationKeys.ProcessHighCardinalityKeys.values();
        }
    };
}
