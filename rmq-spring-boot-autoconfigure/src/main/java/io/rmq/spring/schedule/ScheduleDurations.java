package io.rmq.spring.schedule;

import java.time.Duration;

/**
 * Durations as a schedule's errors, log lines, definition and endpoint show them: in the short form a user writes in
 * {@code fixed-rate} or {@code misfire-threshold} ({@code 500ms}, {@code 30s}, {@code 1m}), not Java's ISO-8601
 * ({@code PT0.5S}), so that what is shown back reads as what was written and can be written again. Stateless.
 */
final class ScheduleDurations {

    /** Units of whole seconds, from the largest down, and their suffixes. */
    private static final long[] SECONDS = {86_400, 3_600, 60, 1};
    private static final String[] SECOND_SUFFIXES = {"d", "h", "m", "s"};
    /** Units under a second, in nanoseconds, and their suffixes. */
    private static final long[] NANOS = {1_000_000, 1_000, 1};
    private static final String[] NANO_SUFFIXES = {"ms", "us", "ns"};

    private ScheduleDurations() {
    }

    /**
     * One number and the largest unit of Spring Boot's short form that the duration is a whole number of, which reads
     * back as the same duration: {@code 500ms}, {@code 90s}, {@code 2m}, {@code 1d}; {@code 0s} for zero. Never throws: a
     * duration too long to count in the unit it needs is shown as ISO-8601.
     */
    static String format(Duration duration) {
        long seconds = duration.getSeconds();
        int nano = duration.getNano();
        if (seconds == 0 && nano == 0) {
            return "0s";
        }
        if (nano == 0) {
            for (int i = 0; i < SECONDS.length; i++) {
                if (seconds % SECONDS[i] == 0) {
                    return seconds / SECONDS[i] + SECOND_SUFFIXES[i];
                }
            }
        }
        for (int i = 0; i < NANOS.length; i++) {
            if (nano % NANOS[i] == 0) {
                long perSecond = 1_000_000_000 / NANOS[i];
                try {
                    return Math.addExact(Math.multiplyExact(seconds, perSecond), nano / NANOS[i]) + NANO_SUFFIXES[i];
                }
                catch (ArithmeticException tooLong) {
                    break;
                }
            }
        }
        return duration.toString();
    }
}
