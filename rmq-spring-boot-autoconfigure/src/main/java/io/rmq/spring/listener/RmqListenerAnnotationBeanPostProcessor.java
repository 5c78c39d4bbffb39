package io.rmq.spring.listener;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.rmq.consumer.ConsumerSettings;
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
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * Finds {@link RmqListener} methods on beans, resolves their attributes ({@code ${...}} placeholders, defaults from
 * {@code rmq.consumer.*}), checks their signatures, and once all singletons exist registers one container per method
 * in the {@link RmqListenerEndpointRegistry}. Every problem fails start-up with the bean, the method and the cause.
 */
public class RmqListenerAnnotationBeanPostProcessor
        implements BeanPostProcessor, BeanFactoryAware, SmartInitializingSingleton {

    private ConfigurableBeanFactory beanFactory;
    private final List<PendingEndpoint> pending = new ArrayList<>();

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

        Method invocable = AopUtils.selectInvocableMethod(p.method, p.bean.getClass());
        ReflectionUtils.makeAccessible(invocable);
        Type[] parameters = p.method.getGenericParameterTypes();
        if (parameters.length != 1) {
            throw new IllegalArgumentException("the method must take exactly one parameter (the payload, or"
                    + " RmqMessage<T>), but takes " + parameters.length);
        }
        Type parameter = parameters[0];
        Type payloadType;
        MessageHandler<Object> handler;
        if (rawClass(parameter) == RmqMessage.class) {
            payloadType = parameter instanceof ParameterizedType pt ? pt.getActualTypeArguments()[0] : String.class;
            if (!(payloadType instanceof Class<?>) && !(payloadType instanceof ParameterizedType)) {
                throw new IllegalArgumentException("RmqMessage<" + payloadType.getTypeName()
                        + "> needs a concrete payload type");
            }
            handler = (payload, d) -> invoke(invocable, p.bean,
                    new RmqMessage<>(d.topic(), d.slot(), d.attempt(), maxRetries, d.score(), payload, d.body()));
        }
        else {
            if (!(parameter instanceof Class<?>) && !(parameter instanceof ParameterizedType)
                    && !(parameter instanceof java.lang.reflect.GenericArrayType)) {
                throw new IllegalArgumentException("the payload parameter type " + parameter.getTypeName()
                        + " is not concrete");
            }
            payloadType = parameter;
            handler = (payload, d) -> invoke(invocable, p.bean, payload);
        }
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
        return new RmqListenerEndpoint(id, topic, definition, settings, concurrency, autoStartup, payloadType, handler,
                where, mode, rateLimit);
    }

    private static void invoke(Method method, Object bean, Object argument) throws Exception {
        try {
            method.invoke(bean, argument);
        }
        catch (InvocationTargetException ex) {
            Throwable cause = ex.getTargetException();
            if (cause instanceof Exception e) {
                throw e;
            }
            throw (Error) cause;
        }
    }

    private static Class<?> rawClass(Type type) {
        if (type instanceof Class<?> c) {
            return c;
        }
        if (type instanceof ParameterizedType pt) {
            return (Class<?>) pt.getRawType();
        }
        return Object.class;
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
