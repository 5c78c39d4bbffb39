package io.rmq.micrometer.observation;

import java.util.Map;

import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.ReceiverContext;
import io.rmq.consumer.Delivery;

/**
 * The context of one handler call's observation. Its carrier is the trace context the sender stored beside the
 * message ({@link Delivery#context()}; empty unless propagation is on), from which a tracing handler continues the
 * sender's trace.
 */
public class RmqProcessContext extends ReceiverContext<Map<String, String>> {

    private final String listenerId;
    private final Delivery delivery;
    private final long latenessMillis;

    public RmqProcessContext(String listenerId, Delivery delivery, long latenessMillis) {
        super((map, key) -> map == null ? null : map.get(key), Kind.CONSUMER);
        this.listenerId = listenerId;
        this.delivery = delivery;
        this.latenessMillis = latenessMillis;
        setCarrier(delivery.context());
        setRemoteServiceName("rmq");
    }

    /** The listener (container) id. */
    public String listenerId() {
        return listenerId;
    }

    /** The topic the message came from. */
    public String topic() {
        return delivery.topic();
    }

    /** The delivery being handled (its body is not put into any key value). */
    public Delivery delivery() {
        return delivery;
    }

    /**
     * The handler's start minus the message's due time (ms) for time-typed topics, {@link Long#MIN_VALUE} for
     * PRIORITY topics.
     */
    public long latenessMillis() {
        return latenessMillis;
    }
}
