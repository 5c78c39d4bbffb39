package io.rmq.spring.listener;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailurePolicy;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqErrorHandler;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.BodyCodec;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RateLimit;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqHandler;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.annotation.RmqListeners;
import io.rmq.spring.annotation.RmqReply;
import org.springframework.aop.support.AopUtils;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanExpressionContext;
import org.springframework.beans.factory.config.BeanExpressionResolver;
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
 * Finds {@link RmqListener} methods on beans (each repeated annotation a listener of its own) and {@code @RmqListener}
 * classes with {@link RmqHandler} methods, resolves their attributes ({@code ${...}} placeholders, then SpEL
 * {@code #{...}}; defaults from {@code rmq.consumer.*}), checks their signatures, and once all singletons exist
 * registers one container per listener in the {@link RmqListenerEndpointRegistry}, built by the
 * {@link RmqListenerContainerFactory} the listener names (else {@value #DEFAULT_CONTAINER_FACTORY}). Methods are
 * called through Spring Messaging's {@link MessageHandlerMethodFactory} ({@code @Payload}, {@code @Header}, {@code Message<T>}, as {@code @KafkaListener}). Every problem fails start-up with the bean, the method and the cause.
 */
public class RmqListenerAnnotationBeanPostProcessor
        implements BeanPostProcessor, BeanFactoryAware, SmartInitializingSingleton {

    /** The factory of listeners that name none (Spring Kafka's {@code kafkaListenerContainerFactory}, likewise). */
    public static final String DEFAULT_CONTAINER_FACTORY = "rmqListenerContainerFactory";

    private ConfigurableBeanFactory beanFactory;
    private final List<PendingEndpoint> pending = new ArrayList<>();
    private MessageHandlerMethodFactory handlerMethodFactory;
    private final Map<RmqListenerEndpoint, ReplySender> replySenders = new IdentityHashMap<>();
    /** The {@code @SendTo} of {@code @RmqHandler} methods, by where they are (for messages), checked like replySenders. */
    private final List<Map.Entry<String, ReplySender>> handlerReplySenders = new ArrayList<>();

    /** Where the context's SpEL expressions ({@code #{...}} in attributes) are evaluated; set with the bean factory. */
    private BeanExpressionContext expressionContext;

    /**
     * One {@code @RmqListener} found on a bean.
     *
     * @param method   the listener method; for a class-level listener the first of its handlers (for messages)
     * @param ordinal  1 for the first {@code @RmqListener} on its method or class, n for the n-th (default ids)
     * @param handlers the {@code @RmqHandler} methods of a class-level listener; null on a method
     */
    private record PendingEndpoint(String beanName, Object bean, Method method, RmqListener annotation, int ordinal,
            List<Method> handlers) {
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beanFactory = (ConfigurableBeanFactory) beanFactory;
        this.expressionContext = new BeanExpressionContext(this.beanFactory, null);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        if (!AnnotationUtils.isCandidateClass(targetClass, List.of(RmqListener.class, RmqListeners.class,
                RmqHandler.class))) {
            return bean;
        }
        List<PendingEndpoint> found = declarations(bean, beanName, targetClass);
        synchronized (pending) {
            pending.addAll(found);
        }
        return bean;
    }

    /**
     * The listeners a bean declares: one per {@code @RmqListener} on each method (repeatable), one per
     * {@code @RmqListener} on the class, which then needs {@code @RmqHandler} methods (in the order they are tried).
     */
    private List<PendingEndpoint> declarations(Object bean, String beanName, Class<?> targetClass) {
        List<PendingEndpoint> found = new ArrayList<>();
        Map<Method, Set<RmqListener>> methods = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<Set<RmqListener>>) m -> {
                    Set<RmqListener> annotations = AnnotatedElementUtils.findMergedRepeatableAnnotations(m,
                            RmqListener.class);
                    return annotations.isEmpty() ? null : annotations;
                });
        methods.forEach((method, annotations) -> {
            int ordinal = 0;
            for (RmqListener annotation : annotations) {
                found.add(new PendingEndpoint(beanName, bean, method, annotation, ++ordinal, null));
            }
        });
        Map<Method, RmqHandler> handlers = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<RmqHandler>) m -> AnnotatedElementUtils.findMergedAnnotation(m,
                        RmqHandler.class));
        Set<RmqListener> onClass = AnnotatedElementUtils.findMergedRepeatableAnnotations(targetClass,
                RmqListener.class);
        String where = "bean '" + beanName + "' (" + targetClass.getSimpleName() + ")";
        if (onClass.isEmpty()) {
            if (!handlers.isEmpty()) {
                throw new IllegalStateException("@RmqHandler methods " + methodNames(handlers.keySet()) + " on " + where
                        + " need @RmqListener on the class");
            }
            return found;
        }
        String onClassWhere = "@RmqListener on bean '" + beanName + "' class '" + targetClass.getSimpleName() + "'";
        if (handlers.isEmpty()) {
            throw new IllegalStateException(onClassWhere + ": the class has no @RmqHandler methods to deliver to");
        }
        for (Method method : handlers.keySet()) {
            if (methods.containsKey(method)) {
                throw new IllegalStateException(onClassWhere + ": method '" + method.getDeclaringClass().getSimpleName()
                        + "." + method.getName() + "' has both @RmqListener and @RmqHandler; it can be one of them");
            }
        }
        List<Method> ordered = inDeclarationOrder(targetClass, handlers.keySet());
        int ordinal = 0;
        for (RmqListener annotation : onClass) {
            found.add(new PendingEndpoint(beanName, bean, ordered.get(0), annotation, ++ordinal, ordered));
        }
        return found;
    }

    private static List<String> methodNames(java.util.Collection<Method> methods) {
        return methods.stream().map(m -> m.getDeclaringClass().getSimpleName() + "." + m.getName()).sorted().toList();
    }

    /**
     * The methods in the order they are declared in the class file (javac writes them in source order; Spring reads
     * {@code @Bean} methods the same way), a subclass's before its superclass's; methods whose class file cannot be
     * read come last, by name and signature.
     */
    static List<Method> inDeclarationOrder(Class<?> type, java.util.Collection<Method> methods) {
        List<String> declared = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            ClassLoader loader = c.getClassLoader() != null ? c.getClassLoader() : ClassLoader.getSystemClassLoader();
            try (java.io.InputStream in = loader.getResourceAsStream(c.getName().replace('.', '/') + ".class")) {
                if (in == null) {
                    continue;
                }
                String owner = c.getName();
                new ClassReader(in).accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {
                    @Override
                    public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                            String[] exceptions) {
                        declared.add(owner + "#" + name + descriptor);
                        return null;
                    }
                }, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
            }
            catch (java.io.IOException | RuntimeException ex) {
                // unreadable class file: its methods sort by name below
            }
        }
        java.util.function.Function<Method, String> key = m -> m.getDeclaringClass().getName() + "#" + m.getName()
                + org.springframework.asm.Type.getMethodDescriptor(m);
        java.util.function.ToIntFunction<Method> position = m -> {
            int index = declared.indexOf(key.apply(m));
            return index < 0 ? Integer.MAX_VALUE : index;
        };
        return methods.stream().sorted(java.util.Comparator.comparingInt(position).thenComparing(key)).toList();
    }

    @Override
    public void afterSingletonsInstantiated() {
        RmqListenerEndpointRegistry registry = beanFactory.getBean(RmqListenerEndpointRegistry.class);
        if (handlerMethodFactory == null) {
            handlerMethodFactory = handlerMethodFactory();
        }
        List<PendingEndpoint> endpoints;
        synchronized (pending) {
            endpoints = new ArrayList<>(pending);
            pending.clear();
        }
        Map<RmqListenerEndpoint, String> built = new IdentityHashMap<>();
        Map<RmqListenerEndpoint, RmqListenerContainerFactory> factories = new IdentityHashMap<>();
        Map<String, String> ids = new java.util.HashMap<>();
        List<RmqListenerEndpoint> declared = new ArrayList<>();
        for (PendingEndpoint p : endpoints) {
            String where = describe(p);
            try {
                RmqListenerContainerFactory factory = containerFactory(p.annotation);
                RmqListenerEndpoint endpoint = endpoint(p, factory, where);
                String sameId = ids.putIfAbsent(endpoint.id(), where);
                if (sameId != null) {
                    throw new IllegalArgumentException(sameId + " already has the id '" + endpoint.id()
                            + "'; listener ids must be unique: set distinct ids");
                }
                built.put(endpoint, where);
                factories.put(endpoint, factory);
                declared.add(endpoint);
            }
            catch (RuntimeException ex) {
                throw new IllegalStateException(where + ": " + ex.getMessage(), ex);
            }
        }
        for (RmqListenerEndpoint endpoint : deadLetterSourcesFirst(declared)) {
            try {
                registry.registerListenerContainer(factories.get(endpoint).createContainer(endpoint),
                        endpoint.autoStartup());
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
        checkHandlerReplies(known);
    }

    /** What start-up errors call a listener: the bean and the method, or the bean and the class. */
    private static String describe(PendingEndpoint p) {
        if (p.handlers != null) {
            return "@RmqListener on bean '" + p.beanName + "' class '"
                    + AopUtils.getTargetClass(p.bean).getSimpleName() + "'";
        }
        return "@RmqListener on bean '" + p.beanName + "' method '" + p.method.getDeclaringClass().getSimpleName() + "."
                + p.method.getName() + "'";
    }

    /** The listener's default id: the bean and method (or the bean alone on a class), {@code -n} for the n-th. */
    private static String defaultId(PendingEndpoint p) {
        String base = p.handlers != null ? p.beanName : p.beanName + "." + p.method.getName();
        return p.ordinal > 1 ? base + "-" + p.ordinal : base;
    }

    /**
     * The factory a listener names in {@code containerFactory}; without a name the bean named
     * {@value #DEFAULT_CONTAINER_FACTORY}, else the only {@link RmqListenerContainerFactory}.
     */
    private RmqListenerContainerFactory containerFactory(RmqListener annotation) {
        String name = resolve(annotation.containerFactory());
        if (!StringUtils.hasText(name)) {
            return beanFactory.containsBean(DEFAULT_CONTAINER_FACTORY)
                    ? beanFactory.getBean(DEFAULT_CONTAINER_FACTORY, RmqListenerContainerFactory.class)
                    : beanFactory.getBean(RmqListenerContainerFactory.class);
        }
        name = name.trim();
        if (!beanFactory.containsBean(name)) {
            throw new IllegalArgumentException("containerFactory '" + name + "' is not a bean; the "
                    + "RmqListenerContainerFactory beans are " + containerFactoryNames());
        }
        try {
            return beanFactory.getBean(name, RmqListenerContainerFactory.class);
        }
        catch (org.springframework.beans.factory.BeanNotOfRequiredTypeException ex) {
            throw new IllegalArgumentException("containerFactory '" + name + "' is a " + ex.getActualType().getName()
                    + ", not an RmqListenerContainerFactory; the RmqListenerContainerFactory beans are "
                    + containerFactoryNames(), ex);
        }
    }

    private List<String> containerFactoryNames() {
        return beanFactory instanceof ListableBeanFactory listable
                ? java.util.Arrays.stream(listable.getBeanNamesForType(RmqListenerContainerFactory.class, true, false))
                        .sorted().toList() : List.of();
    }

    /**
     * The handler of a class-level listener: each {@code @RmqHandler} method called as an {@code @RmqListener} method
     * would be (payload, headers, {@code RmqMessage<T>}, {@code @SendTo}), chosen per message by
     * {@link HandlerDispatcher} in the order {@link io.rmq.spring.annotation.RmqHandler} documents: typed handlers in
     * declaration order, then {@code String}, then {@code byte[]}, then the default.
     */
    private HandlerDispatcher dispatcher(PendingEndpoint p, String id, int maxRetries) {
        BodyCodec codec = beanFactory.getBean(Rmq.class).options().codec();
        List<HandlerDispatcher.Route> typed = new ArrayList<>();
        List<HandlerDispatcher.Route> anyBody = new ArrayList<>();
        HandlerDispatcher.Route defaultRoute = null;
        Map<Type, String> byType = new java.util.HashMap<>();
        for (Method method : p.handlers) {
            String name = method.getDeclaringClass().getSimpleName() + "." + method.getName();
            try {
                Signature signature = signature(method);
                InvocableHandlerMethod invocable = handlerMethodFactory.createInvocableHandlerMethod(p.bean,
                        AopUtils.selectInvocableMethod(method, p.bean.getClass()));
                ReplySender replies = handlerReplySender(method, AopUtils.getTargetClass(p.bean));
                if (replies != null) {
                    handlerReplySenders.add(java.util.Map.entry(describe(p) + ", @RmqHandler method '" + name + "'",
                            replies));
                }
                HandlerDispatcher.Route route = HandlerDispatcher.Route.of("'" + name + "'", signature.payloadType(),
                        codec, new MethodInvokingHandler(invocable, id, maxRetries, signature.takesRmqMessage(),
                                replies, this::replies));
                if (AnnotatedElementUtils.findMergedAnnotation(method, RmqHandler.class).isDefault()) {
                    if (defaultRoute != null) {
                        throw new IllegalArgumentException("it is a second @RmqHandler(isDefault = true), after "
                                + defaultRoute.description() + "; a class has at most one default handler");
                    }
                    defaultRoute = route;
                    continue;
                }
                String sameType = byType.putIfAbsent(signature.payloadType(), name);
                if (sameType != null) {
                    throw new IllegalArgumentException("it takes " + signature.payloadType().getTypeName()
                            + " as '" + sameType + "' does, so one of them would never be called; give each handler"
                            + " its own payload type");
                }
                (HandlerDispatcher.takesAnyBody(signature.payloadType()) ? anyBody : typed).add(route);
            }
            catch (RuntimeException ex) {
                throw new IllegalArgumentException("@RmqHandler method '" + name + "': " + ex.getMessage(), ex);
            }
        }
        // String before byte[]: both take any body, the first of them is the last handler tried before the default
        anyBody.sort(java.util.Comparator.comparing(r -> r.payloadType() == byte[].class));
        typed.addAll(anyBody);
        return new HandlerDispatcher(describe(p), typed, defaultRoute, codec);
    }

    /**
     * A handler's own {@code @SendTo} (with its {@code @RmqReply}); without one, the class's {@code @SendTo} and
     * {@code @RmqReply} for a handler that returns a value (as Spring Kafka's class-level {@code @SendTo}).
     */
    private ReplySender handlerReplySender(Method method, Class<?> listenerClass) {
        if (AnnotatedElementUtils.hasAnnotation(method, SendTo.class) || method.getReturnType() == void.class
                || !AnnotatedElementUtils.hasAnnotation(listenerClass, SendTo.class)) {
            return replySender(method);
        }
        return replySender(listenerClass, method);
    }

    /** Checks the {@code @SendTo} of {@code @RmqHandler} methods whose reply topic is known now, as of listeners. */
    private void checkHandlerReplies(Map<String, TopicDefinition> known) {
        try {
            for (Map.Entry<String, ReplySender> entry : handlerReplySenders) {
                TopicDefinition target = known.get(entry.getValue().topic());
                if (target != null) {
                    try {
                        entry.getValue().check(target);
                    }
                    catch (RuntimeException ex) {
                        throw new IllegalStateException(entry.getKey() + ": " + ex.getMessage(), ex);
                    }
                }
            }
        }
        finally {
            handlerReplySenders.clear();
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
        Duration lookAhead = attribute("lookAhead", a.lookAhead(), defaults.lookAhead(), DurationStyle::detectAndParse);
        int maxRetries = attribute("maxRetries", a.maxRetries(), defaults.retry().maxRetries(), Integer::parseInt);
        BackoffPolicy b = defaults.retry().backoff();
        BackoffPolicy backoff = new BackoffPolicy(
                attribute("backoffInitial", a.backoffInitial(), b.initial(), DurationStyle::detectAndParse),
                attribute("backoffMultiplier", a.backoffMultiplier(), b.multiplier(), Double::parseDouble),
                attribute("backoffMax", a.backoffMax(), b.max(), DurationStyle::detectAndParse),
                attribute("backoffJitter", a.backoffJitter(), b.jitter(), Double::parseDouble));
        boolean autoStartup = attribute("autoStartup", a.autoStartup(), true, RmqListenerAnnotationBeanPostProcessor::bool);
        String explicitId = resolve(a.id());
        String id = StringUtils.hasText(explicitId) ? explicitId.trim() : defaultId(p);
        boolean batch = attribute("batch", a.batch(), false, RmqListenerAnnotationBeanPostProcessor::bool);
        MessageHandler<Object> handler;
        Type payloadType;
        ReplySender replies = null;
        if (p.handlers != null) {
            if (batch) {
                throw new IllegalArgumentException("listener '" + id + "': attribute batch 'true' cannot be used on a"
                        + " class with @RmqHandler methods: each message is dispatched to a handler by its own type;"
                        + " put the batch listener on a method taking a List");
            }
            // the container hands over the stored bytes; the dispatcher reads them as each handler's type
            handler = dispatcher(p, id, maxRetries);
            payloadType = byte[].class;
        }
        else {
            Signature signature = batch ? MethodInvokingBatchHandler.signature(p.method) : signature(p.method);
            InvocableHandlerMethod invocable = handlerMethodFactory.createInvocableHandlerMethod(p.bean,
                    AopUtils.selectInvocableMethod(p.method, p.bean.getClass()));
            replies = replySender(p.method);
            handler = batch
                    ? new MethodInvokingBatchHandler(invocable, id, maxRetries, signature.takesRmqMessage(), replies)
                    : new MethodInvokingHandler(invocable, id, maxRetries, signature.takesRmqMessage(), replies,
                            this::replies);
            payloadType = signature.payloadType();
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
        // checked against this listener's lease
        ConsumerSettings settings = new ConsumerSettings(batchSize, lease, new RetryPolicy(maxRetries, backoff,
                factory.deadLetters(topic)),
                failures, lookAhead);
        ConsumeMode configured = factory.configuredMode(id);
        ConsumeMode mode = attribute("mode", a.mode(), configured == null ? ConsumeMode.CONCURRENT : configured,
                m -> ConsumeMode.valueOf(m.toUpperCase()));
        if (batch) {
            checkBatchMode(id, mode, StringUtils.hasText(resolve(a.mode())));
        }
        RateLimit rateLimit = attribute("rateLimit", a.rateLimit(), factory.configuredRateLimit(topic), RateLimit::parse);
        RmqListenerEndpoint endpoint = new RmqListenerEndpoint(id, topic, definition, settings, concurrency,
                autoStartup, payloadType, handler, where, mode, rateLimit);
        if (replies != null) {
            replySenders.put(endpoint, replies);
        }
        return endpoint;
    }

    /** A batch listener is CONCURRENT: an ORDERLY slot is handled one message after another. */
    private static void checkBatchMode(String id, ConsumeMode mode, boolean modeOnAnnotation) {
        if (mode == ConsumeMode.ORDERLY) {
            throw new IllegalArgumentException("listener '" + id + "': attribute batch 'true' cannot be used with mode"
                    + " ORDERLY (" + (modeOnAnnotation ? "set by the mode attribute" : "set by rmq.listeners." + id
                    + ".mode") + "): an ORDERLY slot is handled one message after another, each settled before the"
                    + " next, which a batch (handled and settled together) would break; use mode CONCURRENT, or a"
                    + " listener that takes one message");
        }
    }

    /** The engine's request-reply: a listener method's return value goes back to the requester of a request. */
    private io.rmq.reply.RmqReplies replies() {
        return beanFactory.getBean(Rmq.class).replies();
    }

    /** Sends the method's return value when it has {@code @SendTo}; null when it has none. */
    private ReplySender replySender(Method method) {
        return replySender(method, method);
    }

    /** As {@link #replySender(Method)}, with {@code @SendTo} and {@code @RmqReply} read from {@code source}. */
    private ReplySender replySender(java.lang.reflect.AnnotatedElement source, Method method) {
        SendTo sendTo = AnnotatedElementUtils.findMergedAnnotation(source, SendTo.class);
        RmqReply reply = AnnotatedElementUtils.findMergedAnnotation(source, RmqReply.class);
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

    /**
     * An attribute's value: {@code ${...}} placeholders resolved, then SpEL {@code #{...}} evaluated with the bean
     * factory's {@link BeanExpressionResolver} (as Spring Kafka does), a non-string result as its string.
     */
    private String resolve(String value) {
        if (value == null) {
            return null;
        }
        String resolved = beanFactory.resolveEmbeddedValue(value);
        BeanExpressionResolver expressions = beanFactory.getBeanExpressionResolver();
        if (resolved == null || expressions == null) {
            return resolved;
        }
        Object evaluated;
        try {
            evaluated = expressions.evaluate(resolved, expressionContext);
        }
        catch (org.springframework.beans.factory.BeanExpressionException ex) {
            throw new IllegalArgumentException("expression '" + resolved + "' cannot be evaluated: "
                    + org.springframework.core.NestedExceptionUtils.getMostSpecificCause(ex).getMessage(), ex);
        }
        return evaluated == null ? null : evaluated.toString();
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
