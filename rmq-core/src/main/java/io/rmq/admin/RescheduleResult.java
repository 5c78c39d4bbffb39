package io.rmq.admin;

/** What a reschedule did. */
public enum RescheduleResult {
    /** The waiting message has its new due time or priority (a PRIORITY message backing off returns with it). */
    RESCHEDULED,
    /** Only in flight: unchanged (its handler has it; if it fails, it comes back under its retry policy). */
    IN_FLIGHT,
    /** Only in the dead queue: unchanged (requeue it first). */
    DEAD,
    /** Not in the topic. */
    NOT_FOUND
}
