package io.rmq.core;

import org.jspecify.annotations.Nullable;

/**
 * The call failed at once, without reaching Redis, instead of waiting for a connection: Redis has not been reachable
 * since the engine was created ({@code Rmq.connectLazily}; the engine keeps trying to connect), or the connection to
 * the Redis node that serves the call's slot is down (a restart, a master that died; RMQ's client reconnects, and
 * follows a failover, by itself). The call was not sent;
 * the same call succeeds once the connection is back.
 */
public class RmqUnavailableException extends RmqException {

    private final String state;
    private final String outlook;

    /**
     * @param state     since when Redis is unreachable and why, e.g. "Redis is not reachable (since 10:02:03; ...)"
     * @param operation what failed, e.g. "sending to topic 'x'"
     */
    public RmqUnavailableException(String state, String operation) {
        this(state, operation, null);
    }

    private RmqUnavailableException(String state, String operation, @Nullable Throwable cause) {
        this(state, operation, "RMQ keeps trying to connect", cause);
    }

    private RmqUnavailableException(String state, String operation, String outlook, @Nullable Throwable cause) {
        super(state + ": " + operation + " failed at once; " + outlook, cause);
        this.state = state;
        this.outlook = outlook;
    }

    /**
     * A call rejected because the connection it needs is down (RMQ's client does not queue calls for a disconnected
     * node).
     *
     * @param state     which connection is down, e.g. "the connection to Redis node h:p that serves topic 'x' slot 3
     *                  is down (...)"
     * @param operation what failed
     */
    public static RmqUnavailableException disconnected(String state, String operation, Throwable cause) {
        return new RmqUnavailableException(state, operation, "not sent, retry once the client has reconnected (or"
                + " followed the failover)", cause);
    }

    /** The same failure, named by the caller's operation (which says more than a command's name). */
    public RmqUnavailableException during(String operation) {
        return new RmqUnavailableException(state, operation, outlook, this);
    }
}
