package io.rmq;

import java.time.Duration;

import io.rmq.consumer.Delivery;
import io.rmq.core.BodyCodec;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.RmqKeys;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.producer.MessageLimits;

/**
 * Engine-wide settings, given to {@link Rmq#create} (immutable; {@code with…} methods return a changed copy).
 *
 * @param keyPrefix    prefix of every Redis key RMQ writes
 * @param maxBodyBytes largest serialized body accepted by a send
 * @param codec        body serialization
 * @param logBodyChars how many characters of a message body log lines show; 0 (default): none, only its size
 *                     (bodies may hold personal data)
 * @param instrumentation what the engine reports its work to (meters, observations); {@link RmqInstrumentation#NONE}
 *                     (default, also for null): nothing
 * @param propagateContext whether consumers read the trace context a sender stored beside each message
 *                     ({@link Delivery#context()}); off by default, and then pops ask for nothing more. What
 *                     senders store comes from the instrumentation's {@code SendScope.context()}.
 * @param limits       the sizes of message ids and headers ({@link MessageLimits#DEFAULT} for null)
 * @param historyFlushInterval how often the engine adds what it counted (sent, handled, failed, dead per topic) to
 *                     the history in Redis ({@link io.rmq.admin.RmqAdmin#history}); {@link Duration#ZERO}: no
 *                     history is counted or written; null: {@link #DEFAULT_HISTORY_FLUSH_INTERVAL}
 */
public record RmqOptions(String keyPrefix, int maxBodyBytes, BodyCodec codec, int logBodyChars,
        RmqInstrumentation instrumentation, boolean propagateContext, MessageLimits limits,
        Duration historyFlushInterval) {

    public static final int DEFAULT_MAX_BODY_BYTES = 64 * 1024;

    /** How often an engine writes its history counts unless told otherwise. */
    public static final Duration DEFAULT_HISTORY_FLUSH_INTERVAL = Duration.ofSeconds(10);

    public static final RmqOptions DEFAULT = new RmqOptions(RmqKeys.DEFAULT_PREFIX, DEFAULT_MAX_BODY_BYTES,
            new BodyCodec());

    public RmqOptions {
        if (maxBodyBytes < 1 || maxBodyBytes > 512 * 1024 * 1024) {
            throw new RmqInvalidArgumentException("maxBodyBytes", maxBodyBytes, "must be between 1 and 512 MiB");
        }
        if (codec == null) {
            throw new RmqInvalidArgumentException("codec", null, "must not be null");
        }
        if (logBodyChars < 0) {
            throw new RmqInvalidArgumentException("logBodyChars", logBodyChars, "must be zero (no bodies in logs) or"
                    + " positive");
        }
        if (instrumentation == null) {
            instrumentation = RmqInstrumentation.NONE;
        }
        if (limits == null) {
            limits = MessageLimits.DEFAULT;
        }
        if (historyFlushInterval == null) {
            historyFlushInterval = DEFAULT_HISTORY_FLUSH_INTERVAL;
        }
        if (historyFlushInterval.isNegative() || !historyFlushInterval.isZero()
                && historyFlushInterval.toMillis() < 10) {
            throw new RmqInvalidArgumentException("historyFlushInterval", historyFlushInterval, "must be at least"
                    + " 10 ms, or zero for no history");
        }
    }

    public RmqOptions(String keyPrefix, int maxBodyBytes, BodyCodec codec, int logBodyChars,
            RmqInstrumentation instrumentation, boolean propagateContext, MessageLimits limits) {
        this(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits, null);
    }

    public RmqOptions(String keyPrefix, int maxBodyBytes, BodyCodec codec, int logBodyChars,
            RmqInstrumentation instrumentation, boolean propagateContext) {
        this(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, MessageLimits.DEFAULT);
    }

    public RmqOptions(String keyPrefix, int maxBodyBytes, BodyCodec codec, int logBodyChars) {
        this(keyPrefix, maxBodyBytes, codec, logBodyChars, RmqInstrumentation.NONE, false);
    }

    public RmqOptions(String keyPrefix, int maxBodyBytes, BodyCodec codec) {
        this(keyPrefix, maxBodyBytes, codec, 0);
    }

    public RmqOptions withKeyPrefix(String keyPrefix) {
        return new RmqOptions(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits,
                historyFlushInterval);
    }

    public RmqOptions withMaxBodyBytes(int maxBodyBytes) {
        return new RmqOptions(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits,
                historyFlushInterval);
    }

    public RmqOptions withLogBodyChars(int logBodyChars) {
        return new RmqOptions(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits,
                historyFlushInterval);
    }

    /** With the instrumentation the engine reports to ({@link io.rmq.observe.CompositeInstrumentation#of} combines several). */
    public RmqOptions withInstrumentation(RmqInstrumentation instrumentation) {
        return new RmqOptions(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits,
                historyFlushInterval);
    }

    /**
     * With consumers that read the trace context stored beside each message (or not); the instrumentation's
     * send scopes decide what senders store.
     */
    public RmqOptions withPropagateContext(boolean propagateContext) {
        return new RmqOptions(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits,
                historyFlushInterval);
    }

    /**
     * With the history written every {@code interval} ({@link Duration#ZERO}: no history counted or written).
     */
    public RmqOptions withHistoryFlushInterval(Duration interval) {
        return new RmqOptions(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits,
                interval);
    }

    /** With the sizes message ids and headers may have. */
    public RmqOptions withLimits(MessageLimits limits) {
        return new RmqOptions(keyPrefix, maxBodyBytes, codec, logBodyChars, instrumentation, propagateContext, limits,
                historyFlushInterval);
    }
}
