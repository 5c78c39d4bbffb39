package io.rmq.spring.listener;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqNonRetryableException;
import io.rmq.producer.OutgoingMessage;
import io.rmq.reply.RmqReplies;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.RmqMessage;
import org.jspecify.annotations.Nullable;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessagingException;
import org.springframework.messaging.converter.MessageConversionException;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;
import org.springframework.messaging.handler.invocation.MethodArgumentResolutionException;
import org.springframework.messaging.support.GenericMessage;

/**
 * Calls an {@code @RmqListener} method through Spring Messaging's {@link InvocableHandlerMethod}: each delivery becomes
 * a {@link Message} whose payload is the body as the container converted it and whose headers are the message's own
 * (as sent) and {@link RmqHeaders} (its id among them when it has one); the {@link Delivery} and (when the method takes one) the {@link RmqMessage} are provided by type.
 * <p>
 * What the method throws reaches RMQ's failure handling as it was thrown ({@link InvocableHandlerMethod} unwraps the
 * reflective wrapper). A message the method cannot even be called with (a payload that fails validation, a parameter
 * the body cannot be converted to) fails the same way on every attempt, so it is non-retryable: dead with the reason.
 */
final class MethodInvokingHandler implements MessageHandler<Object> {

    /** Sends what the method returned; null: the return value is ignored. */
    interface ReturnValueHandler {
        void handle(Object returned, Message<?> request) throws Exception;
    }

    private final InvocableHandlerMethod method;
    private final String listenerId;
    private final int maxRetries;
    private final boolean takesRmqMessage;
    private final ReturnValueHandler returns;
    /** Sends replies to requests (see {@link #invoke}); null: requests are handled as any message. */
    private final @Nullable Supplier<RmqReplies> requests;

    MethodInvokingHandler(InvocableHandlerMethod method, String listenerId, int maxRetries, boolean takesRmqMessage,
            ReturnValueHandler returns) {
        this(method, listenerId, maxRetries, takesRmqMessage, returns, null);
    }

    MethodInvokingHandler(InvocableHandlerMethod method, String listenerId, int maxRetries, boolean takesRmqMessage,
            ReturnValueHandler returns, @Nullable Supplier<RmqReplies> requests) {
        this.method = method;
        this.listenerId = listenerId;
        this.maxRetries = maxRetries;
        this.takesRmqMessage = takesRmqMessage;
        this.returns = returns;
        this.requests = requests;
    }

    @Override
    public void handle(Object payload, Delivery delivery) throws Exception {
        Map<String, String> sent = delivery.headers();
        String id = delivery.id();
        Map<String, Object> headers = new HashMap<>(16 + sent.size() * 2);
        // the message's own headers first: RMQ's names (rmq_...) cannot be among them, except the dead-letter story's
        headers.putAll(sent);
        headers.put(RmqHeaders.TOPIC, delivery.topic());
        headers.put(RmqHeaders.SLOT, delivery.slot());
        headers.put(RmqHeaders.ATTEMPT, delivery.attempt());
        headers.put(RmqHeaders.MAX_RETRIES, maxRetries);
        headers.put(RmqHeaders.SCORE, delivery.score());
        headers.put(RmqHeaders.LEASE_DEADLINE, delivery.leaseDeadline());
        headers.put(RmqHeaders.LISTENER_ID, listenerId);
        headers.put(RmqHeaders.BODY, delivery.body());
        if (id != null) {
            headers.put(RmqHeaders.ID, id);
        }
        String group = sent.get(OutgoingMessage.GROUP_HEADER);
        if (group != null) {
            headers.put(RmqHeaders.GROUP, group);
        }
        // a Message cannot carry null: a body that reads as JSON null reaches the converter as it is stored
        Message<Object> message = new GenericMessage<>(payload == null ? delivery.body() : payload,
                new RmqMessageHeaders(headers));
        if (takesRmqMessage) {
            invoke(method, message, returns, requests, "listener with this message", delivery,
                    new RmqMessage<>(delivery.topic(),
                    delivery.slot(), delivery.attempt(), maxRetries, delivery.score(), payload, delivery.body(), id,
                    sent));
        }
        else {
            invoke(method, message, returns, requests, "listener with this message", delivery);
        }
    }

    /**
     * Calls {@code method} for {@code message} (with {@code providedArgs} by type) and sends what it returned through
     * {@code returns} (if any). Arguments that cannot be resolved or converted for this very message fail the same
     * way on every attempt: non-retryable ("cannot call the {@code what}: ..."), dead with the reason.
     * <p>
     * A request ({@link RmqReplies#isRequest}, with {@code requests}): what the method returned (null for nothing) goes
     * back to the requester instead, before the delivery is acknowledged (a failed reply fails the attempt, as a
     * failed {@code @SendTo} send does); when the request asked for failures back, what the method threw goes back
     * and the delivery is acknowledged: the requester decides what follows.
     */
    static void invoke(InvocableHandlerMethod method, Message<?> message, ReturnValueHandler returns,
            @Nullable Supplier<RmqReplies> requests, String what, Object... providedArgs) throws Exception {
        boolean request = requests != null && RmqReplies.isRequest(message.getHeaders());
        Object returned;
        try {
            try {
                returned = method.invoke(message, providedArgs);
            }
            catch (MethodArgumentResolutionException | MessageConversionException ex) {
                // thrown while the arguments were resolved for this message (the method itself did not see it)
                if (((MessagingException) ex).getFailedMessage() == message) {
                    throw new RmqNonRetryableException("cannot call the " + what + ": " + ex.getMessage(), ex);
                }
                throw ex;
            }
        }
        catch (Exception ex) {
            if (request && RmqReplies.wantsFailures(message.getHeaders())) {
                await(requests.get().replyFailure(message.getHeaders(), ex));
                return;
            }
            throw ex;
        }
        if (request) {
            await(requests.get().reply(message.getHeaders(), returned));
            return;
        }
        if (returns != null && returned != null) {
            returns.handle(returned, message);
        }
    }

    /** Waits for a reply's write; its failure fails the attempt as it was. */
    private static void await(CompletableFuture<Boolean> write) throws Exception {
        try {
            write.join();
        }
        catch (CompletionException ex) {
            if (ex.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw ex;
        }
    }
}
