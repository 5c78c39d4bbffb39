package io.rmq.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the handler of an RMQ topic. The method is called through Spring Messaging, as a
 * {@code @KafkaListener} method is: it takes at most one payload parameter — the payload itself (unannotated or
 * {@code @Payload}; converted from the stored body to the declared type, generics included; {@code String} and
 * {@code byte[]} get the body as it is), an {@link io.rmq.spring.RmqMessage RmqMessage&lt;T&gt;} with the delivery
 * details, its id and its headers, or Spring's {@link org.springframework.messaging.Message Message&lt;T&gt;} — plus
 * any {@code @Header} parameters: the delivery's ({@code @Header(RmqHeaders.ATTEMPT)}, see
 * {@link io.rmq.spring.RmqHeaders}), the message's id ({@code @Header(name = RmqHeaders.ID, required = false)}) and
 * the headers it was sent with ({@code @Header("tenant") String tenant}, {@code required = false} where a message may
 * lack it) — {@code @Headers Map}, {@code MessageHeaders} or the {@link io.rmq.consumer.Delivery}. A payload marked {@code @Valid} or {@code @Validated} is validated with the
 * application's {@code Validator}; a payload that fails validation, like any message the method cannot be called
 * with, is not retried: it goes to the dead queue at once with the reason. Returning normally acknowledges the
 * message; an exception fails the attempt (the method's own exception, unwrapped): it is retried after a backoff, and
 * after {@code maxRetries} it moves to the dead queue with the error. The return value is ignored, unless the method
 * has Spring's {@link org.springframework.messaging.handler.annotation.SendTo @SendTo("topic")}: then it is sent to
 * that topic (null: nothing), with the parameter {@link RmqReply} gives for the topic's type, or as built when it is
 * an {@link io.rmq.producer.OutgoingMessage}.
 * <p>
 * With {@link #batch() batch = "true"} the method takes a list of messages instead: one slot's messages of one pop,
 * acknowledged together (see {@link #batch()}).
 * <p>
 * Every attribute accepts {@code ${...}} placeholders; empty attributes take the {@code rmq.consumer.*} defaults.
 * String attributes accept SpEL {@code #{...}} expressions too, as {@code @KafkaListener}'s do (placeholders are
 * resolved first, so {@code #{'${x}'.toUpperCase()}} works; {@code #{@someBean.topicName}} reads a bean).
 * <p>
 * <b>Repeatable</b>: each {@code @RmqListener} on a method gives its own container (e.g. one method serving two
 * topics); their ids must differ (see {@link #id()}).
 * <p>
 * <b>On a class</b> with {@link RmqHandler @RmqHandler} methods: one container for the class; each message goes to the
 * handler whose payload type its body fits (see {@link RmqHandler} for the order in which types are tried).
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RmqListeners.class)
public @interface RmqListener {

    /** Topic name. */
    String topic();

    /**
     * Container id for the registry; default {@code <beanName>.<methodName>} on a method, {@code <beanName>} on a
     * class. When an element carries several {@code @RmqListener}s, the n-th (n ≥ 2, in the order written) defaults
     * to that id with {@code -n} appended ({@code orders.handle}, {@code orders.handle-2}, …), so adding one does not
     * change the ids of those before it. Two listeners with one id fail start-up, naming both.
     */
    String id() default "";

    /**
     * Name of the {@link io.rmq.spring.listener.RmqListenerContainerFactory} bean that builds this listener's
     * container (its defaults, error handler and customizers apply); empty: the bean named
     * {@code rmqListenerContainerFactory} (the auto-configured one unless the application declares its own under that
     * name), else the only factory bean. A name that is no such bean fails start-up.
     */
    String containerFactory() default "";

    /**
     * Topic type (RANGE_MERGE, PRIORITY, FIXED_TIME) to define the topic here; empty: the topic must be defined in
     * {@code rmq.topics} or already registered in Redis.
     */
    String type() default "";

    /** Slot amount when {@link #type()} defines the topic here (power of two); empty: 16. */
    String slotAmount() default "";

    /** Handler threads; empty: {@code rmq.consumer.concurrency}. */
    String concurrency() default "";

    /**
     * Most messages popped from one slot per call (a {@link #batch()} listener's largest batch); empty:
     * {@code rmq.consumer.batch-size}.
     */
    String batchSize() default "";

    /** Lease, e.g. {@code 30s}; empty: {@code rmq.consumer.lease}. */
    String lease() default "";

    /**
     * FIXED_TIME and RANGE_MERGE topics, CONCURRENT listeners: how long before its due time a message may be popped,
     * e.g. {@code 10ms}; the handler is still called not before the due time, but inside that window a duplicate
     * no longer merges, a later FIXED_TIME no longer postpones and a cancel finds the message in flight (see
     * {@code ConsumerSettings.lookAhead}). At most {@code 1s} and a third of the lease; ignored by PRIORITY topics
     * and ORDERLY listeners. Empty: {@code rmq.consumer.look-ahead} (0: off).
     */
    String lookAhead() default "";

    /** Retries after the first attempt; empty: {@code rmq.consumer.max-retries}. */
    String maxRetries() default "";

    /** First retry delay, e.g. {@code 1s}; empty: {@code rmq.consumer.backoff.initial}. */
    String backoffInitial() default "";

    /** Delay growth per retry (1 = fixed); empty: {@code rmq.consumer.backoff.multiplier}. */
    String backoffMultiplier() default "";

    /** Longest retry delay; empty: {@code rmq.consumer.backoff.max}. */
    String backoffMax() default "";

    /** Random shortening of delays, 0 to 1; empty: {@code rmq.consumer.backoff.jitter}. */
    String backoffJitter() default "";

    /**
     * {@code CONCURRENT} or {@code ORDERLY} (as RocketMQ's {@code consumeMode}): ORDERLY gives each slot of the topic
     * to one instance at a time, handled by one thread, one message after another in order, a failure suspending
     * the slot until its retry; send related messages in the same group ({@code OutgoingMessage#withGroup}, the
     * {@code slotBasis} parameters of RmqTemplate, which is the former name and stays as an alias, or the
     * {@code RmqHeaders.GROUP} header of a Spring {@code Message}). Empty:
     * {@code rmq.listeners.<id>.mode}, else CONCURRENT.
     */
    String mode() default "";

    /**
     * Most messages all consumers of the topic together handle, cluster-wide, e.g. {@code 500/s}, {@code 3000/m},
     * {@code 50/100ms}; empty: {@code rmq.topics.<topic>.rate-limit}, else none.
     */
    String rateLimit() default "";

    /**
     * Exceptions that are not retried: a failure whose exception (or any of its causes) is one of these types goes to
     * the dead queue at once, with its reason. {@link io.rmq.consumer.RmqNonRetryableException} never is retried.
     */
    Class<? extends Throwable>[] noRetryFor() default {};

    /**
     * Name of an {@link io.rmq.consumer.RmqErrorHandler} bean that decides what becomes of each failure (retry after
     * a delay, dead, drop); empty: the application's {@code RmqErrorHandler} bean if it has exactly one, else the
     * standard decision (non-retryable: dead at once; else retry with backoff up to maxRetries).
     */
    String errorHandler() default "";

    /**
     * A topic that receives the messages that die here (body, id, group and headers, with the story of their death as
     * {@code rmq_dlt_*} headers, see {@link io.rmq.spring.RmqHeaders}; never refused for a size), and they leave this
     * topic's dead queue once sent, so a listener of that topic can handle them; defined as FIXED_TIME with this
     * topic's slot amount unless defined elsewhere. Empty: dead messages stay in the dead queue.
     */
    String deadLetterTopic() default "";

    /**
     * {@code true}: a batch listener, as {@code @KafkaListener(batch = "true")}. The method takes one {@code List<T>},
     * {@code List<RmqMessage<T>>} or {@code Message<List<T>>} (plus {@code @Header}s) and gets up to
     * {@link #batchSize()} messages at a time: those one pop took from <em>one slot</em> (a batch never mixes slots),
     * in the topic's taking order. The headers describe the batch: {@code RmqHeaders.TOPIC}, {@code SLOT},
     * {@code LISTENER_ID}, {@code MAX_RETRIES} as single values; {@code ATTEMPT}, {@code SCORE},
     * {@code LEASE_DEADLINE} as lists, one element per message (e.g. {@code @Header(RmqHeaders.ATTEMPT)
     * List<Integer> attempts}); so are {@code RmqHeaders.ID} and the headers the messages were sent with
     * ({@code @Header(name = "tenant", required = false) List<String> tenants}: null for a message without it; the
     * list is absent when no message of the batch has it), and each {@code RmqMessage<T>} has its own id and headers.
     * <ul>
     * <li>Returning normally acknowledges the whole batch, in one call to Redis.</li>
     * <li>Throwing {@link io.rmq.consumer.RmqBatchFailure} (naming the failed indexes, with a cause per index or one
     * for all) fails only those messages and acknowledges the others.</li>
     * <li>Any other exception fails every message of the batch. Each failed message is then retried or dead on its
     * own, by the failure policy (maxRetries, noRetryFor, the error handler, which sees that message's payload).</li>
     * <li>A message whose body cannot be converted to {@code T} is not passed to the method: it goes to the dead queue
     * at once (not retried) with the reason, and the method gets the others.</li>
     * </ul>
     * With {@code @SendTo}, the return value is sent once per batch. Leases of a running batch are extended; a stop
     * waits for it. Not allowed with {@link #mode()} ORDERLY (start-up
     * fails). Empty: false.
     */
    String batch() default "";

    /** Whether the container starts with the application context; empty: true. */
    String autoStartup() default "";
}
