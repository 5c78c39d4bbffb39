package io.rmq.modulith;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.TemporalAccessor;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicRegistry;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqHeaders;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.modulith.events.support.BrokerRouting;

/**
 * Turns an event Modulith externalizes into the RMQ message to send: the topic and the id from the routing target
 * ({@code @Externalized("topic::#{key}")}), the headers from {@link EventExternalizationConfiguration#getHeadersFor},
 * the timing and group from {@link RmqExternalized} (or the defaults it names). Thread-safe: the only state is a cache
 * of parsed annotations per event type.
 */
final class EventMessages {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final TemplateParserContext TEMPLATE = new TemplateParserContext();
    /** The smallest RANGE_MERGE window: "as soon as possible" for a topic whose events name none. */
    static final Duration DEFAULT_WINDOW = Duration.ofMillis(1);

    private final EventExternalizationConfiguration configuration;
    private final TopicRegistry topics;
    private final EvaluationContext context;
    private final boolean typeHeader;
    private final Map<Class<?>, Timing> timings = new ConcurrentHashMap<>();

    EventMessages(EventExternalizationConfiguration configuration, TopicRegistry topics, EvaluationContext context,
            boolean typeHeader) {
        this.configuration = configuration;
        this.topics = topics;
        this.context = context;
        this.typeHeader = typeHeader;
    }

    /** The message for {@code payload} (the mapped event); bad routing or timing throws, naming what is wrong. */
    OutgoingMessage toMessage(Object payload, RoutingTarget target) {
        BrokerRouting routing = BrokerRouting.of(target, context);
        String topic = routing.getTarget(payload);
        // without a key the body is the identity (RMQ's default); BrokerRouting would use the topic name, which
        // would merge every event of the topic into one message
        String id = target.getKey() == null ? null : routing.getKey(payload);
        TopicType type = topics.get(topic).type();
        Timing timing = timings.computeIfAbsent(payload.getClass(), Timing::of);
        OutgoingMessage message = timing.message(topic, type, payload, context).withId(id)
                .withHeaders(headers(payload));
        if (typeHeader && !(payload instanceof String) && !(payload instanceof byte[])
                && !message.headers().containsKey(RmqHeaders.TYPE_ID)) {
            message = message.withHeader(RmqHeaders.TYPE_ID, payload.getClass().getName());
        }
        return message;
    }

    private Map<String, String> headers(Object payload) {
        Map<String, String> headers = new LinkedHashMap<>();
        configuration.getHeadersFor(payload).forEach((name, value) -> {
            if (value != null) {
                headers.put(name, value.toString());
            }
        });
        return headers;
    }

