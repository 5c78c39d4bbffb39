package io.rmq.observe;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.rmq.consumer.Delivery;
import org.jspecify.annotations.Nullable;

/**
 * Calls several instrumentations in order ({@link #of}), or guards one ({@link #guarded}). One that throws is logged
 * as a WARN line (no stack trace) and does not keep the others, or the engine, from their work. Immutable;
 * thread-safe as its parts are.
 */
public final class CompositeInstrumentation implements RmqInstrumentation {

    private static final Logger log = LoggerFactory.getLogger(CompositeInstrumentation.class);

    private final RmqInstrumentation[] parts;
    /** Whether any part is timed (asked once: a part's answer does not change). */
    private final boolean timed;

    private CompositeInstrumentation(RmqInstrumentation[] parts) {
        this.parts = parts;
        boolean any = false;
        for (RmqInstrumentation part : parts) {
            try {
                any |= part.timed();
            }
            catch (RuntimeException ex) {
                failed(part, "timed", ex);
                any = true; // the engine's default: measure
            }
        }
        this.timed = any;
    }

    /**
     * One instrumentation that calls each of {@code parts} in order ({@link RmqInstrumentation#NONE} for an empty
     * list); what a part throws is logged and goes no further.
     */
    public static RmqInstrumentation of(List<? extends RmqInstrumentation> parts) {
        List<? extends RmqInstrumentation> real = parts.stream().filter(p -> p != null && p != NONE).toList();
        if (real.isEmpty()) {
            return NONE;
        }
        if (real.size() == 1 && real.get(0) instanceof CompositeInstrumentation single) {
            return single;
        }
        // a single part is wrapped too: what it throws must not reach the engine (a handler scope that threw would
        // leave its delivery unsettled, redelivered after every lease, never dead)
        return new CompositeInstrumentation(real.toArray(RmqInstrumentation[]::new));
    }

    /** {@code instrumentation} with what it throws logged and kept from the engine (NONE stays NONE). */
    public static RmqInstrumentation guarded(RmqInstrumentation instrumentation) {
        return instrumentation == null ? NONE : of(List.of(instrumentation));
    }

    private static void failed(Object part, String method, RuntimeException ex) {
        log.warn("RMQ instrumentation {} failed in {}: {}", part.getClass().getName(), method, ex.toString());
    }

    /** Calls {@code event} on every part; what one throws is logged and does not keep the others from theirs. */
    private void each(String method, java.util.function.Consumer<RmqInstrumentation> event) {
        for (RmqInstrumentation part : parts) {
            try {
                event.accept(part);
            }
            catch (RuntimeException ex) {
                failed(part, method, ex);
            }
        }
    }

    @Override
    public boolean timed() {
        return timed;
    }

    @Override
    public SendScope sendStarted(String topic, int messages) {
        SendScope[] scopes = new SendScope[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                scopes[i] = parts[i].sendStarted(topic, messages);
            }
            catch (RuntimeException ex) {
                failed(parts[i], "sendStarted", ex);
            }
            if (scopes[i] == null) {
                scopes[i] = SendScope.NONE;
            }
        }
        return new SendScope() {
            @Override
            public Map<String, String> context() {
                Map<String, String> context = null;
                for (SendScope scope : scopes) {
                    Map<String, String> part = scope.context();
                    if (!part.isEmpty()) {
                        if (context == null) {
                            context = new HashMap<>();
                        }
                        context.putAll(part);
                    }
                }
                return context == null ? Map.of() : context;
            }

            @Override
            public void finished(int added, int merged, @Nullable Throwable error) {
                for (SendScope scope : scopes) {
                    try {
                        scope.finished(added, merged, error);
                    }
                    catch (RuntimeException ex) {
                        failed(scope, "finished", ex);
                    }
                }
            }
        };
    }

    @Override
    public void popped(String listenerId, String topic, int slot, int messages, long nanos) {
        each("popped", part -> part.popped(listenerId, topic, slot, messages, nanos));
    }

    @Override
    public void popFailed(String listenerId, String topic, int slot, Throwable error) {
        each("popFailed", part -> part.popFailed(listenerId, topic, slot, error));
    }

    @Override
    public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
        HandleScope[] scopes = new HandleScope[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                scopes[i] = parts[i].handleStarted(listenerId, delivery, latenessMillis);
            }
            catch (RuntimeException ex) {
                failed(parts[i], "handleStarted", ex);
            }
            if (scopes[i] == null) {
                scopes[i] = HandleScope.NONE;
            }
        }
        return new HandleScope() {
            @Override
            public void handlerReturned(@Nullable Throwable error) {
                endInReverse(scopes, "handlerReturned", error, HandleScope::handlerReturned);
            }

            @Override
            public void notStarted() {
                endInReverse(scopes, "notStarted", null, (scope, none) -> scope.notStarted());
            }

            @Override
            public void settled(Outcome outcome) {
                for (HandleScope scope : scopes) {
                    try {
                        scope.settled(outcome);
                    }
                    catch (RuntimeException ex) {
                        failed(scope, "settled", ex);
                    }
                }
            }
        };
    }

    /**
     * Ends each scope of a handler call in reverse order (scopes opened on the handler's thread, observations, close
     * innermost first); what one throws is logged and does not keep the others from ending. The lambdas are
     * non-capturing: nothing is allocated per delivery.
     */
    private static void endInReverse(HandleScope[] scopes, String method, @Nullable Throwable error,
            java.util.function.BiConsumer<HandleScope, @Nullable Throwable> end) {
        for (int i = scopes.length - 1; i >= 0; i--) {
            try {
                end.accept(scopes[i], error);
            }
            catch (RuntimeException ex) {
                failed(scopes[i], method, ex);
            }
        }
    }

    @Override
    public void operation(String operation, String topic, long nanos, @Nullable Throwable error) {
        each("operation", part -> part.operation(operation, topic, nanos, error));
    }

    @Override
    public void rateLimitWaited(String listenerId, String topic, long nanos) {
        each("rateLimitWaited", part -> part.rateLimitWaited(listenerId, topic, nanos));
    }

    @Override
    public void watchdogRepaired(String listenerId, String topic) {
        each("watchdogRepaired", part -> part.watchdogRepaired(listenerId, topic));
    }

    @Override
    public void handedBack(String listenerId, String topic, int messages) {
        each("handedBack", part -> part.handedBack(listenerId, topic, messages));
    }

    @Override
    public void slotTakenOver(String listenerId, String topic, int slot) {
        each("slotTakenOver", part -> part.slotTakenOver(listenerId, topic, slot));
    }

    @Override
    public void deadTrimmed(String topic, int slot, long messages) {
        each("deadTrimmed", part -> part.deadTrimmed(topic, slot, messages));
    }

    @Override
    public void expired(String topic, int slot, long messages, boolean toDead) {
        each("expired", part -> part.expired(topic, slot, messages, toDead));
    }

    @Override
    public void deduplicated(String topic, long messages) {
        each("deduplicated", part -> part.deduplicated(topic, messages));
    }
}
