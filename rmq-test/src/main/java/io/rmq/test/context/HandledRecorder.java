package io.rmq.test.context;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import io.rmq.consumer.Delivery;
import io.rmq.observe.RmqInstrumentation;

/**
 * Records how each delivery of the context's listeners ended, for {@link RmqTestSupport#awaitHandled}: an
 * {@link RmqInstrumentation} bean, which RMQ's auto-configuration combines with its meters and observations. Keeps the
 * latest {@value #CAPACITY} outcomes (a cached test context may live through many test classes).
 */
final class HandledRecorder implements RmqInstrumentation {

    static final int CAPACITY = 10_000;

    private final Deque<RmqTestSupport.Handled> outcomes = new ArrayDeque<>();

    @Override
    public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
        return new HandleScope() {
            @Override
            public void settled(Outcome outcome) {
                record(new RmqTestSupport.Handled(listenerId, delivery.topic(), delivery.body(), delivery.attempt(),
                        outcome));
            }
        };
    }

    private synchronized void record(RmqTestSupport.Handled handled) {
        if (outcomes.size() == CAPACITY) {
            outcomes.removeFirst();
        }
        outcomes.addLast(handled);
    }

    synchronized List<RmqTestSupport.Handled> snapshot() {
        return new ArrayList<>(outcomes);
    }

    synchronized void clear() {
        outcomes.clear();
    }
}
