package io.rmq.spring.listener;

import java.lang.reflect.Method;
import java.util.List;

import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.support.DefaultMessageHandlerMethodFactory;
import org.springframework.messaging.handler.invocation.HandlerMethodArgumentResolver;
import org.springframework.messaging.handler.invocation.HandlerMethodArgumentResolverComposite;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;
import org.springframework.util.ClassUtils;
import org.jspecify.annotations.Nullable;

/**
 * Spring Messaging's method factory, plus Kotlin {@code suspend} functions: their hidden last parameter (the
 * {@code Continuation}) resolves to null, and they are invoked through {@link SuspendingInvocableHandlerMethod}, which
 * runs the coroutine and waits for it (Spring Messaging's own {@link InvocableHandlerMethod} would call them as plain
 * methods with no continuation).
 */
class RmqMessageHandlerMethodFactory extends DefaultMessageHandlerMethodFactory {

    private static final String CONTINUATION = "kotlin.coroutines.Continuation";

    /** The resolvers the factory gives its own methods, given to the suspending ones too. */
    private final HandlerMethodArgumentResolverComposite resolvers = new HandlerMethodArgumentResolverComposite();

    @Override
    protected List<HandlerMethodArgumentResolver> initArgumentResolvers() {
        List<HandlerMethodArgumentResolver> list = new java.util.ArrayList<>(super.initArgumentResolvers());
        list.add(0, new ContinuationResolver());
        resolvers.clear();
        resolvers.addResolvers(list);
        return list;
    }

    @Override
    public InvocableHandlerMethod createInvocableHandlerMethod(Object bean, Method method) {
        if (!KotlinDetector.isSuspendingFunction(method)) {
            return super.createInvocableHandlerMethod(bean, method);
        }
        ClassLoader loader = method.getDeclaringClass().getClassLoader();
        if (!ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", loader)
                || !ClassUtils.isPresent("kotlin.reflect.full.KClasses", loader)) {
            throw new IllegalStateException("a suspend listener needs org.jetbrains.kotlinx:kotlinx-coroutines-reactor"
                    + " and org.jetbrains.kotlin:kotlin-reflect on the class path");
        }
        return SuspendingInvocableHandlerMethod.create(bean, method, resolvers);
    }

    /** Whether the parameter is the {@code Continuation} the Kotlin compiler appends to a suspend function. */
    static boolean isContinuation(MethodParameter parameter) {
        return parameter.getParameterIndex() == parameter.getExecutable().getParameterCount() - 1
                && parameter.getParameterType().getName().equals(CONTINUATION)
                && parameter.getMethod() != null && KotlinDetector.isSuspendingFunction(parameter.getMethod());
    }

    /** The parameters of the method as its source declares them: a suspend function's continuation left out. */
    static int declaredParameterCount(Method method) {
        return KotlinDetector.isSuspendingFunction(method) ? method.getParameterCount() - 1 : method.getParameterCount();
    }

    /** The continuation is the coroutine's, made when it is started: nothing to resolve from the message. */
    private static final class ContinuationResolver implements HandlerMethodArgumentResolver {

        @Override
        public boolean supportsParameter(MethodParameter parameter) {
            return isContinuation(parameter);
        }

        @Override
        public @Nullable Object resolveArgument(MethodParameter parameter, Message<?> message) {
            return null;
        }
    }
}
