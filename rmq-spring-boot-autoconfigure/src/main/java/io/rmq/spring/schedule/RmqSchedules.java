package io.rmq.spring.schedule;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The schedules this application runs, as the {@code rmq} Actuator endpoint and the dashboard show them: their next
 * and last firing and the outcome of the latest run (read from Redis, so the same on every instance), and pause and
 * resume, cluster-wide (a flag in Redis that the instance taking a firing reads first: a paused schedule's firings are
 * dropped and counted, and it carries on from its next firing when resumed). Stateless; thread-safe.
 */
public class RmqSchedules {

    private final RmqScheduler scheduler;

    public RmqSchedules(RmqScheduler scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * One schedule.
     *
     * @param name          its name
     * @param definition    when it fires, its misfire policy and what it runs (what every instance must share)
     * @param paused        whether it is paused, cluster-wide
     * @param nextFiring    its next firing time after the latest taken and after now (null: none, or not started)
     * @param lastFiring    the latest firing taken (run, or dropped as missed or paused); null: none yet
     * @param lastRun       the firing time of the latest run; null: none yet
     * @param outcome       {@code success} or {@code failure} of the latest run; null: none yet
     * @param outcomeAt     when the latest run ended
     * @param durationMillis how long the latest run took
     * @param error         what the latest run threw (class and message), or null
     * @param conflict      another instance's definition that conflicts with this one (this instance then queues no
     *                      firings), or null
     */
    public record ScheduleView(String name, String definition, boolean paused, @Nullable Instant nextFiring,
            @Nullable Instant lastFiring, @Nullable Instant lastRun, @Nullable String outcome,
            @Nullable Instant outcomeAt, @Nullable Long durationMillis, @Nullable String error,
            @Nullable String conflict) {
    }

    /** Every schedule of this application, by name. */
    public List<ScheduleView> list() {
        return scheduler.schedules().values().stream().sorted(java.util.Comparator.comparing(ScheduleDefinition::name))
                .map(this::view).toList();
    }

    /** One schedule, or null when this application has none of that name. */
    public @Nullable ScheduleView get(String name) {
        ScheduleDefinition schedule = scheduler.schedules().get(name);
        return schedule == null ? null : view(schedule);
    }

    /** Pauses a schedule on every instance; null when this application has none of that name. Idempotent. */
    public @Nullable ScheduleView pause(String name) {
        return setPaused(name, true);
    }

    /** Resumes a paused schedule: its next firing runs. Idempotent. */
    public @Nullable ScheduleView resume(String name) {
        return setPaused(name, false);
    }

    private @Nullable ScheduleView setPaused(String name, boolean paused) {
        ScheduleDefinition schedule = scheduler.schedules().get(name);
        if (schedule == null) {
            return null;
        }
        scheduler.store().setPaused(name, paused);
        return view(schedule);
    }

    private ScheduleView view(ScheduleDefinition schedule) {
        Map<String, String> state = scheduler.store().read(schedule.name());
        long last = millis(state.get("last"));
        long next = schedule.times().next(Math.max(last, System.currentTimeMillis()));
        String error = state.get("outcome_error");
        return new ScheduleView(schedule.name(), schedule.fingerprint(), state.containsKey("paused"),
                instant(next == FiringTimes.NONE ? -1 : next), instant(last), instant(millis(state.get("outcome_firing"))),
                state.get("outcome"), instant(millis(state.get("outcome_at"))),
                state.containsKey("outcome_ms") ? millis(state.get("outcome_ms")) : null,
                error == null || error.isEmpty() ? null : error, scheduler.conflict(schedule.name()));
    }

    private static long millis(@Nullable String value) {
        return value == null || value.isEmpty() ? -1 : Long.parseLong(value);
    }

    private static @Nullable Instant instant(long millis) {
        return millis < 0 ? null : Instant.ofEpochMilli(millis);
    }
}
