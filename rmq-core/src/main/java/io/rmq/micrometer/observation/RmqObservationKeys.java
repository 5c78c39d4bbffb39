package io.rmq.micrometer.observation;

import io.micrometer.common.docs.KeyName;

/**
 * The keys of {@link RmqObservation}'s observations, low- and high-cardinality, for each observation; the default
 * conventions ({@link RmqSendObservationConvention}, {@link RmqProcessObservationConvention}) and custom ones set
 * them. Stateless.
 */
public final class RmqObservationKeys {

    private RmqObservationKeys() {
    }

    /** Low-cardinality keys of {@link RmqObservation#SEND}. */
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

    /** High-cardinality keys of {@link RmqObservation#SEND}. */
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

    /** Low-cardinality keys of {@link RmqObservation#PROCESS}. */
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

    /** High-cardinality keys of {@link RmqObservation#PROCESS}. */
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
