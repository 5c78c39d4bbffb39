package io.rmq.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method of a class annotated with {@link RmqListener} as one of the handlers its single container delivers
 * to, chosen per message by payload type (as Spring Kafka's {@code @KafkaHandler}). A handler method takes what an
 * {@code @RmqListener} method takes (a payload, {@code RmqMessage<T>} or {@code Message<T>}, {@code @Header}
 * parameters) and may have {@code @SendTo}; a {@code @SendTo} (and {@code @RmqReply}) on the class applies to the
 * handlers that return a value and have none of their own.
 * <p>
 * A message with a {@link io.rmq.spring.RmqHeaders#TYPE_ID __TypeId__} header (Spring's convention; RmqTemplate adds
 * it with {@code rmq.producer.type-header=true}) goes to the handler whose payload class has that name, else, when
 * that class can be loaded, to the first handler (in the order below, the default last) whose payload type it is
 * assignable to; its body is then read as that type as an {@code @RmqListener} method's would be (a body that does not
 * read is not retried: dead with the reason). A message without the header, or whose header names no handler's type,
 * has its handler chosen by trying to read the body as each handler's payload type, in this order, the first that fits
 * wins:
 * <ol>
 * <li>handlers of any type but {@code String} and {@code byte[]}, in the order they are declared in the class (as the
 * compiler writes them; a subclass's before its superclass's), where the body fits when it reads as that type with
 * no property the type lacks ({@code FAIL_ON_UNKNOWN_PROPERTIES}) and nothing after the value (otherwise as the
 * application's mapper reads it: a missing property does not disqualify a type unless it is a primitive, Jackson 3's
 * {@code FAIL_ON_NULL_FOR_PRIMITIVES}); a body that fits two types goes to the one declared first;</li>
 * <li>a {@code String} handler (any body fits), then a {@code byte[]} handler (any body fits);</li>
 * <li>the {@link #isDefault() default} handler, whose type is read as an {@code @RmqListener} method's would be.</li>
 * </ol>
 * A body no handler takes, and that no default handler can read, is not retried: it goes to the dead queue at once,
 * with a reason naming the types tried. Two handlers of one payload type, or two defaults, fail start-up.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RmqHandler {

    /** Whether this handler takes the messages no other handler of the class takes (at most one per class). */
    boolean isDefault() default false;
}
