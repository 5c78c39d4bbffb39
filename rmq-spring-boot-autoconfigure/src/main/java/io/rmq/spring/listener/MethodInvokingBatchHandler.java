package io.rmq.spring.listener;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.listener.RmqListenerAnnotationBeanPostProcessor.Signature;
import org.springframework.core.MethodParameter;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Headers;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;
import org.springframework.messaging.support.GenericMessage;
import org.springframework.messaging.support.MessageHeaderAccessor;
import org.jspecify.annotations.Nullable;

/**
 * Calls an {@code @RmqListener(batch = "true")} method through Spring Messaging, as spring-kafka's batch listeners
 * are called: the batch becomes one {@link Message} whose payload is the converted {@code List} ({@code List<T>}, or
 * {@code List<RmqMessage<T>>} when the method takes those) and whose headers describe the batch: {@link RmqHeaders#TOPIC},
 * {@link RmqHeaders#SLOT} (a batch is one slot's), {@link RmqHeaders#LISTENER_ID} and {@link RmqHeaders#MAX_RETRIES}
 * as single values, {@link RmqHeaders#ATTEMPT}, {@link RmqHeaders#SCORE} and {@link RmqHeaders#LEASE_DEADLINE} as
 * lists, one element per message, in the batch's order; so are {@link RmqHeaders#ID} and each header the messages were
 * sent with ({@code @Header("tenant") List<String>}), null for a message without it, present when any message of the
 * batch has it.
 * <p>
 * It is also a {@link MessageHandler} (a batch of one), so that it travels in a {@link RmqListenerEndpoint}; the
 * container factory recognises it and builds a batch container.
 */
final class MethodInvokingBatchHandler implements BatchMessageHandler<Object>, MessageHandler<Object> {

    private final InvocableHandlerMethod method;
    private final String listenerId;
    private final int maxRetries;
    private final boolean takesRmqMessages;
    private final MethodInvokingHandler.ReturnValueHandler returns;

    MethodInvokingBatchHandler(InvocableHandlerMethod method, String listenerId, int maxRetries,
            boolean takesRmqMessages, MethodInvokingHandler.ReturnValueHandler returns) {
        this.method = method;
        this.listenerId = listenerId;
        this.maxRetries = maxRetries;
        this.takesRmqMessages = takesRmqMessages;
        this.returns = returns;
    }

    @Override
    public void handle(List<Object> payloads, List<Delivery> deliveries) throws Exception {
        Delivery first = deliveries.get(0);
        int size = deliveries.size();
        List<Integer> attempts = new ArrayList<>(size);
        List<Double> scores = new ArrayList<>(size);
        List<Long> leaseDeadlines = new ArrayList<>(size);
        for (Delivery delivery : deliveries) {
            attempts.add(delivery.attempt());
            scores.add(delivery.score());
            leaseDeadlines.add(delivery.leaseDeadline());
        }
        Map<String, Object> headers = new HashMap<>(16);
        // the messages' own headers first, each a list as the per-message headers below (RMQ's names cannot clash)
        headers.putAll(perMessage(deliveries));
        headers.put(RmqHeaders.TOPIC, first.topic());
        headers.put(RmqHeaders.SLOT, first.slot());
        headers.put(RmqHeaders.LISTENER_ID, listenerId);
        headers.put(RmqHeaders.MAX_RETRIES, maxRetries);
        headers.put(RmqHeaders.ATTEMPT, Collections.unmodifiableList(attempts));
        headers.put(RmqHeaders.SCORE, Collections.unmodifiableList(scores));
        headers.put(RmqHeaders.LEASE_DEADLINE, Collections.unmodifiableList(leaseDeadlines));
        Object payload = payloads;
        if (takesRmqMessages) {
            List<RmqMessage<Object>> messages = new ArrayList<>(size);
            for (int i = 0; i < size; i++) {
                Delivery d = deliveries.get(i);
                messages.add(new RmqMessage<>(d.topic(), d.slot(), d.attempt(), maxRetries, d.score(), payloads.get(i),
                        d.body(), d.id(), d.headers()));
            }
            payload = Collections.unmodifiableList(messages);
        }
        MethodInvokingHandler.invoke(method, new GenericMessage<>(payload, new RmqMessageHeaders(headers)), returns, null,
                "batch listener with this batch");
    }

