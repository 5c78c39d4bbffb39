package io.rmq.micrometer.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * RMQ's observations: one per send call and one per handler call. Names and keys follow OpenTelemetry's messaging
 * conventions ({@code messaging.*}); the contextual (span) names are OTel's {@code "<operation> <destination>"}.
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
            return SendLowCardinalityKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return SendHighCardinalityKeys.values();
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
            return ProcessLowCardinalityKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return ProcessHighCardinalityKeys.values();
        }
    };

    /** Low-cardinality keys of {@link #SEND}. */
    public enum SendLowCardinalityKeys implements KeyName {
        /** Always {@code rmq}. */
        MESSAGING_SYSTEM("messaging.system"),
        /** The topic. */
        MESSAGING_DESTINATION_NAME("messaging.destination.name"),
        /** Always {@code send}. */
        MESSAGING_OPERATION_NAME("messaging.operation.name"),
        /** The exception's simple class name, or {@code none}. */
        ERROR_TYPE("error.type");

        private final String key;

        SendLowCardinalityKeys(String key) {
            this.key = key;
        }

        @Override
        public String asString() {
            return key;
        }
    }

    /** High-cardinality keys of {@link #SEND}. */
    public enum SendHighCardinalityKeys implements KeyName {
        /** How many messages the send call carried (1 for a single send). */
        MESSAGING_BATCH_MESSAGE_COUNT("messaging.batch.message_count");

        private final String key;

        SendHighCardinalityKeys(String key) {
            this.key = key;
        }

        @Override
        public String asString() {
            return key;
        }
    }

    /** Low-cardinality keys of {@link #PROCESS}. */
    public enum ProcessLowCardinalityKeys implements KeyName {
        /** Always {@code rmq}. */
        MESSAGING_SYSTEM("messaging.system"),
        /** The topic. */
        MESSAGING_DESTINATION_NAME("messaging.destination.name"),
        /** Always {@code process}. */
        MESSAGING_OPERATION_NAME("messaging.operation.name"),
        /** The listener (container) id. */
        RMQ_LISTENER_ID("rmq.listener.id"),
        /** The exception's simple class name, or {@code none}. */
        ERROR_TYPE("error.type");

        private final String key;

        ProcessLowCardinalityKeys(String key) {
            this.key = key;
        }

        @Override
        public String asString() {
            return key;
        }
    }

    /** High-cardinality keys of {@link #PROCESS}. */
    public enum ProcessHighCardinalityKeys implements KeyName {
        /** The slot the message was taken from. */
        RMQ_SLOT("rmq.slot"),
        /** 1 on the first delivery, n + 1 after n failed attempts. */
        RMQ_DELIVERY_ATTEMPT("rmq.delivery.attempt");

        private final String key;

        ProcessHighCardinalityKeys(String key) {
            this.key = key;
        }

        @Override
        public String asString() {
            return key;
        }
    }
}
