package io.rmq.spring.schedule;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.convert.DurationStyle;

import static org.assertj.core.api.Assertions.assertThat;

/** A schedule's durations are shown in the short form a user writes, and read back as the same duration. */
class ScheduleDurationsTest {

    @Test
    void eachDurationIsShownInTheLargestUnitItIsAWholeNumberOf() {
        assertThat(ScheduleDurations.format(Duration.ofMillis(500))).isEqualTo("500ms");
        assertThat(ScheduleDurations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(ScheduleDurations.format(Duration.ofSeconds(30))).isEqualTo("30s");
        assertThat(ScheduleDurations.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(ScheduleDurations.format(Duration.ofMinutes(5))).isEqualTo("5m");
        assertThat(ScheduleDurations.format(Duration.ofMinutes(90))).isEqualTo("90m");
        assertThat(ScheduleDurations.format(Duration.ofHours(2))).isEqualTo("2h");
        assertThat(ScheduleDurations.format(Duration.ofDays(1))).isEqualTo("1d");
        assertThat(ScheduleDurations.format(Duration.ZERO)).isEqualTo("0s");
        assertThat(ScheduleDurations.format(Duration.ofNanos(1500))).isEqualTo("1500ns");
        assertThat(ScheduleDurations.format(Duration.ofNanos(2000))).isEqualTo("2us");
        assertThat(ScheduleDurations.format(Duration.ofMillis(-500))).isEqualTo("-500ms");
    }

    @Test
    void whatIsShownReadsBackAsTheSameDuration() {
        for (Duration duration : new Duration[] {Duration.ofMillis(500), Duration.ofMillis(61_001),
                Duration.ofSeconds(3_600 * 25), Duration.ofNanos(7), Duration.ofMillis(-1500)}) {
            assertThat(DurationStyle.detectAndParse(ScheduleDurations.format(duration))).isEqualTo(duration);
        }
    }

    @Test
    void aDurationTooLongForItsUnitIsShownAsIsoInsteadOfFailing() {
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE / 10, 1);
        assertThat(ScheduleDurations.format(huge)).isEqualTo(huge.toString());
    }
}
