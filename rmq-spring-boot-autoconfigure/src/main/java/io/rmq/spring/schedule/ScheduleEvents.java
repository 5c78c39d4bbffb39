package io.rmq.spring.schedule;

import java.time.Duration;

/**
 * What the instance that takes a firing reports about it (the meters of {@link RmqScheduleMeters} implement it). Called
 * on the thread that handles the firing; must not throw.
 */
public interface ScheduleEvents {

    /** Reports nothing. */
    ScheduleEvents NONE = new ScheduleEvents() {
    };

    /** A firing ran: {@code lateness} from its time to when it was taken (Redis's clock), {@code took} to run it. */
    default void fired(String schedule, boolean success, Duration lateness, Duration took) {
    }

    /** A firing was taken too late and dropped by the schedule's misfire policy. */
    default void missed(String schedule, Duration lateness) {
    }

    /**
     * A firing was dropped for another reason: {@code paused} (the schedule is paused), {@code duplicate} (this firing,
     * or a later one, was taken before) or {@code obsolete} (not a firing time of the current definition).
     */
    default void skipped(String schedule, String reason) {
    }
}
