package io.rmq.spring.aot;

import java.lang.reflect.Method;
import java.util.Set;

import io.rmq.spring.annotation.RmqHandler;
import io.rmq.spring.annotation.RmqListener;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Registers, at build time, the hints a native image needs to call a bean's listener methods: each method annotated
 * with {@link RmqListener} or (on a class-level listener) {@link RmqHandler}, for invocation, with JSON binding of its
 * payload and return types (see {@link RmqListenerReflectiveProcessor}). Registered in
 * {@code META-INF/spring/aot.factories}; runs once per bean definition during Spring's AOT processing.
 */
class RmqListenerBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

    private final RmqListenerReflectiveProcessor processor = new RmqListenerReflectiveProcessor();

    @Override
    public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
        Set<Method> methods = listenerMethods(ClassUtils.getUserClass(registeredBean.getBeanClass()));
        if (methods.isEmpty()) {
            return null;
        }
        return (generationContext, beanRegistrationCode) -> {
            ReflectionHints hints = generationContext.getRuntimeHints().reflection();
            methods.forEach(method -> processor.registerReflectionHints(hints, method));
        };
    }

    /** The methods of the class that RMQ invokes as listeners. */
    static Set<Method> listenerMethods(Class<?> type) {
        return MethodIntrospector.selectMethods(type, (MethodIntrospector.MetadataLookup<Boolean>) method ->
                AnnotatedElementUtils.hasAnnotation(method, RmqListener.class)
                        || AnnotatedElementUtils.hasAnnotation(method, RmqHandler.class) ? Boolean.TRUE : null)
                .keySet();
    }
}
