package io.rmq.spring.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

import org.springframework.scheduling.support.CronExpression;

/**
 * When a schedule fires, as epoch milliseconds: every instance with the same definition computes the same times, so
 * their copies of one firing carry one id. Immutable.
 */
sealed interface FiringTimes permits FiringTimes.Cron, FiringTimes.Rate {

    /** No firing: {@link #latestAtOrBefore} found none. */
    long NONE = Long.MIN_VALUE;

    /** The first firing strictly after {@code millis}; {@link #NONE} when there is none. */
    long next(long millis);

    /** Whether {@code millis} is a firing time of this definition. */
    boolean isFiring(long millis);

    /** The definition in one line, identical on every instance that has it: what Redis compares. */
    String definition();

    /** The latest firing at or before {@code now} and after {@code after}; {@link #NONE} when there is none. */
    default long latestAtOrBefore(long now, long after) {
        // look back over growing windows, so that a frequent schedule costs few steps and a rare one is still found
        for (Duration window : new Duration[] {Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofDays(1),
                Duration.ofDays(40), Duration.ofDays(800)}) {
            long from = Math.max(after, now - window.toMillis());
            long latest = NONE;
            for (long t = next(from); t != NONE && t <= now; t = next(t)) {
                latest = t;
            }
            if (latest != NONE || from == after) {
                return latest;
            }
        }
        return NONE;
    }

    /** A cron expression read in a time zone. */
    record Cron(CronExpression expression, String text, ZoneId zone) implements FiringTimes {

        @Override
        public long next(long millis) {
            ZonedDateTime next = expression.next(Instant.ofEpochMilli(millis).atZone(zone));
            return next == null ? NONE : next.toInstant().toEpochMilli();
        }

        @Override
        public boolean isFiring(long millis) {
            return next(millis - 1) == millis;
        }

        @Override
        public String definition() {
            return "cron " + text + " in " + zone.getId();
        }
    }

    /** Every {@code rateMillis}, on multiples of it since the epoch. */
    record Rate(long rateMillis) implements FiringTimes {

        @Override
        public long next(long millis) {
            return Math.floorDiv(millis, rateMillis) * rateMillis + rateMillis;
        }

        @Override
        public boolean isFiring(long millis) {
            return Math.floorMod(millis, rateMillis) == 0;
        }

        @Override
        public String definition() {
            return "fixed rate " + ScheduleDurations.format(Duration.ofMillis(rateMillis));
        }
    }
}
