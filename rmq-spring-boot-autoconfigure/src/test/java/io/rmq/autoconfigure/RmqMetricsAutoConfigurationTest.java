package io.rmq.autoconfigure;

import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.Rmq;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.micrometer.RmqQueueSizeMeters;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class RmqMetricsAutoConfigurationTest {

    private final ApplicationContextRunner withoutMicrometer = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class, RmqMetricsAutoConfiguration.class))
            .withPropertyValues(RedisTopology.STANDALONE.propertyValues("mac-" + UUID.randomUUID()))
            .withPropertyValues("rmq.topics.sized.type=FIXED_TIME");

    private final ApplicationContextRunner runner = withoutMicrometer.withConfiguration(AutoConfigurations.of(
            MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
            SimpleMetricsExportAutoConfiguration.class));

    /** The engine reports to {@code meters} (the engine guards what it is given, so it holds a wrapper, not it). */
    private static void assertReportsTo(Rmq engine, MicrometerInstrumentation meters) {
        double before = meters.registry().find("rmq.watchdog.repairs").counters().stream()
                .mapToDouble(c -> c.count()).sum();
        engine.options().instrumentation().watchdogRepaired("probe", "probe-topic");
        assertThat(meters.registry().find("rmq.watchdog.repairs").counters().stream().mapToDouble(c -> c.count())
                .sum()).isEqualTo(before + 1);
    }

    @Test
    void withAMeterRegistryTheEngineReportsToTheMetersAndTheQueueSizesAreGauged() {
        runner.withPropertyValues("rmq.metrics.queue-sizes-interval=200ms").run(context -> {
            assertThat(context).hasNotFailed();
            MicrometerInstrumentation meters = context.getBean(MicrometerInstrumentation.class);
            assertReportsTo(context.getBean(Rmq.class), meters);
            assertThat(context).hasSingleBean(RmqQueueSizeMeters.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> registry
                    .find("rmq.messages").tag("messaging.destination.name", "sized").tag("rmq.state", "waiting")
                    .gauge() != null && registry.get("rmq.messages").tag("messaging.destination.name", "sized")
                    .tag("rmq.state", "waiting").gauge().value() == 0);
        });
    }

    @Test
    void withoutAMeterRegistryThereAreNoMeters() {
        withoutMicrometer.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(MicrometerInstrumentation.class);
            assertThat(context).doesNotHaveBean(RmqQueueSizeMeters.class);
            assertThat(context.getBean(Rmq.class).options().instrumentation()).isSameAs(RmqInstrumentation.NONE);
        });
    }

    @Test
    void withoutMicrometerOnTheClassPathTheEngineRunsWithoutMeters() {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer.core")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean("rmqMicrometerInstrumentation");
            assertThat(context).doesNotHaveBean("rmqQueueSizeMeters");
            assertThat(context.getBean(Rmq.class).options().instrumentation()).isSameAs(RmqInstrumentation.NONE);
        });
    }

    @Test
    void theApplicationsOwnInstrumentationWins() {
        runner.withUserConfiguration(OwnMeters.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(MicrometerInstrumentation.class);
            assertThat(context.getBean(MicrometerInstrumentation.class))
                    .isSameAs(context.getBean(OwnMeters.class).own);
            assertReportsTo(context.getBean(Rmq.class), context.getBean(OwnMeters.class).own);
        });
    }

    @Test
    void everyInstrumentationBeanIsCombined() {
        runner.withUserConfiguration(AnotherInstrumentation.class).run(context -> {
            assertThat(context).hasNotFailed();
            RmqInstrumentation engine = context.getBean(Rmq.class).options().instrumentation();
            assertThat(engine).isNotSameAs(context.getBean(MicrometerInstrumentation.class))
                    .isNotSameAs(RmqInstrumentation.NONE);
            engine.watchdogRepaired("l", "t");
            assertThat(context.getBean(AnotherInstrumentation.class).repairs).hasValue(1);
            assertThat(context.getBean(MeterRegistry.class).get("rmq.watchdog.repairs").counter().count())
                    .isEqualTo(1);
        });
    }

    @Test
    void rmqMetricsEnabledFalseTurnsTheMetersOff() {
        runner.withPropertyValues("rmq.metrics.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(MicrometerInstrumentation.class);
            assertThat(context).doesNotHaveBean(RmqQueueSizeMeters.class);
            assertThat(context.getBean(Rmq.class).options().instrumentation()).isSameAs(RmqInstrumentation.NONE);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnMeters {

        final MicrometerInstrumentation own = new MicrometerInstrumentation(new SimpleMeterRegistry());

        @Bean
        MicrometerInstrumentation ownMeters() {
            return own;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AnotherInstrumentation {

        final java.util.concurrent.atomic.AtomicInteger repairs = new java.util.concurrent.atomic.AtomicInteger();

        @Bean
        RmqInstrumentation countingRepairs() {
            return new RmqInstrumentation() {
                @Override
                public void watchdogRepaired(String listenerId, String topic) {
                    repairs.incrementAndGet();
                }
            };
        }
    }
}
