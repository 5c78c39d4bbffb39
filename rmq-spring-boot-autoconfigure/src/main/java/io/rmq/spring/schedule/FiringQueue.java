package io.rmq.spring.schedule;

import java.time.Instant;

import io.rmq.Rmq;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;

/**
 * Queues firings as messages: the firing of schedule {@code report} at 10:05 is the FIXED_TIME message
 * {@code report@2026-11-27T10:05:00Z} (its body, hence its identity) on topic {@code rmq-schedule.report}, due at
 * 10:05. Every instance queues the same next firings, and their copies merge into one message. Stateless; thread-safe.
 */
final class FiringQueue {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FiringQueue.class);

    /** Each schedule's firings travel on a topic of their own, which only the instances that declare it consume. */
    static final String TOPIC_PREFIX = "rmq-schedule.";

    /** How many future firings each instance keeps queued. */
    static final int AHEAD = 2;

    private final Rmq rmq;

    FiringQueue(Rmq rmq) {
        this.rmq = rmq;
    }

    static String topic(String schedule) {
        return TOPIC_PREFIX + schedule;
    }

    /** Defines the schedule's topic: FIXED_TIME, one slot (a handful of messages). */
    void define(ScheduleDefinition schedule) {
        rmq.defineTopic(topic(schedule.name()), TopicType.FIXED_TIME, 1);
    }

    /**
     * Queues the next {@value #AHEAD} firings after {@code after} (the latest firing taken) and after {@code redisNow}:
     * never one whose time has passed, which might have been taken already (a copy sent after that would be a new
     * message; the claim would drop it, but it need not be sent at all).
     */
    void queueNext(ScheduleDefinition schedule, long after, long redisNow) {
        long t = schedule.times().next(Math.max(after, redisNow));
        for (int i = 0; i < AHEAD && t != FiringTimes.NONE; i++) {
            send(schedule, t);
            t = schedule.times().next(t);
        }
    }

    /** Queues a firing that is already due (the latest one missed while every instance was down). */
    void queueMissed(ScheduleDefinition schedule, long firing) {
        send(schedule, firing);
    }

    private void send(ScheduleDefinition schedule, long firing) {
        String id = schedule.firingId(firing);
        rmq.producer().sendAsync(OutgoingMessage.fixedTime(topic(schedule.name()), id, Instant.ofEpochMilli(firing)))
                .whenComplete((sent, error) -> {
                    if (error != null) {
                        // the other instances queue it too, and this one again at its next top-up
                        log.warn("RMQ could not queue firing {} of schedule '{}': {}", id, schedule.name(),
                                error.getMessage());
                    }
                });
    }
}