    /**
     * The ids ({@link RmqHeaders#ID}) and the messages' own headers as lists, one element per message in the batch's
     * order, null where a message has none; a name no message of the batch has is absent (as for a single message).
     */
    private static Map<String, List<@Nullable String>> perMessage(List<Delivery> deliveries) {
        Map<String, List<@Nullable String>> lists = null;
        int size = deliveries.size();
        for (int i = 0; i < size; i++) {
            Delivery delivery = deliveries.get(i);
            String id = delivery.id();
            Map<String, String> sent = delivery.headers();
            if (id == null && sent.isEmpty()) {
                continue;
            }
            if (lists == null) {
                lists = new LinkedHashMap<>();
            }
            if (id != null) {
                list(lists, RmqHeaders.ID, size).set(i, id);
            }
            String group = sent.get(OutgoingMessage.GROUP_HEADER);
            if (group != null) {
                list(lists, RmqHeaders.GROUP, size).set(i, group);
            }
            for (Map.Entry<String, String> header : sent.entrySet()) {
                list(lists, header.getKey(), size).set(i, header.getValue());
            }
        }
        if (lists == null) {
            return Map.of();
        }
        lists.replaceAll((name, values) -> Collections.unmodifiableList(values));
        return lists;
    }

    private static List<@Nullable String> list(Map<String, List<@Nullable String>> lists, String name, int size) {
        return lists.computeIfAbsent(name, n -> new ArrayList<>(Collections.nCopies(size, null)));
    }

    /** A single delivery, as a batch of one. */
    @Override
    public void handle(Object payload, Delivery delivery) throws Exception {
        handle(Collections.singletonList(payload), List.of(delivery));
    }

    /**
     * What a batch method takes: exactly one {@code List<T>}, {@code List<RmqMessage<T>>} or {@code Message<List<T>>}
     * parameter (the element type {@code T} is what each body is converted to), the others {@code @Header} /
     * {@code @Headers} / {@code MessageHeaders} parameters.
     */
    static Signature signature(Method method) {
        Type elementType = null;
        boolean takesRmqMessages = false;
        int payloadParameters = 0;
        for (int i = 0; i < method.getParameterCount(); i++) {
            MethodParameter parameter = new MethodParameter(method, i);
            Class<?> raw = parameter.getParameterType();
            Header header = parameter.getParameterAnnotation(Header.class);
            if (header != null && RmqHeaders.BODY.equals(header.value().isEmpty() ? header.name() : header.value())) {
                throw new IllegalArgumentException("a batch listener has no " + RmqHeaders.BODY + " header; take"
                        + " List<RmqMessage<T>> for the stored bodies");
            }
            if (parameter.hasParameterAnnotation(Header.class) || parameter.hasParameterAnnotation(Headers.class)
                    || MessageHeaders.class.isAssignableFrom(raw) || MessageHeaderAccessor.class.isAssignableFrom(raw)) {
                continue;
            }
            payloadParameters++;
            Type type = parameter.getGenericParameterType();
            if (raw == Message.class) {
                type = argument(type);
                raw = type instanceof ParameterizedType pt ? (Class<?>) pt.getRawType()
                        : type instanceof Class<?> c ? c : Object.class;
            }
            if (raw != List.class) {
                throw new IllegalArgumentException(notABatch(parameter.getParameterType().getSimpleName()));
            }
            Type element = argument(type);
            Class<?> elementRaw = element instanceof ParameterizedType pt ? (Class<?>) pt.getRawType()
                    : element instanceof Class<?> c ? c : null;
            if (elementRaw == RmqMessage.class) {
                takesRmqMessages = true;
                Type inner = argument(element);
                element = inner == null ? String.class : inner;
            }
            else if (elementRaw == Message.class || elementRaw == Delivery.class) {
                throw new IllegalArgumentException("a batch listener cannot take List<" + elementRaw.getSimpleName()
                        + ">; take List<T> (with @Header lists) or List<RmqMessage<T>>");
            }
            if (!(element instanceof Class<?> || element instanceof ParameterizedType
                    || element instanceof java.lang.reflect.GenericArrayType)) {
                throw new IllegalArgumentException("the batch parameter " + parameter.getGenericParameterType()
                        .getTypeName() + " needs a concrete element type, e.g. List<Order>");
            }
            elementType = element;
        }
        if (payloadParameters != 1) {
            throw new IllegalArgumentException("a batch listener takes exactly one List<T>, List<RmqMessage<T>> or"
                    + " Message<List<T>> parameter (the others @Header parameters), but the method takes "
                    + payloadParameters);
        }
        return new Signature(elementType, takesRmqMessages);
    }

    private static String notABatch(String parameterType) {
        return "a batch listener (batch = \"true\") takes List<T>, List<RmqMessage<T>> or Message<List<T>>, not "
                + parameterType;
    }

    /** The first type argument, or null when there is none or it is a wildcard. */
    private static Type argument(Type type) {
        if (type instanceof ParameterizedType pt) {
            Type argument = pt.getActualTypeArguments()[0];
            return argument instanceof WildcardType ? null : argument;
        }
        return null;
    }
}
