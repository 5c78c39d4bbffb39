package io.rmq.instances.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.consumer.Delivery;
import io.rmq.observe.RmqInstrumentation;
import org.jspecify.annotations.Nullable;

/**
 * The handler calls running now, for the instance's description: an entry from {@link #handleStarted} to its
 * {@link HandleScope#handlerReturned} (same thread). Written by handler threads, read by the heartbeat thread; the map
 * is the only shared state. The hot path only stores references: digests are made by the reader.
 */
final class BusyHandlers implements RmqInstrumentation {

    /** One handler call under way. */
    record Call(String listener, Delivery delivery, Thread thread, long since) {
    }

    private final Map<Object, Call> calls = new ConcurrentHashMap<>();

    /** Uses no lateness (it reads its own start time, for the description). */
    @Override
    public boolean timed() {
        return false;
    }

    @Override
    public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
        Object key = new Object();
        calls.put(key, new Call(listenerId, delivery, Thread.currentThread(), System.currentTimeMillis()));
        return new HandleScope() {
            @Override
            public void handlerReturned(@Nullable Throwable error) {
                calls.remove(key);
            }
        };
    }

    /** The calls under way now, oldest first. */
    List<Call> now() {
        List<Call> out = new ArrayList<>(calls.values());
        out.sort(java.util.Comparator.comparingLong(Call::since));
        return out;
    }
}
