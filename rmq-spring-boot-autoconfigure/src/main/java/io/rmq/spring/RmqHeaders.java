package io.rmq.spring;

/**
 * Names of the headers an {@link io.rmq.spring.annotation.RmqListener @RmqListener} method can take with Spring's
 * {@link org.springframework.messaging.handler.annotation.Header @Header}, e.g.
 * {@code @Header(RmqHeaders.ATTEMPT) int attempt}, or read from a {@link org.springframework.messaging.Message
 * Message&lt;T&gt;} parameter. RMQ messages carry no headers of their own (the body is the message's identity): these
 * describe the delivery. Numbers convert to any numeric parameter type (e.g. the score to {@code long}).
 */
public final class RmqHeaders {

    private static final String PREFIX = "rmq_";

    /** The topic name ({@code String}). */
    public static final String TOPIC = PREFIX + "topic";

    /** The slot the message came from ({@code Integer}). */
    public static final String SLOT = PREFIX + "slot";

    /** 1 on the first delivery, n + 1 after n failed attempts ({@code Integer}). */
    public static final String ATTEMPT = PREFIX + "attempt";

    /**
     * The retries the listener allows after the first attempt ({@code Integer}): a failure of attempt
     * {@code maxRetries + 1} moves the message to the dead queue.
     */
    public static final String MAX_RETRIES = PREFIX + "maxRetries";

    /**
     * The store score the message was taken with ({@code Double}): its due time in epoch ms (RANGE_MERGE, FIXED_TIME)
     * or its priority (PRIORITY).
     */
    public static final String SCORE = PREFIX + "score";

    /**
     * Redis-clock epoch ms until which this delivery is leased ({@code Long}; extended while the method runs); -1 for a
     * delivery of an ORDERLY listener, which holds its slot instead of a lease.
     */
    public static final String LEASE_DEADLINE = PREFIX + "leaseDeadline";

    /** The id of the listener (its container) handling the message ({@code String}). */
    public static final String LISTENER_ID = PREFIX + "listenerId";

    /** The stored body, the message's identity ({@code byte[]}). */
    public static final String BODY = PREFIX + "body";

    private RmqHeaders() {
    }
}
