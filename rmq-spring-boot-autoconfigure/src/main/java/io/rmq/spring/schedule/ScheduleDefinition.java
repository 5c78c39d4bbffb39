package io.rmq.spring.schedule;

import java.time.Instant;

/**
 * A checked schedule: when it fires, what a missed firing does, and what a firing runs. Immutable.
 *
 * @param name             the schedule's name (firing ids, the state in Redis, meters)
 * @param where            where it is declared, for log lines and errors
 * @param times            its firing times
 * @param misfire          what a missed firing does
 * @param thresholdMillis  how late a firing may be taken and still count as on time
 * @param action           what a firing runs
 */
record ScheduleDefinition(String name, String where, FiringTimes times, MisfirePolicy misfire, long thresholdMillis,
        ScheduleAction action) {

    /** Separates the name from the firing time in a firing's id; names cannot contain it. */
    static final char AT = '@';

    /**
     * What every instance declaring this name must agree on, compared in Redis at start-up and shown by the endpoint:
     * the times, the misfire rule and the action, durations as a user writes them
     * ({@code fixed rate 30s; misfire fire-once after 5s; calls bean 'job' method Job.run}).
     */
    String fingerprint() {
        return times.definition() + "; misfire " + misfire.value() + " after "
                + ScheduleDurations.format(java.time.Duration.ofMillis(thresholdMillis)) + "; " + action.describe();
    }

    /** The id (and body) of the message of one firing: {@code report@2026-11-27T10:05:00Z}. */
    String firingId(long firingMillis) {
        return name + AT + Instant.ofEpochMilli(firingMillis);
    }
}
