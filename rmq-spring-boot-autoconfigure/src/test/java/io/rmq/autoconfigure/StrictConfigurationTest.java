package io.rmq.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.core.ConsumeMode;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.LateRedisServer;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.logging.LoggingApplicationListener;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Strict configuration: a real application started from a real configuration file on the class path; an unknown key
 * under rmq. fails start-up with Boot's failure report naming the key as written, its value, its file and line and
 * the nearest valid key, and every other RMQ property error names its file and line too. Relaxed binding keeps
 * working, and environment variables are not checked for unknown keys.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class StrictConfigurationTest {

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
            RmqAutoConfiguration.class})
    static class App {
    }

    @Test
    void aMisspeltConsumerKeyFailsNamingKeyValueFileLineAndTheNearestKey() {
        assertThat(failureReport("strict/consumer.yml")).contains("""
                    Property: rmq.consumer.max-retry
                    Value:    3
                    Origin:   class path resource [strict/consumer.yml] - 5:16
                    Rule:     is not an RMQ property; did you mean rmq.consumer.max-retries?
                """, "Rename rmq.consumer.max-retry to the RMQ property meant, or remove it");
    }

    @Test
    void aMisspeltDashboardGroupInAPropertiesFileFailsNamingItsLine() {
        assertThat(failureReport("strict/dashboard.properties")).contains("""
                    Property: rmq.dashbord.enabled
                    Value:    true
                    Origin:   class path resource [strict/dashboard.properties] - 2:22
                    Rule:     is not an RMQ property; did you mean rmq.dashboard.enabled?
                """);
    }

    @Test
    void aMisspeltTopLevelKeyFails() {
        assertThat(failureReport("strict/top-level.yml")).contains("""
                    Property: rmq.kee-prefix
                    Value:    orders-service
                    Origin:   class path resource [strict/top-level.yml] - 2:15
                    Rule:     is not an RMQ property; did you mean rmq.key-prefix?
                """);
    }

    @Test
    void aMisspeltKeyInATopicEntryFailsNamingTheKeyOfThatEntry() {
        assertThat(failureReport("strict/topic-entry.yml")).contains("""
                    Property: rmq.topics.orders.slot-amont
                    Value:    8
                    Origin:   class path resource [strict/topic-entry.yml] - 5:19
                    Rule:     is not an RMQ property; did you mean rmq.topics.orders.slot-amount?
                """, "A topic entry rmq.topics.<name> takes type, slot-amount, rate-limit, dead-letter-max-count,"
                + " dead-letter-max-age, dead-letter-keep-expired, expire-after, dedupe-for");
    }

    @Test
    void aSlotAmountThatIsNotAPowerOfTwoNamesItsFileAndLine() {
        assertThat(failureReport("strict/slot-amount.yml")).contains("""
                    Property: rmq.topics.orders.slot-amount
                    Value:    3
                    Origin:   class path resource [strict/slot-amount.yml] - 5:20
                    Rule:     must be a power of two between 1 and 16384
                """);
    }

    @Test
    void aDottedListenerIdWithoutBracketsFailsSuggestingTheBrackets() {
        assertThat(failureReport("strict/listener-id.yml")).contains("""
                    Property: rmq.listeners.billing.handle.mode
                    Value:    ORDERLY
                    Origin:   class path resource [strict/listener-id.yml] - 5:13
                    Rule:     is not an RMQ property; did you mean rmq.listeners[billing.handle].mode?
                """);
    }

    @Test
    void aMisspeltKeyOnTheCommandLineNamesItsSourceAndFurtherUnknownKeysAreListed() {
        assertThat(failureReport("strict/top-level.yml", "--rmq.consumer.batchSise=8")).contains("""
                    Property: rmq.consumer.batchSise
                    Value:    8
                    Origin:   "rmq.consumer.batchSise" from property source "commandLineArgs"
                    Rule:     is not an RMQ property; did you mean rmq.consumer.batch-size? \
                (also not RMQ properties: rmq.kee-prefix)
                """);
    }

    @Test
    void relaxedSpellingsDottedAndBracketedNamesAndEnvironmentVariablesStartTheApplication() {
        // Boot maps every RMQ_* variable onto rmq.*: RMQ's own (the lease) binds; other software's and the tests'
        // (RMQ_HOST, RMQ_TEST_REDIS_URL), and a misspelt one, are not refused
        Map<String, Object> environment = Map.of("RMQ_CONSUMER_LEASE", "20s", "RMQ_HOST", "rabbitmq.internal",
                "RMQ_TEST_REDIS_URL", "redis://elsewhere:6379", "RMQ_CONSUMER_MAXRETRY", "3");
        SpringApplication application = application();
        String systemEnvironment = StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME;
        application.addInitializers(context -> context.getEnvironment().getPropertySources().addAfter(
                systemEnvironment, new SystemEnvironmentPropertySource("test-" + systemEnvironment, environment)));
        List<String> args = new ArrayList<>(List.of("--rmq.consumer.maxRetries=5"));
        for (String property : RedisTopology.STANDALONE.propertyValues()) {
            args.add("--" + property);
        }
        try (ConfigurableApplicationContext context = application.run(args("strict/relaxed.yml",
                args.toArray(String[]::new)))) {
            RmqProperties properties = context.getBean(RmqProperties.class);
            assertThat(properties.consumer().batchSize()).isEqualTo(32);
            assertThat(properties.consumer().maxIdle()).isEqualTo(Duration.ofSeconds(20));
            assertThat(properties.consumer().backoff().max()).isEqualTo(Duration.ofMinutes(1));
            assertThat(properties.consumer().lease()).isEqualTo(Duration.ofSeconds(20));
            assertThat(properties.consumer().maxRetries()).isEqualTo(5);
            assertThat(properties.listeners().get("billing.handle").mode()).isEqualTo(ConsumeMode.ORDERLY);
            assertThat(context.getBean(Rmq.class).topics().all()).containsKeys("orders", "orders.dlt", "audit.trail");
            assertThat(context.getBean(Rmq.class).topics().get("orders").slotAmount()).isEqualTo(4);
        }
    }

    /**
     * Starts the application on {@code file} with Redis down (a property error must fail start-up before RMQ
     * connects; fail-fast would report Redis instead) and returns Boot's failure report, captured instead of printed.
     */
    private static String failureReport(String file, String... more) {
        try (LogCapture report = LogCapture.of(LoggingFailureAnalysisReporter.class.getName())) {
            List<String> args = new ArrayList<>(List.of(more));
            args.add("--spring.data.redis.host=127.0.0.1");
            args.add("--spring.data.redis.port=" + freePort());
            args.add("--rmq.startup.fail-fast=true");
            SpringApplication application = application();
            assertThatThrownBy(() -> application.run(args(file, args.toArray(String[]::new))))
                    .isInstanceOf(RuntimeException.class);
            assertThat(report.messages()).hasSize(1);
            String text = report.messages().get(0);
            assertThat(text).contains("APPLICATION FAILED TO START", "Invalid RMQ configuration:")
                    .doesNotContain("\tat ", "Caused by", "Exception:");
            return text;
        }
    }

    private static String[] args(String file, String... more) {
        List<String> args = new ArrayList<>(List.of("--spring.config.location=classpath:" + file,
                "--rmq.key-prefix=strict-" + UUID.randomUUID()));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    /**
     * A non-web application whose logging stays as the tests set it up: Boot's logging listener would re-initialise
     * Logback and drop the capture of the failure report.
     */
    private static SpringApplication application() {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setBannerMode(Banner.Mode.OFF);
        application.setRegisterShutdownHook(false);
        application.setListeners(application.getListeners().stream()
                .filter(listener -> !(listener instanceof LoggingApplicationListener)).toList());
        return application;
    }

    private static int freePort() {
        try {
            return LateRedisServer.freePort();
        }
        catch (java.io.IOException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
