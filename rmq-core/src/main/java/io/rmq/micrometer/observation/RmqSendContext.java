package io.rmq.micrometer.observation;

import java.util.Map;

import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.SenderContext;
import org.jspecify.annotations.Nullable;

/**
 * The context of one send call's observation (a single send, or one topic's part of a batch). Its carrier is the
 * trace context RMQ stores beside every message of the send when propagation is on (a tracing handler injects
 * {@code traceparent} into it when the observation starts) and the trace is sampled ({@link TraceSampling}, unless
 * unsampled contexts are stored too); null when propagation is off.
 */
public class RmqSendContext extends SenderContext<Map<String, String>> {

    private final String topic;
    private final int messages;

    public RmqSendContext(String topic, int messages, @Nullable Map<String, String> carrier) {
        super((map, key, value) -> {
            if (map != null) {
                map.put(key, value);
            }
        }, Kind.PRODUCER);
        this.topic = topic;
        this.messages = messages;
        setCarrier(carrier);
        setRemoteServiceName("rmq");
    }

    /** The topic sent to. */
    public String topic() {
        return topic;
    }

    /** How many messages this send call carries (1 for a single send). */
    public int messages() {
        return messages;
    }
}
