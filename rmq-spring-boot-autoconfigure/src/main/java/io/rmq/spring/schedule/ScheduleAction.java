package io.rmq.spring.schedule;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;

import io.rmq.Rmq;
import io.rmq.core.TopicDefinition;
import io.rmq.producer.OutgoingMessage;
import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;
import org.jspecify.annotations.Nullable;

/** What one firing of a schedule runs, on the instance that takes it. Stateless apart from what it is given. */
sealed interface ScheduleAction permits ScheduleAction.InvokeMethod, ScheduleAction.SendToTopic {

    /** Runs the firing; what it throws is the firing's failure. */
    void fire(Rmq rmq, Instant firing, String firingId) throws Exception;

    /** One line for the fingerprint and the endpoint. */
    String describe();

    /** Calls an {@code @RmqScheduled} method (with the firing time when it takes an {@link Instant}). */
    record InvokeMethod(String where, Object bean, Method method) implements ScheduleAction {

        public InvokeMethod {
            // the method takes no parameter or one Instant: ScheduleDeclaration checked it
            method = AopUtils.selectInvocableMethod(method, bean.getClass());
            ReflectionUtils.makeAccessible(method);
        }

        @Override
        public void fire(Rmq rmq, Instant firing, String firingId) throws Exception {
            try {
                if (method.getParameterCount() == 0) {
                    method.invoke(bean);
                }
                else {
                    method.invoke(bean, firing);
                }
            }
            catch (InvocationTargetException ex) {
                if (ex.getTargetException() instanceof Exception cause) {
                    throw cause;
                }
                throw ex;
            }
        }

        @Override
        public String describe() {
            return "calls " + where;
        }
    }

    /**
     * Sends a payload to a topic, with the firing's id (so a firing's message is one message whoever sends it), due at
     * once: FIXED_TIME at the firing time, PRIORITY with priority 0, RANGE_MERGE after 1 ms (as dead letters are
     * forwarded).
     */
    record SendToTopic(String topic, @Nullable String payload) implements ScheduleAction {

        @Override
        public void fire(Rmq rmq, Instant firing, String firingId) {
            TopicDefinition target = rmq.topics().get(topic);
            Object body = payload == null ? firing.toString() : payload;
            OutgoingMessage message = switch (target.type()) {
                case FIXED_TIME -> OutgoingMessage.fixedTime(topic, body, firing);
                case PRIORITY -> OutgoingMessage.priority(topic, body, 0);
                case RANGE_MERGE -> OutgoingMessage.rangeMerge(topic, body, Duration.ofMillis(1));
            };
            rmq.producer().send(message.withId(firingId));
        }

        @Override
        public String describe() {
            return "sends " + (payload == null ? "the firing time" : "'" + payload + "'") + " to topic " + topic;
        }
    }
}