    /** An event type's {@link RmqExternalized}, parsed; all null without the annotation. */
    private record Timing(Class<?> eventType, @Nullable Expression delay, @Nullable Expression dueAt,
            @Nullable Expression priority, @Nullable Expression group) {

        static Timing of(Class<?> eventType) {
            RmqExternalized annotation = AnnotatedElementUtils.findMergedAnnotation(eventType, RmqExternalized.class);
            if (annotation == null) {
                return new Timing(eventType, null, null, null, null);
            }
            return new Timing(eventType, parse(eventType, "delay", annotation.delay()),
                    parse(eventType, "dueAt", annotation.dueAt()), parse(eventType, "priority", annotation.priority()),
                    parse(eventType, "group", annotation.group()));
        }

        private static @Nullable Expression parse(Class<?> eventType, String attribute, String text) {
            if (text.isBlank()) {
                return null;
            }
            try {
                return PARSER.parseExpression(text, TEMPLATE);
            }
            catch (RuntimeException ex) {
                throw invalid(eventType, attribute, text, "must be a literal or a SpEL template such as #{dueAt()} ("
                        + ex.getMessage() + ")");
            }
        }

        OutgoingMessage message(String topic, TopicType type, Object payload, EvaluationContext context) {
            String onTopic = " (topic '" + topic + "' is " + type + ")";
            OutgoingMessage message = switch (type) {
                case RANGE_MERGE -> {
                    refuse("dueAt", dueAt, "applies to FIXED_TIME topics only" + onTopic);
                    refuse("priority", priority, "applies to PRIORITY topics only" + onTopic);
                    Duration window = delay == null ? DEFAULT_WINDOW : duration(payload, context);
                    if (window.isNegative() || window.isZero()) {
                        throw invalid(eventType, "delay", window, "must be more than 0 for a RANGE_MERGE topic"
                                + onTopic);
                    }
                    yield OutgoingMessage.rangeMerge(topic, payload, window);
                }
                case FIXED_TIME -> {
                    refuse("priority", priority, "applies to PRIORITY topics only" + onTopic);
                    if (delay != null && dueAt != null) {
                        throw invalid(eventType, "dueAt", dueAt.getExpressionString(),
                                "and delay exclude each other; give one" + onTopic);
                    }
                    Instant due = Instant.now();
                    if (dueAt != null) {
                        due = instant(payload, context);
                    }
                    else if (delay != null) {
                        Duration after = duration(payload, context);
                        if (after.isNegative()) {
                            throw invalid(eventType, "delay", after, "must not be negative" + onTopic);
                        }
                        due = due.plus(after);
                    }
                    yield OutgoingMessage.fixedTime(topic, payload, due);
                }
                case PRIORITY -> {
                    refuse("delay", delay, "applies to RANGE_MERGE and FIXED_TIME topics only" + onTopic);
                    refuse("dueAt", dueAt, "applies to FIXED_TIME topics only" + onTopic);
                    yield OutgoingMessage.priority(topic, payload, priority == null ? 0 : priority(payload, context));
                }
            };
            if (group != null) {
                Object value = group.getValue(context, payload);
                message = message.withGroup(value == null ? null : value.toString());
            }
            return message;
        }

        private void refuse(String attribute, @Nullable Expression expression, String rule) {
            if (expression != null) {
                throw invalid(eventType, attribute, expression.getExpressionString(), rule);
            }
        }

        private Duration duration(Object payload, EvaluationContext context) {
            Object value = delay.getValue(context, payload);
            if (value instanceof Duration duration) {
                return duration;
            }
            try {
                return DurationStyle.detectAndParse(String.valueOf(value));
            }
            catch (RuntimeException ex) {
                throw invalid(eventType, "delay", value, "must be a Duration, ISO-8601 (PT30M) or Boot's short form"
                        + " (30m)");
            }
        }

        private Instant instant(Object payload, EvaluationContext context) {
            Object value = dueAt.getValue(context, payload);
            try {
                if (value instanceof Instant instant) {
                    return instant;
                }
                if (value instanceof Date date) {
                    return date.toInstant();
                }
                if (value instanceof Number millis) {
                    return Instant.ofEpochMilli(millis.longValue());
                }
                if (value instanceof TemporalAccessor temporal) {
                    return Instant.from(temporal);
                }
                if (value instanceof CharSequence text) {
                    return Instant.parse(text);
                }
            }
            catch (RuntimeException ex) {
                // reported below with the rule
            }
            throw invalid(eventType, "dueAt", value, "must give an Instant (or an OffsetDateTime, ZonedDateTime, Date),"
                    + " epoch milliseconds or an ISO-8601 instant");
        }

        private long priority(Object payload, EvaluationContext context) {
            Object value = priority.getValue(context, payload);
            if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
                return ((Number) value).longValue();
            }
            try {
                return Long.parseLong(String.valueOf(value).trim());
            }
            catch (NumberFormatException ex) {
                throw invalid(eventType, "priority", value, "must be a whole number");
            }
        }

        private static RmqInvalidArgumentException invalid(Class<?> eventType, String attribute,
                @Nullable Object value, String rule) {
            return new RmqInvalidArgumentException("@RmqExternalized(" + attribute + ") of " + eventType.getName(),
                    value, rule);
        }
    }
}
