package io.rmq.spring.schedule;

import java.time.ZoneId;
import java.util.UUID;

import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.autoconfigure.RmqSchedulingAutoConfiguration;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.spring.annotation.RmqScheduled;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.scheduling.support.CronExpression;

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

    static class EveryFifteenHundredMillis {
        @RmqScheduled(name = "t4-rate", fixedRate = "1500ms", misfireThreshold = "PT2S")
        void run() {
        }
    }

    static class BadCron {
        @RmqScheduled(name = "bad", cron = "0 */5 * * *")
        void run() {
        }
    }

    static class NamedBadCron {
        @RmqScheduled(name = "t4-ann", cron = "0 */5 * * *")
        void run() {
        }
    }

    static class NamedBadZone {
        @RmqScheduled(name = "t4-ann", cron = "0 0 * * * *", zone = "Europe/Atlantis")
        void run() {
        }
    }

    static class NamedFastRate {
        @RmqScheduled(name = "t4-ann", fixedRate = "500ms")
        void run() {
        }
    }

    static class NamedBadMisfire {
        @RmqScheduled(name = "t4-ann", fixedRate = "1s", misfire = "twice")
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
        assertFailure(runner.withBean("job", BadCron.class),
                "@RmqScheduled(cron) of schedule 'bad' on bean 'job' method BadCron.run",
                "0 */5 * * *", "six fields");
    }

    @Test
    void anInvalidCronOnANamedMethodNamesTheScheduleTheValueAndTheRule() {
        String parserSays = thrownBy(() -> CronExpression.parse("0 */5 * * *"));
        assertFailureMessage(runner.withBean("job", NamedBadCron.class), "Invalid @RmqScheduled(cron) of schedule"
                + " 't4-ann' on bean 'job' method NamedBadCron.run '0 */5 * * *': must be a Spring cron expression of"
                + " six fields (second minute hour day-of-month month day-of-week) or a macro such as @hourly: "
                + parserSays);
    }

    @Test
    void anInvalidZoneOnANamedMethodNamesTheScheduleTheValueAndTheRule() {
        String zoneSays = thrownBy(() -> ZoneId.of("Europe/Atlantis"));
        assertFailureMessage(runner.withBean("job", NamedBadZone.class), "Invalid @RmqScheduled(zone) of schedule"
                + " 't4-ann' on bean 'job' method NamedBadZone.run 'Europe/Atlantis': must be a time zone id such as"
                + " Europe/Paris or UTC (" + zoneSays + ")");
    }

    @Test
    void aRateUnderOneSecondOnAMethodIsEchoedAsWrittenWithTheSchedule() {
        assertFailureMessage(runner.withBean("job", NamedFastRate.class), "Invalid @RmqScheduled(fixedRate) of"
                + " schedule 't4-ann' on bean 'job' method NamedFastRate.run '500ms': must be at least 1 s, in whole"
                + " milliseconds");
    }

    @Test
    void aRateUnderOneSecondInAnEntryIsEchoedAsWritten() {
        assertFailureMessage(runner.withPropertyValues("rmq.schedules.report.fixed-rate=500ms",
                "rmq.schedules.report.topic=reports"), "Invalid rmq.schedules.report.fixed-rate '500ms': must be at"
                + " least 1 s, in whole milliseconds");
    }

    @Test
    void anInvalidMisfirePolicyOnAMethodNamesTheSchedule() {
        assertFailureMessage(runner.withBean("job", NamedBadMisfire.class), "Invalid @RmqScheduled(misfire) of"
                + " schedule 't4-ann' on bean 'job' method NamedBadMisfire.run 'twice': must be fire-once or skip");
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
        assertFailureMessage(runner.withBean("job", TwoParameters.class), "Invalid @RmqScheduled of schedule"
                + " 'TwoParameters.run' on bean 'job' method TwoParameters.run 'void " + TwoParameters.class.getName()
                + ".run(java.lang.String,java.lang.String)': the method takes no parameter, or one java.time.Instant"
                + " (the firing time)");
    }

    @Test
    void aDefinitionThatDiffersFromARunningInstancesFailsStartUpNamingBoth() {
        runner.withBean("job", EveryTwoSeconds.class).run(first -> {
            assertThat(first).hasNotFailed();
            assertFailure(runner.withBean("job", EveryThreeSeconds.class), "schedule 'shared'",
                    "fixed rate 3s; misfire fire-once after 5s;", "runs schedule 'shared' as: fixed rate 2s; misfire"
                            + " fire-once after 5s;",
                    "Every instance must declare a schedule the same way");
        });
    }

    @Test
    void theStartLogShowsARateAsAUserWritesIt() {
        try (LogCapture log = LogCapture.of(RmqScheduler.class.getName())) {
            runner.withBean("job", EveryFifteenHundredMillis.class).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(RmqSchedules.class).get("t4-rate").definition()).isEqualTo("fixed rate"
                        + " 1500ms; misfire fire-once after 2s; calls bean 'job' method EveryFifteenHundredMillis.run");
            });
            assertThat(log.messages()).contains("RMQ runs 1 schedule(s): [t4-rate (fixed rate 1500ms, calls bean 'job'"
                    + " method EveryFifteenHundredMillis.run)]");
        }
    }

    @Test
    void theSameDefinitionOnASecondInstanceStarts() {
        runner.withBean("job", EveryTwoSeconds.class).run(first -> runner.withBean("job", EveryTwoSeconds.class)
                .run(second -> assertThat(second).hasNotFailed()));
    }

    /** The RMQ error in the start-up failure's causes has exactly this message. */
    private static void assertFailureMessage(ApplicationContextRunner runner, String message) {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasRootCauseInstanceOf(RmqInvalidArgumentException.class)
                    .rootCause().hasMessage(message);
        });
    }

    private static String thrownBy(Runnable call) {
        try {
            call.run();
        }
        catch (RuntimeException ex) {
            return ex.getMessage();
        }
        throw new AssertionError("expected a failure");
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
