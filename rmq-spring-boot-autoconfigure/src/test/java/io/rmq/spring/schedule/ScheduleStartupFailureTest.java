package io.rmq.spring.schedule;

import java.util.UUID;

import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.autoconfigure.RmqSchedulingAutoConfiguration;
import io.rmq.spring.annotation.RmqScheduled;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A schedule that cannot run fails start-up with the schedule, the value and the rule named: a bad cron expression,
 * zone, rate or topic, and a definition that differs from the one a running instance holds (which could otherwise fire
 * at the times of both).
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class ScheduleStartupFailureTest {

    private final String prefix = "sched-fail-" + UUID.randomUUID();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class, RmqSchedulingAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.propertyValues(prefix))
            .withPropertyValues("rmq.topics.reports.type=FIXED_TIME");

    static class EveryTwoSeconds {
        @RmqScheduled(name = "shared", fixedRate = "2s")
        void run() {
        }
    }

    static class EveryThreeSeconds {
        @RmqScheduled(name = "shared", fixedRate = "3s")
        void run() {
        }
    }

    static class BadCron {
        @RmqScheduled(name = "bad", cron = "0 */5 * * *")
        void run() {
        }
    }

    static class TwoParameters {
        @RmqScheduled(fixedRate = "1s")
        void run(String a, String b) {
        }
    }

    @Test
    void anInvalidCronExpressionNamesTheEntryTheValueAndTheRule() {
        assertFailure(runner.withPropertyValues("rmq.schedules.report.cron=0 61 * * * *",
                "rmq.schedules.report.topic=reports"), "rmq.schedules.report.cron", "0 61 * * * *",
                "must be a Spring cron expression of six fields");
    }

    @Test
    void anInvalidCronOnAMethodNamesTheBeanAndTheMethod() {
        assertFailure(runner.withBean("job", BadCron.class), "@RmqScheduled(cron) on bean 'job' method BadCron.run",
                "0 */5 * * *", "six fields");
    }

    @Test
    void anInvalidZoneNamesTheEntryTheValueAndTheRule() {
        assertFailure(runner.withPropertyValues("rmq.schedules.report.cron=0 0 * * * *",
                "rmq.schedules.report.zone=Europe/Atlantis", "rmq.schedules.report.topic=reports"),
                "rmq.schedules.report.zone", "Europe/Atlantis", "must be a time zone id");
    }

    @Test
    void aTopicThatIsNotDefinedAnywhereFailsStartUp() {
        assertFailure(runner.withPropertyValues("rmq.schedules.report.fixed-rate=1m",
                "rmq.schedules.report.topic=nowhere"), "rmq.schedules.report.topic", "nowhere",
                "is not defined here nor registered in Redis");
    }

    @Test
    void anInvalidTopicNameFailsStartUp() {
        assertFailure(runner.withPropertyValues("rmq.schedules.report.fixed-rate=1m",
                "rmq.schedules.report.topic=no:colons"), "rmq.schedules.report.topic", "no:colons",
                "letters, digits");
    }

    @Test
    void aScheduleSetsExactlyOneOfCronAndFixedRate() {
        assertFailure(runner.withPropertyValues("rmq.schedules.report.fixed-rate=1m",
                "rmq.schedules.report.cron=0 0 * * * *", "rmq.schedules.report.topic=reports"),
                "rmq.schedules.report", "exactly one of cron and fixed-rate");
    }

    @Test
    void aRateUnderOneSecondIsRefused() {
        assertFailure(runner.withPropertyValues("rmq.schedules.report.fixed-rate=200ms",
                "rmq.schedules.report.topic=reports"), "rmq.schedules.report.fixed-rate", "at least 1 s");
    }

    @Test
    void aMethodTakesNoParameterOrTheFiringTime() {
        assertFailure(runner.withBean("job", TwoParameters.class), "TwoParameters.run",
                "takes no parameter, or one java.time.Instant");
    }

    @Test
    void aDefinitionThatDiffersFromARunningInstancesFailsStartUpNamingBoth() {
        runner.withBean("job", EveryTwoSeconds.class).run(first -> {
            assertThat(first).hasNotFailed();
            assertFailure(runner.withBean("job", EveryThreeSeconds.class), "schedule 'shared'",
                    "fixed rate PT3S", "runs schedule 'shared' as: fixed rate PT2S",
                    "Every instance must declare a schedule the same way");
        });
    }

    @Test
    void theSameDefinitionOnASecondInstanceStarts() {
        runner.withBean("job", EveryTwoSeconds.class).run(first -> runner.withBean("job", EveryTwoSeconds.class)
                .run(second -> assertThat(second).hasNotFailed()));
    }

    private static void assertFailure(ApplicationContextRunner runner, String... fragments) {
        runner.run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            StringBuilder messages = new StringBuilder();
            for (Throwable t = failure; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            FailureAnalysis analysis = new io.rmq.autoconfigure.diagnostics.RmqInvalidArgumentFailureAnalyzer()
                    .analyze(failure);
            if (analysis != null) {
                messages.append(analysis.getDescription());
            }
            assertThat(messages.toString()).contains(fragments);
        });
    }
}
