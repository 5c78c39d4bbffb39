package io.rmq.spring.listener;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailurePolicy;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqErrorHandler;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RateLimit;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.annotation.RmqReply;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.MethodParameter;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Headers;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.messaging.handler.annotation.support.DefaultMessageHandlerMethodFactory;
import org.springframework.messaging.handler.annotation.support.MessageHandlerMethodFactory;
import org.springframework.messaging.handler.invocation.InvocableHandlerMethod;
import org.springframework.messaging.support.MessageHeaderAccessor;
import org.springframework.validation.Validator;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.StringUtils;

/**
 * Finds {@link RmqListener} methods on beans, resolves their attributes ({@code ${...}} placeholders, defaults from
 * {@code rmq.consumer.*}), checks their signatures, and once all singletons exist registers one container per method
 * in the {@link RmqListenerEndpointRegistry}. Methods are called through Spring Messaging's
 * {@link MessageHandlerMethodFactory} ({@code @Payload}, {@code @Header}, {@code Message<T>}, as {@code @KafkaListener}). Every problem fails start-up with the bean, the method and the cause.
 */
public class RmqListenerAnnotationBeanPostProcessor
        implements BeanPostProcessor, BeanFactoryAware, SmartInitializingSingleton {

    private ConfigurableBeanFactory beanFactory;
    private final List<PendingEndpoint> pending = new ArrayList<>();
    private MessageHandlerMethodFactory handlerMethodFactory;
    private final Map<RmqListenerEndpoint, ReplySender> replySenders = new IdentityHashMap<>();

    private record PendingEndpoint(String beanName, Object bean, Method method, RmqListener annotation) {
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beanFactory = (ConfigurableBeanFactory) beanFactory;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        if (!AnnotationUtils.isCandidateClass(targetClass, RmqListener.class)) {
            return bean;
        }
        Map<Method, RmqListener> methods = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<RmqListener>) m -> AnnotatedElementUtils.findMergedAnnotation(m,
                        RmqListener.class));
        synchronized (pending) {
            methods.forEach((method, annotation) -> pending.add(new PendingEndpoint(beanName, bean, method, annotation)));
        }
        return bean;
    }

    @Override
    public void afterSingletonsInstantiated() {
        RmqListenerEndpointRegistry registry = beanFactory.getBean(RmqListenerEndpointRegistry.class);
        RmqListenerContainerFactory factory = beanFactory.getBean(RmqListenerContainerFactory.class);
        if (handlerMethodFactory == null) {
            handlerMethodFactory = handlerMethodFactory();
        }
        List<PendingEndpoint> endpoints;
        synchronized (pending) {
            endpoints = new ArrayList<>(pending);
            pending.clear();
        }
        Map<RmqListenerEndpoint, String> built = new IdentityHashMap<>();
        List<RmqListenerEndpoint> declared = new ArrayList<>();
        for (PendingEndpoint p : endpoints) {
            String where = "@RmqListener on bean '" + p.beanName + "' method '" + p.method.getDeclaringClass().getSimpleName()
                    + "." + p.method.getName() + "'";
            try {
                RmqListenerEndpoint endpoint = endpoint(p, factory, where);
                built.put(endpoint, where);
                declared.add(endpoint);
            }
            catch (RuntimeException ex) {
                throw new IllegalStateException(where + ": " + ex.getMessage(), ex);
            }
        }
        for (RmqListenerEndpoint endpoint : deadLetterSourcesFirst(declared)) {
            try {
                registry.registerListenerContainer(factory.createContainer(endpoint), endpoint.autoStartup());
            }
            catch (RuntimeException ex) {
                throw new IllegalStateException(built.get(endpoint) + ": " + ex.getMessage(), ex);
            }
        }
        // a reply topic known by now (defined in properties, by a listener, or in Redis earlier) is checked now, not
        // at the first reply; others are checked when they are sent to
        Map<String, TopicDefinition> known = beanFactory.getBean(Rmq.class).topics().all();
        replySenders.forEach((endpoint, replies) -> {
            TopicDefinition target = known.get(replies.topic());
            if (target != null) {
                try {
                    replies.check(target);
                }
                catch (RuntimeException ex) {
                    throw new IllegalStateException(built.get(endpoint) + ": " + ex.getMessage(), ex);
                }
            }
        });
        replySenders.clear();
    }

    /**
     * The endpoints in the order their containers are created: a listener on a dead-letter topic after the listeners
     * whose dead-letter topic it is (creating their consumer defines it, when nothing else did), whatever the order the
     * beans were declared in. Otherwise in declaration order (a cycle, too).
     */
    static List<RmqListenerEndpoint> deadLetterSourcesFirst(List<RmqListenerEndpoint> endpoints) {
        List<RmqListenerEndpoint> ordered = new ArrayList<>(endpoints.size());
        List<RmqListenerEndpoint> waiting = new ArrayList<>(endpoints);
        while (!waiting.isEmpty()) {
            List<RmqListenerEndpoint> ready = waiting.stream().filter(e -> waiting.stream().noneMatch(
                    source -> source != e && e.topic().equals(source.settings().failures().deadLetterTopic())))
                    .toList();
            List<RmqListenerEndpoint> next = ready.isEmpty() ? List.of(waiting.get(0)) : ready;
            ordered.addAll(next);
            waiting.removeAll(next);
        }
        return ordered;
    }

    private RmqListenerEndpoint endpoint(PendingEndpoint p, RmqListenerContainerFactory factory, String where) {
        ConsumerSettings defaults = factory.getDefaultSettings();
        RmqListener a = p.annotation;
        String topic = resolve(a.topic());
        if (!StringUtils.hasText(topic)) {
            throw new IllegalArgumentException("topic must not be empty");
        }
        TopicDefinition definition = null;
        String type = resolve(a.type());
        if (StringUtils.hasText(type)) {
            definition = new TopicDefinition(topic, parse("type", type, t -> TopicType.valueOf(t.trim().toUpperCase())),
                    attribute("slotAmount", a.slotAmount(), 16, Integer::parseInt));
        }
        else if (StringUtils.hasText(a.slotAmount())) {
            throw new IllegalArgumentException("slotAmount is set but type is not; set both to define the topic here");
        }
        int concurrency = attribute("concurrency", a.concurrency(), factory.getDefaultConcurrency(), Integer::parseInt);
        int batchSize = attribute("batchSize", a.batchSize(), defaults.batchSize(), Integer::parseInt);
        Duration lease = attribute("lease", a.lease(), defaults.lease(), DurationStyle::detectAndParse);
        int maxRetries = attribute("maxRetries", a.maxRetries(), defaults.retry().maxRetries(), Integer::parseInt);
        BackoffPolicy b = defaults.retry().backoff();
        BackoffPolicy backoff = new BackoffPolicy(
                attribute("backoffInitial", a.backoffInitial(), b.initial(), DurationStyle::detectAndParse),
                attribute("backoffMultiplier", a.backoffMultiplier(), b.multiplier(), Double::parseDouble),
                attribute("backoffMax", a.backoffMax(), b.max(), DurationStyle::detectAndParse),
                attribute("backoffJitter", a.backoffJitter(), b.jitter(), Double::parseDouble));
        boolean autoStartup = attribute("autoStartup", a.autoStartup(), true, RmqListenerAnnotationBeanPostProcessor::bool);
        String id = StringUtils.hasText(a.id()) ? resolve(a.id()) : p.beanName + "." + p.method.getName();

        Signature signature = signature(p.method);
        InvocableHandlerMethod invocable = handlerMethodFactory.createInvocableHandlerMethod(p.bean,
                AopUtils.selectInvocableMethod(p.method, p.bean.getClass()));
        ReplySender replies = replySender(p.method);
        MessageHandler<Object> handler = new MethodInvokingHandler(invocable, id, maxRetries,
                signature.takesRmqMessage(), replies);
        Type payloadType = signature.payloadType();
        RmqErrorHandler errorHandler = factory.getDefaultErrorHandler();
        String errorHandlerName = resolve(a.errorHandler());
        if (StringUtils.hasText(errorHandlerName)) {
            errorHandler = parse("errorHandler", errorHandlerName,
                    name -> beanFactory.getBean(name, RmqErrorHandler.class));
        }
        String deadLetterTopic = resolve(a.deadLetterTopic());
        FailurePolicy failures = new FailurePolicy(List.of(a.noRetryFor()), errorHandler,
                StringUtils.hasText(deadLetterTopic) ? parse("deadLetterTopic", deadLetterTopic, t -> {
                    TopicDefinition.validateName(t);
                    return t;
                }) : null);
        ConsumerSettings settings = new ConsumerSettings(batchSize, lease, new RetryPolicy(maxRetries, backoff),
                failures);
        ConsumeMode configured = factory.configuredMode(id);
        ConsumeMode mode = attribute("mode", a.mode(), configured == null ? ConsumeMode.CONCURRENT : configured,
                m -> ConsumeMode.valueOf(m.toUpperCase()));
        RateLimit rateLimit = attribute("rateLimit", a.rateLimit(), factory.configuredRateLimit(topic), RateLimit::parse);
        RmqListenerEndpoint endpoint = new RmqListenerEndpoint(id, topic, definition, settings, concurrency,
                autoStartup, payloadType, handler, where, mode, rateLimit);
        if (replies != null) {
            replySenders.put(endpoint, replies);
        }
        return endpoint;
    }

    /** Sends the method's return value when it has {@code @SendTo}; null when it has none. */
    private ReplySender replySender(Method method) {
        SendTo sendTo = AnnotatedElementUtils.findMergedAnnotation(method, SendTo.class);
        RmqReply reply = AnnotatedElementUtils.findMergedAnnotation(method, RmqReply.class);
        if (sendTo == null) {
            if (reply != null) {
                throw new IllegalArgumentException("@RmqReply needs @SendTo(\"<topic>\") on the method");
            }
            return null;
        }
        if (method.getReturnType() == void.class) {
            throw new IllegalArgumentException("@SendTo needs a return value to send, but the method returns void");
        }
        String[] topics = sendTo.value();
        String replyTopic = topics.length == 1 ? resolve(topics[0]) : null;
        if (!StringUtils.hasText(replyTopic)) {
            throw new IllegalArgumentException("@SendTo must name one topic, but names " + List.of(topics));
        }
        parse("@SendTo", replyTopic, TopicDefinition::validateName);
        return new ReplySender(beanFactory.getBean(Rmq.class), replyTopic.trim(),
                reply == null ? null : attribute("@RmqReply timeRange", reply.timeRange(), null, DurationStyle::detectAndParse),
                reply == null ? null : attribute("@RmqReply priority", reply.priority(), null, Long::parseLong),
                reply == null ? null : attribute("@RmqReply delay", reply.delay(), null, DurationStyle::detectAndParse));
    }

    /**
     * What the container converts the body to (the type of the payload parameter, of {@code T} in
     * {@code RmqMessage<T>} or {@code Message<T>}; {@code byte[]} when the method takes none) and whether the method
     * takes an {@link RmqMessage}. At most one parameter may take the payload; the others are headers
     * ({@code @Header}, {@code @Headers}, {@code MessageHeaders}) or the {@link Delivery}.
     */
    record Signature(Type payloadType, boolean takesRmqMessage) {
    }

    static Signature signature(Method method) {
        int parameterCount = RmqMessageHandlerMethodFactory.declaredParameterCount(method); // a suspend fun's continuation left out
        if (parameterCount == 0) {
            throw new IllegalArgumentException("the method takes 0 parameters; it must take the payload (or"
                    + " RmqMessage<T>, Message<T>, a @Header)");
        }
        Type payloadType = null;
        boolean takesRmqMessage = false;
        List<String> payloadParameters = new ArrayList<>();
        for (int i = 0; i < parameterCount; i++) {
            MethodParameter parameter = new MethodParameter(method, i);
            Type type = parameter.getGenericParameterType();
            Class<?> raw = parameter.getParameterType();
            if (parameter.hasParameterAnnotation(Header.class) || parameter.hasParameterAnnotation(Headers.class)
                    || MessageHeaders.class.isAssignableFrom(raw) || MessageHeaderAccessor.class.isAssignableFrom(raw)
                    || raw == Delivery.class) {
                continue;
            }
            payloadParameters.add(raw.getSimpleName());
            if (raw == RmqMessage.class || raw == Message.class) {
                takesRmqMessage |= raw == RmqMessage.class;
                Type argument = type instanceof ParameterizedType pt ? pt.getActualTypeArguments()[0] : null;
                if (argument == null || argument instanceof java.lang.reflect.WildcardType) {
                    payloadType = raw == RmqMessage.class ? String.class : byte[].class;
                }
                else if (argument instanceof Class<?> || argument instanceof ParameterizedType) {
                    payloadType = argument;
                }
                else {
                    throw new IllegalArgumentException(raw.getSimpleName() + "<" + argument.getTypeName()
                            + "> needs a concrete payload type");
                }
            }
            else if (type instanceof Class<?> || type instanceof ParameterizedType
                    || type instanceof java.lang.reflect.GenericArrayType) {
                payloadType = type;
            }
            else {
                throw new IllegalArgumentException("the payload parameter type " + type.getTypeName()
                        + " is not concrete");
            }
        }
        if (payloadParameters.size() > 1) {
            throw new IllegalArgumentException("the method takes " + payloadParameters.size() + " payload parameters "
                    + payloadParameters + "; it must take at most one (the payload, RmqMessage<T> or Message<T>),"
                    + " the others must be @Header parameters");
        }
        return new Signature(payloadType == null ? byte[].class : payloadType, takesRmqMessage);
    }

    /**
     * Spring Messaging's method factory with RMQ's body converter and, when the application has one, its
     * {@link Validator} (for {@code @Valid} / {@code @Validated} payloads).
     */
    private MessageHandlerMethodFactory handlerMethodFactory() {
        DefaultMessageHandlerMethodFactory methodFactory = new RmqMessageHandlerMethodFactory(); // + suspend funs
        methodFactory.setMessageConverter(new RmqBodyMessageConverter(beanFactory.getBean(Rmq.class).options().codec()));
        Validator validator = validator(beanFactory);
        if (validator != null) {
            methodFactory.setValidator(validator);
        }
        methodFactory.setBeanFactory(beanFactory);
        methodFactory.afterPropertiesSet();
        return methodFactory;
    }

    /**
     * The application's {@link Validator}: its only one (Spring MVC's and WebFlux's adapters, which wrap Boot's
     * {@code defaultValidator}, not counted), else Boot's {@code defaultValidator}; null when there is none.
     */
    static Validator validator(BeanFactory beanFactory) {
        if (!(beanFactory instanceof ListableBeanFactory listable)) {
            return null;
        }
        List<String> names = new ArrayList<>(List.of(listable.getBeanNamesForType(Validator.class, false, false)));
        names.removeAll(List.of("mvcValidator", "webFluxValidator"));
        if (names.size() == 1) {
            return beanFactory.getBean(names.get(0), Validator.class);
        }
        return names.contains("defaultValidator") ? beanFactory.getBean("defaultValidator", Validator.class) : null;
    }

    private String resolve(String value) {
        return value == null ? null : beanFactory.resolveEmbeddedValue(value);
    }

    private <T> T attribute(String name, String raw, T fallback, Function<String, T> parser) {
        String value = resolve(raw);
        if (!StringUtils.hasText(value)) {
            return fallback;
        }
        return parse(name, value, parser);
    }

    private static <T> T parse(String name, String value, Function<String, T> parser) {
        try {
            return parser.apply(value.trim());
        }
        catch (RuntimeException ex) {
            throw new IllegalArgumentException("attribute " + name + " '" + value + "' cannot be read: " + ex.getMessage(), ex);
        }
    }

    private static boolean bool(String value) {
        if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(value);
        }
        throw new IllegalArgumentException("must be true or false");
    }
}
