package io.rmq.spring.listener;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import org.springframework.core.CoroutinesUtils;
import org.springframework.messaging.handler.invocation.HandlerMethodArgumentResolverComposite;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;

/**
 * Invokes a Kotlin {@code suspend} listener: Spring's {@link CoroutinesUtils} starts the coroutine (on the calling
 * thread, unconfined, until it first suspends) and this method waits for it to end. The handler thread is therefore
 * taken for the whole coroutine, as for a blocking method: the delivery stays leased (and its lease extended) until the
 * coroutine has returned, then it is acked; what the coroutine throws fails the attempt, as a blocking method's
 * exception does. If the waiting thread is interrupted (the container stops), the coroutine is cancelled.
 * <p>
 * Loaded only for suspend functions, so that Kotlin, kotlinx-coroutines-reactor and Reactor stay optional.
 */
final class SuspendingInvocableHandlerMethod extends InvocableHandlerMethod {

    private SuspendingInvocableHandlerMethod(Object bean, Method method) {
        super(bean, method);
    }

    static InvocableHandlerMethod create(Object bean, Method method, HandlerMethodArgumentResolverComposite resolvers) {
        SuspendingInvocableHandlerMethod handlerMethod = new SuspendingInvocableHandlerMethod(bean, method);
        handlerMethod.setMessageMethodArgumentResolvers(resolvers);
        return handlerMethod;
    }

    @Override
    protected Object doInvoke(Object... args) throws Exception {
        // args ends with the (null) continuation, which CoroutinesUtils ignores
        Publisher<?> result = CoroutinesUtils.invokeSuspendingFunction(getBridgedMethod(), getBean(), args);
        CompletableFuture<?> done = Mono.from(result).toFuture();
        try {
            return done.get();
        }
        catch (InterruptedException ex) {
            // thrown on, as a blocking listener's sleep would throw it (the exception carries the interruption)
            done.cancel(true);
            throw ex;
        }
        catch (ExecutionException ex) {
            Throwable cause = ex.getCause();
            if (cause instanceof Exception exception) {
                throw exception;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw ex;
        }
    }
}
