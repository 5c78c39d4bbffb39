package io.rmq.autoconfigure;

/**
 * Start-up with {@code rmq.startup.fail-fast=true} could not reach Redis. Reported on one screen by
 * {@link io.rmq.autoconfigure.diagnostics.RedisUnreachableFailureAnalyzer}.
 */
public class RedisUnreachableException extends RuntimeException {

    private final String address;
    private final String reason;

    public RedisUnreachableException(String address, String reason, Throwable cause) {
        super("RMQ could not reach Redis at " + address + ": " + reason, cause);
        this.address = address;
        this.reason = reason;
    }

    /** Where Redis was looked for, as configured (spring.data.redis.*). */
    public String getAddress() {
        return address;
    }

    /** Why it could not be reached, without the stack. */
    public String getReason() {
        return reason;
    }
}
