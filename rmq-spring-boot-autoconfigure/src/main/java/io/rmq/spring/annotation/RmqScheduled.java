package io.rmq.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

/**
 * Runs a bean method periodically, once per firing across every instance of the application that declares it: the
 * replacement for Spring's {@code @Scheduled} paired with ShedLock. Every instance keeps the schedule's next firings
 * queued in Redis as messages whose id is the schedule's name and the firing time, so the copies of all instances merge
 * into one message, and the instance that takes it calls the method (see {@code docs/scheduling.md}).
 * <p>
 * Exactly one of {@link #cron()} and {@link #fixedRate()} is set. The method takes no parameter, or one
 * {@link java.time.Instant}: the firing time. What it returns is ignored; what it throws is logged, counted and shown as
 * the schedule's outcome; the firing is not retried (the next firing comes as scheduled). Every attribute accepts
 * {@code ${...}} placeholders.
 * <p>
 * The method is called by reflection: {@link Reflective @Reflective} has Spring's AOT processing register it for
 * invocation in a native image, as Spring's own {@code @Scheduled} does (it takes no payload, so no binding hints).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Reflective
public @interface RmqScheduled {

    /**
     * The schedule's name, the same on every instance: firing ids, the state in Redis, the endpoint and the meters use
     * it. 1-80 letters, digits, '.', '_' or '-'. Default: the class's simple name and the method's,
     * {@code ReportJob.nightly}.
     */
    String name() default "";

    /**
     * A Spring cron expression of six fields (second minute hour day-of-month month day-of-week), e.g.
     * {@code "0 *&#47;5 * * * *"}, or a macro such as {@code "@hourly"}.
     */
    String cron() default "";

    /** The time zone the cron expression is read in (an id such as {@code Europe/Paris}); default: the JVM's. */
    String zone() default "";

    /**
     * The interval of a fixed-rate schedule: {@code 30s}, {@code PT30S} or milliseconds ({@code 30000}); at least 1 s.
     * Firings fall on multiples of the rate since the epoch, so every instance computes the same times.
     */
    String fixedRate() default "";

    /**
     * What happens to a firing missed while every instance was down: {@code fire-once} (the default: the latest missed
     * firing runs once, late, when an instance is back) or {@code skip} (missed firings are dropped).
     */
    String misfire() default "";

    /** How late a firing may be taken and still count as on time ({@code 5s} by default). */
    String misfireThreshold() default "";
}
