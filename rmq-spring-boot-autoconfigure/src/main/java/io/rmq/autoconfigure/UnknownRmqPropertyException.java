package io.rmq.autoconfigure;

import io.rmq.core.RmqInvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * A key under {@code rmq.} that RMQ does not take, e.g. a misspelt one: {@link #getField()} is the key as written,
 * {@link #getValue()} its value, {@link #getRule()} says which key is near. Reported on one screen, with where the key
 * was set, by {@link io.rmq.autoconfigure.diagnostics.InvalidRmqPropertyFailureAnalyzer}.
 */
public class UnknownRmqPropertyException extends RmqInvalidArgumentException {

    public UnknownRmqPropertyException(String key, @Nullable Object value, String rule) {
        super(key, value, rule);
    }
}
