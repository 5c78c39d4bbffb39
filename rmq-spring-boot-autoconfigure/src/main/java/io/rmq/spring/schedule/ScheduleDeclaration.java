package io.rmq.spring.schedule;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicDefinition;
import org.springframework.scheduling.support.CronExpression;
import org.jspecify.annotations.Nullable;

/**
 * A schedule as declared, before it is checked: an {@code rmq.schedules.<name>} entry (which sends a payload to a
 * topic) or an {@code @RmqScheduled} method. {@link #definition()} checks it and fails with the schedule, the value and
 * the rule named.
 *
 * @param name             the schedule's name, the same on every instance
 * @param property         true: an {@code rmq.schedules} entry (errors name its properties); false: an annotation
 * @param where            for an annotation: the bean and method, as errors name them
 * @param cron             a Spring cron expression, or null
 * @param zone             the zone of the cron expression, or null: the JVM's
 * @param fixedRate        the rate of a fixed-rate schedule, or null
 * @param misfire          null: {@link MisfirePolicy#FIRE_ONCE}
 * @param misfireThreshold null: {@link #DEFAULT_MISFIRE_THRESHOLD}
 * @param topic            the topic an entry sends to (null for a method)
 * @param payload          what an entry sends; null: the firing time (ISO-8601)
 * @param bean             the bean of a method schedule
 * @param method           the method of a method schedule
 */
