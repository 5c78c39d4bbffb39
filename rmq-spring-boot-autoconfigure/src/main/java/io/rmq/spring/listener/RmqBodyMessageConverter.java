package io.rmq.spring.listener;

import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.nio.charset.StandardCharsets;

import io.rmq.core.BodyCodec;
import io.rmq.core.RmqPayloadMismatchException;
import io.rmq.spring.RmqHeaders;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHeaders;
import org.springframework.messaging.converter.MessageConversionException;
import org.springframework.messaging.converter.SmartMessageConverter;
import org.springframework.messaging.support.MessageBuilder;
import org.jspecify.annotations.Nullable;

/**
 * Converts an RMQ message's stored body ({@link RmqHeaders#BODY}) to what a listener parameter declares, generics
 * included, with RMQ's {@link BodyCodec} (the application's Jackson mapper, read as {@code rmq.consumer.payload-mapping}
 * says; {@code String} and {@code byte[]} get the body as it is). The container already converts the body once, to the type of the method's payload parameter, so
 * this converter only runs when a parameter asks for a type the payload is not an instance of.
 */
public class RmqBodyMessageConverter implements SmartMessageConverter {

    private final BodyCodec codec;

    public RmqBodyMessageConverter(BodyCodec codec) {
        this.codec = codec;
    }

    @Override
    public @Nullable Object fromMessage(Message<?> message, Class<?> targetClass) {
        return fromMessage(message, targetClass, null);
    }

    @Override
    public @Nullable Object fromMessage(Message<?> message, Class<?> targetClass, @Nullable Object conversionHint) {
        Type type = targetType(targetClass, conversionHint);
        Object payload = message.getPayload();
        if (type instanceof Class<?> c && c.isInstance(payload)) {
            return payload;
        }
        byte[] body = message.getHeaders().get(RmqHeaders.BODY, byte[].class);
        if (body == null) {
            if (payload instanceof byte[] bytes) {
                body = bytes;
            }
            else if (payload instanceof String text) {
                body = text.getBytes(StandardCharsets.UTF_8);
            }
            else {
                return null;
            }
        }
        try {
            return codec.decode(body, type);
        }
        catch (RmqPayloadMismatchException ex) {
            throw new MessageConversionException(message, ex.getMessage(), ex);
        }
        catch (RuntimeException ex) {
            throw new MessageConversionException(message, "cannot convert the body to " + type.getTypeName(), ex);
        }
    }

    /**
     * The generic type a parameter declares: {@code List<Order>} for {@code List<Order>} or {@code Message<List<Order>>}
     * ({@code conversionHint} is the parameter); the class when nothing more is known.
     */
    static Type targetType(Class<?> targetClass, Object conversionHint) {
        if (conversionHint instanceof MethodParameter parameter) {
            ResolvableType type = ResolvableType.forMethodParameter(parameter);
            if (Message.class.isAssignableFrom(type.toClass())) {
                type = type.as(Message.class).getGeneric(0);
            }
            if (type.resolve() != null && !(type.getType() instanceof WildcardType)) {
                return type.getType();
            }
        }
        return targetClass;
    }

    @Override
    public Message<?> toMessage(Object payload, @Nullable MessageHeaders headers) {
        return toMessage(payload, headers, null);
    }

    @Override
    public Message<?> toMessage(Object payload, @Nullable MessageHeaders headers, @Nullable Object conversionHint) {
        return MessageBuilder.createMessage(codec.encode(payload), headers == null ? new MessageHeaders(null) : headers);
    }
}
