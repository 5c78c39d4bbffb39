package io.rmq.spring.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;

import io.rmq.Rmq;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;

/**
 * Handles the firings of one schedule on the instance that takes them (the listener thread of the schedule's topic):
 * takes the firing in Redis ({@link ScheduleStore#claim}), runs it when the claim says so, records the outcome and
 * queues the next firings. A firing that ran is never retried: what the action throws is logged, counted and recorded,
 * and the delivery is acknowledged. Only a failure to reach Redis before the firing was taken fails the delivery, which
 * is then retried like any message.
 * <p>
 * No double firing: a firing runs only after the claim script has moved the schedule's {@code last} from an earlier
 * time to its own, atomically; so each firing time runs at most once, whoever sends its message and however often.
 */
final class FiringHandler implements MessageHandler<String> {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FiringHandler.class);

    private final ScheduleDefinition schedule;
    private final Rmq rmq;
    private final ScheduleStore store;
    private final FiringQueue queue;
    private final ScheduleEvents events;

    FiringHandler(ScheduleDefinition schedule, Rmq rmq, ScheduleStore store, FiringQueue queue,
            ScheduleEvents events) {
        this.schedule = schedule;
        this.rmq = rmq;
        this.store = store;
        this.queue = queue;
        this.events = events;
    }

    @Override
    public void handle(String body, Delivery delivery) {
        String name = schedule.name();
        long firing;
        try {
            if (!body.startsWith(name + ScheduleDefinition.AT)) {
                throw new DateTimeParseException("not a firing of this schedule", body, 0);
            }
            firing = Instant.parse(body.substring(name.length() + 1)).toEpochMilli();
        }
        catch (DateTimeParseException ex) {
            log.warn("RMQ dropped message '{}' on topic {}: not a firing of schedule '{}' (<name>@<instant>)", body,
                    delivery.topic(), name);
            return;
        }
        if (!schedule.times().isFiring(firing)) {
            // queued under an earlier definition of the schedule, before every instance changed to this one
            log.info("RMQ dropped firing {} of schedule '{}': not a firing time of its current definition ({})", body,
                    name, schedule.times().definition());
            events.skipped(name, "obsolete");
            return;
        }
        ScheduleStore.Claim claim = store.claim(schedule, firing, schedule.times().next(firing));
        Duration lateness = Duration.ofMillis(Math.max(0, claim.now() - firing));
        // the next firings first, so that a long run, or one that hangs, does not hold up the ones after it
        queue.queueNext(schedule, firing, claim.now());
        switch (claim.outcome()) {
            case FIRE -> run(firing, body, lateness);
            case MISSED -> {
                log.info("RMQ schedule '{}' missed its firing at {}: taken {} ms late (misfire threshold {},"
                        + " policy {})", name, Instant.ofEpochMilli(firing), lateness.toMillis(),
                        ScheduleDurations.format(Duration.ofMillis(schedule.thresholdMillis())),
                        schedule.misfire().value());
                events.missed(name, lateness);
            }
            case PAUSED -> {
                log.debug("RMQ schedule '{}' is paused: firing at {} skipped", name, Instant.ofEpochMilli(firing));
                events.skipped(name, "paused");
            }
            case STALE -> {
                log.debug("RMQ schedule '{}': firing at {} was taken before (or a later one was); dropped", name,
                        Instant.ofEpochMilli(firing));
                events.skipped(name, "duplicate");
            }
        }
    }

    private void run(long firing, String id, Duration lateness) {
        long started = System.nanoTime();
        Exception failure = null;
        try {
            schedule.action().fire(rmq, Instant.ofEpochMilli(firing), id);
        }
        catch (Exception ex) {
            failure = ex;
            log.warn("RMQ schedule '{}' failed at its firing of {} ({}); it is not retried, the next firing runs at"
                    + " its time", schedule.name(), Instant.ofEpochMilli(firing), schedule.action().describe(), ex);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        events.fired(schedule.name(), failure == null, lateness, took);
        try {
            store.recordOutcome(schedule.name(), firing, failure == null, System.currentTimeMillis(),
                    took.toMillis(), failure == null ? null : describe(failure));
        }
        catch (RuntimeException ex) {
            log.warn("RMQ could not record the outcome of schedule '{}' at {}: {}", schedule.name(),
                    Instant.ofEpochMilli(firing), ex.getMessage());
        }
    }

    private static String describe(Exception failure) {
        String text = failure.getClass().getName() + (failure.getMessage() == null ? "" : ": " + failure.getMessage());
        return text.length() <= 500 ? text : text.substring(0, 500) + "…";
    }
}