public record ScheduleDeclaration(String name, boolean property, String where, @Nullable String cron,
        @Nullable String zone, @Nullable Duration fixedRate, @Nullable MisfirePolicy misfire,
        @Nullable Duration misfireThreshold, @Nullable String topic, @Nullable String payload, @Nullable Object bean,
        @Nullable Method method) {

    /** How late a firing may be taken and still count as on time, unless the schedule sets its own. */
    public static final Duration DEFAULT_MISFIRE_THRESHOLD = Duration.ofSeconds(5);

    /** The longest name: its firings' topic, {@code rmq-schedule.<name>}, is a topic name (at most 100 characters). */
    public static final int MAX_NAME = 80;

    /** The shortest fixed rate: a schedule is a periodic job, not a timer. */
    public static final Duration MIN_RATE = Duration.ofSeconds(1);

    /** An {@code rmq.schedules.<name>} entry. */
    public static ScheduleDeclaration ofProperty(String name, @Nullable String cron, @Nullable String zone,
            @Nullable Duration fixedRate, @Nullable MisfirePolicy misfire, @Nullable Duration misfireThreshold,
            @Nullable String topic, @Nullable String payload) {
        return new ScheduleDeclaration(name, true, "rmq.schedules." + name, cron, zone, fixedRate, misfire,
                misfireThreshold, topic, payload, null, null);
    }

    /**
     * The field an error names: {@code rmq.schedules.report.cron} (the entry's name is the schedule's), or
     * {@code @RmqScheduled(cron) of schedule 'report' on bean 'job' method Job.run}.
     */
    String field(String attribute) {
        if (property) {
            return where + "." + attribute.replaceAll("([A-Z])", "-$1").toLowerCase(java.util.Locale.ROOT);
        }
        return annotationField(name, attribute, where);
    }

    /**
     * The field an error about an {@code @RmqScheduled} attribute names: the attribute, the schedule and the method
     * ({@code name} itself names no schedule: its value is the name).
     *
     * @param where the bean and method, {@code bean 'job' method Job.run}
     */
    static String annotationField(String name, String attribute, String where) {
        return attribute.equals("name") ? "@RmqScheduled(name) on " + where
                : "@RmqScheduled(" + attribute + ") of schedule '" + name + "' on " + where;
    }

    /** What an error about the whole declaration names: the entry, or the annotation with its schedule and method. */
    private String declarationField() {
        return property ? where : "@RmqScheduled of schedule '" + name + "' on " + where;
    }

    /** Checks the declaration; the definition every instance must share. */
    ScheduleDefinition definition() {
        if (!name.matches("[A-Za-z0-9._-]{1," + MAX_NAME + "}")) {
            throw new RmqInvalidArgumentException(property ? where : field("name"), name, "a schedule's name must be"
                    + " 1-" + MAX_NAME + " characters of letters, digits, '.', '_' or '-'");
        }
        boolean hasCron = cron != null && !cron.isBlank();
        if (hasCron == (fixedRate != null)) {
            throw new RmqInvalidArgumentException(declarationField(), hasCron ? "cron " + cron + " and fixed-rate "
                    + ScheduleDurations.format(fixedRate) : "neither cron nor fixed-rate",
                    "a schedule sets exactly one of cron and fixed-rate");
        }
        FiringTimes times = hasCron ? cronTimes() : rateTimes();
        Duration threshold = misfireThreshold == null ? DEFAULT_MISFIRE_THRESHOLD : misfireThreshold;
        if (threshold.isNegative() || threshold.isZero()) {
            throw new RmqInvalidArgumentException(field("misfireThreshold"), ScheduleDurations.format(threshold),
                    "must be positive");
        }
        ScheduleAction action;
        if (property) {
            if (topic == null || topic.isBlank()) {
                throw new RmqInvalidArgumentException(field("topic"), topic, "an rmq.schedules entry needs the topic"
                        + " its firings are sent to");
            }
            try {
                TopicDefinition.validateName(topic);
            }
            catch (RmqInvalidArgumentException ex) {
                throw new RmqInvalidArgumentException(field("topic"), topic, ex.getRule());
            }
            action = new ScheduleAction.SendToTopic(topic, payload);
        }
        else {
            Method invoked = java.util.Objects.requireNonNull(method);
            Class<?>[] parameters = invoked.getParameterTypes();
            if (parameters.length > 1 || (parameters.length == 1 && parameters[0] != Instant.class)) {
                throw new RmqInvalidArgumentException(declarationField(), invoked.toGenericString(), "the method"
                        + " takes no parameter, or one java.time.Instant (the firing time)");
            }
            action = new ScheduleAction.InvokeMethod(where, java.util.Objects.requireNonNull(bean), invoked);
        }
        return new ScheduleDefinition(name, where, times, misfire == null ? MisfirePolicy.FIRE_ONCE : misfire,
                threshold.toMillis(), action);
    }

    private FiringTimes cronTimes() {
        String expression = java.util.Objects.requireNonNull(cron).trim();
        CronExpression parsed;
        try {
            parsed = CronExpression.parse(expression);
        }
        catch (IllegalArgumentException ex) {
            throw new RmqInvalidArgumentException(field("cron"), expression, "must be a Spring cron expression of six"
                    + " fields (second minute hour day-of-month month day-of-week) or a macro such as @hourly: "
                    + ex.getMessage());
        }
        ZoneId zoneId;
        if (zone == null || zone.isBlank()) {
            zoneId = ZoneId.systemDefault();
        }
        else {
            try {
                zoneId = ZoneId.of(zone.trim());
            }
            catch (java.time.DateTimeException ex) {
                throw new RmqInvalidArgumentException(field("zone"), zone, "must be a time zone id such as"
                        + " Europe/Paris or UTC (" + ex.getMessage() + ")");
            }
        }
        FiringTimes.Cron times = new FiringTimes.Cron(parsed, expression, zoneId);
        if (times.next(Instant.now().toEpochMilli()) == FiringTimes.NONE) {
            throw new RmqInvalidArgumentException(field("cron"), expression, "never fires (no such date from now on)");
        }
        return times;
    }

    private FiringTimes rateTimes() {
        Duration rate = java.util.Objects.requireNonNull(fixedRate);
        if (zone != null && !zone.isBlank()) {
            throw new RmqInvalidArgumentException(field("zone"), zone, "applies to cron schedules only; a fixed rate"
                    + " fires on multiples of the rate since the epoch");
        }
        if (rate.compareTo(MIN_RATE) < 0 || rate.toNanos() % 1_000_000 != 0) {
            throw new RmqInvalidArgumentException(field("fixedRate"), ScheduleDurations.format(rate), "must be at least " + MIN_RATE.toSeconds()
                    + " s, in whole milliseconds");
        }
        return new FiringTimes.Rate(rate.toMillis());
    }
}
