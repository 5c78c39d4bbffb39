package io.rmq.spring.aot;

import java.lang.reflect.Method;

import io.rmq.consumer.Delivery;
import io.rmq.spring.RmqMessage;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.core.MethodParameter;
import org.springframework.messaging.handler.annotation.MessageMappingReflectiveProcessor;

/**
 * The hints of one listener method, as Spring Messaging registers them for {@code @MessageMapping} methods (the
 * method for invocation; JSON binding of its payload, of {@code T} in {@code Message<T>}, and of its return value,
 * which {@code @SendTo} sends), with RMQ's parameters: {@code T} of {@code RmqMessage<T>} is the payload, the
 * {@link Delivery} and a Kotlin suspend function's {@code Continuation} are not.
 */
class RmqListenerReflectiveProcessor extends MessageMappingReflectiveProcessor {

    private final BindingReflectionHintsRegistrar binding = new BindingReflectionHintsRegistrar();

    @Override
    protected void registerParameterHints(ReflectionHints hints, Method method) {
        super.registerParameterHints(hints, method);
        for (int i = 0; i < method.getParameterCount(); i++) {
            MethodParameter parameter = new MethodParameter(method, i);
            if (parameter.getParameterType() == RmqMessage.class) {
                MethodParameter nested = parameter.nested();
                if (nested.getNestedParameterType() != nested.getParameterType()) {
                    binding.registerReflectionHints(hints, nested.getNestedGenericParameterType());
                }
            }
        }
    }

    @Override
    protected boolean couldBePayload(MethodParameter parameter) {
        Class<?> type = parameter.getParameterType();
        return super.couldBePayload(parameter) && type != RmqMessage.class && type != Delivery.class
                && !type.getName().equals("kotlin.coroutines.Continuation");
    }
}
