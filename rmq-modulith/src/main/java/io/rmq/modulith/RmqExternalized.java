package io.rmq.modulith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * How RMQ sends an event that Spring Modulith externalizes to it: the timing its topic's type takes, and its group.
 * The topic and the message id come from Modulith's {@code @Externalized("topic::#{key}")} (or the application's
 * {@code EventExternalizationConfiguration}); this annotation only adds what RMQ needs beyond them. Without it, an
 * event is sent as soon as possible: a RANGE_MERGE topic with a 1 ms window, a FIXED_TIME topic due now, a PRIORITY
 * topic with priority 0.
 * <p>
 * Every attribute is a literal or a SpEL template evaluated on the (mapped) event, as {@code @Externalized}'s key is:
 * {@code "PT30M"}, {@code "#{timeout()}"}. An attribute the topic's type does not take (a delay on a PRIORITY topic)
 * fails the send with an {@link io.rmq.core.RmqInvalidArgumentException} naming the event type, the attribute and the
 * rule; the publication then stays incomplete in the registry.
 *
 * <pre>{@code
 * @Externalized("order-timeout::#{orderId()}")
 * @RmqExternalized(delay = "PT30M")
 * record OrderPlaced(String orderId) {}
 * }</pre>
 */
@Documented
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
public @interface RmqExternalized {

    /**
     * RANGE_MERGE: the window (the message is delivered this long after the first send of its id; more than 0);
     * FIXED_TIME: due this long after the send (0 or more). A {@link java.time.Duration}, its ISO-8601 form
     * ({@code PT30M}) or Boot's short form ({@code 30m}). Empty: the default.
     */
    String delay() default "";

    /**
     * FIXED_TIME only: when the message is due, instead of {@link #delay()}: an {@link java.time.Instant} (or anything
     * with one: {@code OffsetDateTime}, {@code ZonedDateTime}, {@code Date}), epoch milliseconds, or an ISO-8601
     * instant; usually {@code "#{dueAt()}"}.
     */
    String dueAt() default "";

    /** PRIORITY only: the priority (higher first), a whole number; e.g. {@code "10"} or {@code "#{urgent() ? 10 : 0}"}. */
    String priority() default "";

    /**
     * The group: the routing and ordering key (messages of one group share a slot, so an ORDERLY listener handles them
     * in order). Empty: the id routes the message.
     */
    String group() default "";
}
