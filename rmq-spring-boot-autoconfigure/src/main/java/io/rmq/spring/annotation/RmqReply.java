package io.rmq.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * How the return value of an {@link RmqListener} method that has Spring's
 * {@link org.springframework.messaging.handler.annotation.SendTo @SendTo("topic")} is sent: the parameter its topic's
 * type needs, as {@link io.rmq.spring.RmqTemplate}'s {@code sendRangeMerge} / {@code sendPriority} /
 * {@code sendFixedTime} take it. Only the attribute of the reply topic's type may be set:
 * <ul>
 * <li>RANGE_MERGE: {@link #timeRange()}, required;</li>
 * <li>PRIORITY: {@link #priority()}, default 0;</li>
 * <li>FIXED_TIME: {@link #delay()} after the reply is sent, default none (due at once).</li>
 * </ul>
 * A method that returns an {@link io.rmq.producer.OutgoingMessage} chooses per message instead (topic, type,
 * parameter, group, id and headers as built); this annotation is then not needed. Every attribute accepts {@code ${...}} and
 * {@code #{...}}. On a class-level {@code @RmqListener} with {@code @SendTo}, it applies to the handlers that have no
 * {@code @SendTo} of their own.
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RmqReply {

    /** RANGE_MERGE reply topic: the time range, e.g. {@code 5s}. */
    String timeRange() default "";

    /** PRIORITY reply topic: the priority (higher first); empty: 0. */
    String priority() default "";

    /** FIXED_TIME reply topic: delivered this long after the reply is sent, e.g. {@code 10m}; empty: at once. */
    String delay() default "";
}
