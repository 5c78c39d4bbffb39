package io.rmq.core;

import org.jspecify.annotations.Nullable;

/**
 * Bad input, named precisely: which field, which value, which rule it breaks.
 */
public class RmqInvalidArgumentException extends IllegalArgumentException {

    private final String field;
    private final transient @Nullable Object value;
    private final String rule;

    public RmqInvalidArgumentException(String field, @Nullable Object value, String rule) {
        super("Invalid " + field + " '" + value + "': " + rule);
        this.field = field;
        this.value = value;
        this.rule = rule;
    }

    public String getField() {
        return field;
    }

    public @Nullable Object getValue() {
        return value;
    }

    public String getRule() {
        return rule;
    }
}
