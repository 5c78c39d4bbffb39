package io.rmq.spring.operations;

import io.rmq.core.RmqInvalidArgumentException;

/**
 * What an operation names is not there: no topic, listener, instance or schedule of that name. An invalid argument
 * (the name breaks the rule "must name one that exists"), so a caller that catches {@link RmqInvalidArgumentException}
 * catches it too; the endpoint and the dashboard answer it 404 instead of 400. {@link #getField()} says what was
 * looked for ({@code topic}, {@code listener}, ...), {@link #getValue()} the name, {@link #getRule()} where it was
 * looked for.
 */
public class RmqNotFoundException extends RmqInvalidArgumentException {

    private final String message;

    /**
     * @param field what was looked for ({@code topic}, {@code listener}, {@code instance}, {@code schedule})
     * @param name  the name given
     * @param rule  the rule the name breaks ({@code "must be defined here or registered in Redis"})
     */
    public RmqNotFoundException(String field, String name, String rule) {
        super(field, name, rule);
        this.message = "No " + field + " '" + name + "': " + rule;
    }

    /** The topic of this name is neither defined here nor registered in Redis (under this key prefix). */
    public static RmqNotFoundException topic(String name) {
        return new RmqNotFoundException("topic", name, "must be defined here or registered in Redis");
    }

    /** No listener of this application has this id. */
    public static RmqNotFoundException listener(String id) {
        return new RmqNotFoundException("listener", id, "must be the id of a listener of this application");
    }

    /** No live instance has this id. */
    public static RmqNotFoundException instance(String id) {
        return new RmqNotFoundException("instance", id, "must be the id of a live instance");
    }

    /** The application has no schedule of this name. */
    public static RmqNotFoundException schedule(String name) {
        return new RmqNotFoundException("schedule", name, "must be the name of a schedule of this application");
    }

    @Override
    public String getMessage() {
        return message;
    }
}
