package io.rmq.spring.schedule;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The schedules' Micrometer meters, on the instance that takes each firing: {@code rmq.schedule.firings} (tags
 * {@code schedule}, {@code outcome} success or failure), {@code rmq.schedule.misfires} ({@code schedule}),
 * {@code rmq.schedule.skipped} ({@code schedule}, {@code reason} paused, duplicate or obsolete) and the timers
 * {@code rmq.schedule.lateness} (firing time to taken, Redis's clock) and {@code rmq.schedule.duration} (the run).
 * Stateless apart from the registry's meters; thread-safe.
 */
public class RmqScheduleMeters implements ScheduleEvents {

    private final MeterRegistry registry;

    public RmqScheduleMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void fired(String schedule, boolean success, Duration lateness, Duration took) {
        Counter.builder("rmq.schedule.firings").description("Firings of a schedule that ran, by outcome")
                .tag("schedule", schedule).tag("outcome", success ? "success" : "failure").register(registry)
                .increment();
        lateness(schedule).record(lateness);
        Timer.builder("rmq.schedule.duration").description("How long a firing of a schedule ran")
                .tag("schedule", schedule).register(registry).record(took);
    }

    @Override
    public void missed(String schedule, Duration lateness) {
        Counter.builder("rmq.schedule.misfires").description("Firings dropped by the misfire policy (taken too late)")
                .tag("schedule", schedule).register(registry).increment();
        lateness(schedule).record(lateness);
    }

    @Override
    public void skipped(String schedule, String reason) {
        Counter.builder("rmq.schedule.skipped").description("Firings dropped because the schedule was paused, the"
                        + " firing was taken before, or it belongs to an earlier definition")
                .tag("schedule", schedule).tag("reason", reason).register(registry).increment();
    }

    private Timer lateness(String schedule) {
        return Timer.builder("rmq.schedule.lateness").description("From a firing's time to when an instance took it")
                .tag("schedule", schedule).register(registry);
    }
}
