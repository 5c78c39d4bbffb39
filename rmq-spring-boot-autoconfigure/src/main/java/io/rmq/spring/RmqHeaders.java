package io.rmq.spring;

/**
 * Names of the headers an {@link io.rmq.spring.annotation.RmqListener @RmqListener} method can take with Spring's
 * {@link org.springframework.messaging.handler.annotation.Header @Header}, e.g.
 * {@code @Header(RmqHeaders.ATTEMPT) int attempt}, or read from a {@link org.springframework.messaging.Message
 * Message&lt;T&gt;} parameter, and of those a Spring {@code Message} sent with {@link RmqTemplate} may set
 * ({@link #ID}, {@link #GROUP}). Most describe the delivery; the message's own headers (string values, sent with it)
 * sit beside them under their own names, e.g. {@code @Header("tenant") String tenant}. Names starting with
 * {@code rmq_} belong to RMQ: a sender may set only {@link #ID}, {@link #GROUP} and the dead-letter headers
 * ({@code DLT_*}, which do not count against the header limits). Numbers convert to any numeric parameter type (e.g. the score to {@code long}).
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

    /**
     * The serialized payload as stored ({@code byte[]}); for a message sent without an id also its identity. Not
     * present in a batch (take {@code List<RmqMessage<T>>}).
     */
    public static final String BODY = PREFIX + "body";

    /**
     * The message's id ({@code String}): its identity for merging, given by the sender. Received: present only when
     * the message was sent with one ({@code @Header(name = RmqHeaders.ID, required = false) String id}); a batch
     * listener gets a list, one element per message, null where a message has none. Sent: a Spring {@code Message}
     * given to {@link RmqTemplate} with this header (a non-empty {@code String}) is sent with that id.
     */
    public static final String ID = PREFIX + "id";

    /**
     * The message's group ({@code String}), formerly "slot basis": its routing and ordering key. Sent: a Spring
     * {@code Message} given to {@link RmqTemplate} with this header is sent in that group (messages of one group share
     * a slot, so an ORDERLY listener handles them in order). Received: present only for a message of an ORDERLY topic
     * sent with a group, which RMQ stores with it (as the message header {@code rmq-group}, also visible under that
     * name); a CONCURRENT topic's messages do not carry it ({@code @Header(name = RmqHeaders.GROUP, required = false)
     * String group}). A batch listener gets a list, one element per message, null where a message has none.
     */
    public static final String GROUP = PREFIX + "group";

    /**
     * The payload's type as a class name ({@code String}), Spring's {@code __TypeId__} convention (Spring AMQP,
     * spring-kafka, Spring JMS): a class-level {@code @RmqListener} gives a message that carries it to the
     * {@link io.rmq.spring.annotation.RmqHandler @RmqHandler} of that type before trying the body against the others.
     * {@link RmqTemplate} adds it with {@code rmq.producer.type-header=true}; any sender may set it.
     */
    public static final String TYPE_ID = "__TypeId__";

    /** Dead-letter forwarding: the topic the message died in ({@code String}). */
    public static final String DLT_ORIGINAL_TOPIC = PREFIX + "dlt_original_topic";

    /** Dead-letter forwarding: the slot it died in (a decimal {@code String}). */
    public static final String DLT_ORIGINAL_SLOT = PREFIX + "dlt_original_slot";

    /**
     * Dead-letter forwarding: the class name of the last failure's root cause ({@code String}); absent when nothing was
     * thrown (an unreadable body).
     */
    public static final String DLT_EXCEPTION = PREFIX + "dlt_exception";

    /**
     * Dead-letter forwarding: the last failure's reason as the dead queue keeps it (the exception's class and message;
     * no body text unless {@code rmq.log-bodies}), cut to 1,024 bytes ({@code String}).
     */
    public static final String DLT_EXCEPTION_MESSAGE = PREFIX + "dlt_exception_message";

    /** Dead-letter forwarding: how many attempts it had, the last one included (a decimal {@code String}). */
    public static final String DLT_ATTEMPTS = PREFIX + "dlt_attempts";

    /**
     * Dead-letter forwarding: when it died, epoch ms of Redis's clock (a decimal {@code String}): the dead queue's
     * died-at, or the listener's estimate of Redis's clock when that could not be read.
     */
    public static final String DLT_FAILED_AT = PREFIX + "dlt_failed_at";

    private RmqHeaders() {
    }
}
