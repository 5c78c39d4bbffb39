package io.rmq.core;

/**
 * Redis has not been reachable since the engine was created ({@code Rmq.connectLazily}): the call failed at once
 * instead of waiting for a connection. The engine keeps trying to connect; the same call succeeds once it has.
 */
public class RmqUnavailableException extends RmqException {

    private final String state;

    /**
     * @param state     since when Redis is unreachable and why, e.g. "Redis is not reachable (since 10:02:03; ...)"
     * @param operation what failed, e.g. "sending to topic 'x'"
     */
    public RmqUnavailableException(String state, String operation) {
        this(state, operation, null);
    }

    private RmqUnavailableException(String state, String operation, Throwable cause) {
        super(state + ": " + operation + " failed at once; RMQ keeps trying to connect", cause);
        this.state = state;
    }

    /** The same failure, named by the caller's operation (which says more than a command's name). */
    public RmqUnavailableException during(String operation) {
        return new RmqUnavailableException(state, operation, this);
    }
}
