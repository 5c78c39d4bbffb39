package io.rmq.autoconfigure;

import java.util.List;
import java.util.UUID;

import io.lettuce.core.RedisConnectionException;
import io.rmq.Rmq;
import io.rmq.autoconfigure.diagnostics.InvalidRmqPropertyFailureAnalyzer;
import io.rmq.autoconfigure.diagnostics.RedisUnreachableFailureAnalyzer;
import io.rmq.autoconfigure.diagnostics.RmqInvalidArgumentFailureAnalyzer;
import io.rmq.autoconfigure.diagnostics.RmqListenerFailureAnalyzer;
import io.rmq.autoconfigure.diagnostics.TopicConflictFailureAnalyzer;
import io.rmq.core.TopicType;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.LateRedisServer;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RMQ's start-up failures, each produced by a real failing context and reported the way Spring Boot reports it: the
 * first analyzer registered in spring.factories that recognises it wins, and its text fits one screen.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class StartupFailureAnalysisTest {

    /** The environment of the context last started: Boot hands the failed application's to the analyzers. */
    private static Environment environment = new StandardEnvironment();

    private final ApplicationContextRunner base = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
                    RmqAutoConfiguration.class))
            .withInitializer(context -> environment = context.getEnvironment())
            .withPropertyValues("rmq.key-prefix=sfa-" + UUID.randomUUID());

    /** Nothing listens on this port: a bad property must fail before RMQ tries it (fail-fast would report that). */
    private ApplicationContextRunner redisDown;
    private ApplicationContextRunner redisUp;

    @BeforeEach
    void setUp() throws Exception {
        redisDown = base.withPropertyValues("spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + LateRedisServer.freePort(), "rmq.startup.fail-fast=true");
        redisUp = base.withPropertyValues(RedisTopology.STANDALONE.propertyValues());
    }

    @Test
    void aTopicWithoutTypeFailsNamingThePropertyAndTheAllowedTypesWithoutConnecting() {
        redisDown.withPropertyValues("rmq.topics.orders.slot-amount=8").run(context -> {
            FailureAnalysis analysis = analysis(context, InvalidRmqPropertyFailureAnalyzer.class);
            assertThat(analysis.getDescription()).contains("Property: rmq.topics.orders.type", "Value:    null",
                    "Origin:   not set; rmq.topics.orders is at \"rmq.topics.orders.slot-amount\" from property source"
                            + " \"test\"",
                    "Rule:     must be set, to one of RANGE_MERGE, PRIORITY, FIXED_TIME");
        });
    }

    @Test
    void aSlotAmountThatIsNotAPowerOfTwoFailsNamingThePropertyTheValueAndTheRule() {
        redisDown.withPropertyValues("rmq.topics.orders.type=PRIORITY", "rmq.topics.orders.slot-amount=12")
                .run(context -> assertThat(analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                        .contains("Property: rmq.topics.orders.slot-amount", "Value:    12",
                                "Origin:   \"rmq.topics.orders.slot-amount\" from property source \"test\"",
                                "must be a power of two between 1 and 16384"));
        redisDown.withPropertyValues("rmq.topics.orders.type=PRIORITY", "rmq.topics.orders.slot-amount=0")
                .run(context -> assertThat(analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                        .contains("Value:    0", "must be a power of two"));
    }

    @Test
    void anInvalidTopicNameFailsNamingTheNameAndTheNamingRule() {
        redisDown.withPropertyValues("rmq.topics[a b].type=PRIORITY").run(context -> assertThat(
                analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                .contains("Property: topic name in rmq.topics", "Value:    a b",
                        "Origin:   \"rmq.topics[a b].type\" from property source \"test\"",
                        "must be 1-100 characters of letters, digits, '.', '_' or '-'"));
    }

    @Test
    void aMisspelledKeyInATopicEntryFailsNamingItTheNearestKeyAndTheValidKeys() {
        redisDown.withPropertyValues("rmq.topics.orders.type=PRIORITY", "rmq.topics.orders.slot-amont=8")
                .run(context -> {
                    FailureAnalysis analysis = analysis(context, InvalidRmqPropertyFailureAnalyzer.class);
                    assertThat(analysis.getDescription()).contains("Property: rmq.topics.orders.slot-amont",
                            "Value:    8", "Origin:   \"rmq.topics.orders.slot-amont\" from property source \"test\"",
                            "Rule:     is not an RMQ property; did you mean rmq.topics.orders.slot-amount?");
                    assertThat(analysis.getAction()).contains("A topic entry rmq.topics.<name> takes type, slot-amount,"
                            + " rate-limit");
                });
    }

    @Test
    void aTopicNamedWithDotsIsCheckedLikeAnyOther() {
        redisDown.withPropertyValues("rmq.topics.orders.dlt.slot-amount=8").run(context -> assertThat(
                analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                .contains("Property: rmq.topics.orders.dlt.type", "Value:    null",
                        "Rule:     must be set, to one of RANGE_MERGE, PRIORITY, FIXED_TIME"));
        redisDown.withPropertyValues("rmq.topics.orders.dlt.type=FIXED_TIME", "rmq.topics.orders.dlt.slot-amont=8")
                .run(context -> assertThat(analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                        .contains("Property: rmq.topics.orders.dlt.slot-amont", "Value:    8",
                                "did you mean rmq.topics.orders.dlt.slot-amount?"));
        redisDown.withPropertyValues("rmq.topics.orders.dlt.type=FIXED", "rmq.topics.orders.type=PRIORITY")
                .run(context -> assertThat(analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                        .contains("Property: rmq.topics.orders.dlt.type", "Value:    FIXED",
                                "must be one of RANGE_MERGE, PRIORITY, FIXED_TIME"));
    }

    @Test
    void theCamelCaseFormOfATopicKeyIsAccepted() {
        redisUp.withPropertyValues("rmq.topics.orders.type=PRIORITY", "rmq.topics.orders.slotAmount=8",
                "rmq.topics.orders.rate_limit=5/s").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Rmq.class).topics().get("orders").slotAmount()).isEqualTo(8);
                });
    }

    @Test
    void anUnknownTypeFailsListingTheTypes() {
        redisDown.withPropertyValues("rmq.topics.orders.type=RANGE").run(context -> assertThat(
                analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                .contains("Property: rmq.topics.orders.type", "Value:    RANGE",
                        "must be one of RANGE_MERGE, PRIORITY, FIXED_TIME"));
    }

    @Test
    void aBadRateLimitFailsNamingTheProperty() {
        redisDown.withPropertyValues("rmq.topics.orders.type=PRIORITY", "rmq.topics.orders.rate-limit=fast")
                .run(context -> assertThat(analysis(context, InvalidRmqPropertyFailureAnalyzer.class).getDescription())
                        .contains("Property: rmq.topics.orders.rate-limit", "Value:    fast", "500/s"));
    }

    @Test
    void aValueThatDoesNotConvertFailsNamingThePropertyAndTheExpectedType() {
        redisDown.withPropertyValues("rmq.consumer.lease=soon").run(context -> {
            FailureAnalysis analysis = analysis(context, InvalidRmqPropertyFailureAnalyzer.class);
            assertThat(analysis.getDescription()).contains("Property: rmq.consumer.lease", "Value:    soon",
                    "Origin:   \"rmq.consumer.lease\" from property source \"test\"", "cannot be read as Duration");
            assertThat(analysis.getAction()).startsWith("Correct rmq.consumer.lease").doesNotContain("topic");
        });
    }

    @Test
    void aTopicDefinedDifferentlyInRedisFailsNamingBothDefinitions() {
        redisUp.withPropertyValues("rmq.key-prefix=conflict-" + UUID.randomUUID().toString().substring(0, 8))
                .run(first -> {
                    first.getBean(Rmq.class).defineTopic("orders", TopicType.FIXED_TIME, 8);
                    String prefix = first.getBean(RmqProperties.class).keyPrefix();
                    redisUp.withPropertyValues("rmq.key-prefix=" + prefix, "rmq.topics.orders.type=PRIORITY")
                            .run(second -> assertThat(analysis(second, TopicConflictFailureAnalyzer.class)
                                    .getDescription()).contains(
                                    "topic 'orders' type=FIXED_TIME slotAmount=8 (registered in Redis)",
                                    "topic 'orders' type=PRIORITY slotAmount=16 (requested)"));
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class DeclaresConcurrent {
        @Bean
        String concurrentLedger(Rmq rmq) {
            rmq.declareConsumeMode("ledger", io.rmq.core.ConsumeMode.CONCURRENT);
            return "never";
        }
    }

    static class OrderlyLedger {
        @RmqListener(topic = "ledger", mode = "ORDERLY")
        void handle(String body) {
        }
    }

    static class ConcurrentLedger {
        @RmqListener(topic = "ledger")
        void handle(String body) {
        }
    }

    @Test
    void aListenerOfAnotherModeThanTheTopicsFailsNamingBothDefinitionsAndTheWayToSwitch() {
        String prefix = "mode-" + UUID.randomUUID().toString().substring(0, 8);
        ApplicationContextRunner app = redisUp.withPropertyValues("rmq.key-prefix=" + prefix,
                "rmq.topics.ledger.type=FIXED_TIME");
        app.withBean("ledger", OrderlyLedger.class).run(first -> {
            assertThat(first).hasNotFailed();
            app.withBean("ledger", ConcurrentLedger.class).run(second -> {
                FailureAnalysis analysis = analysis(second, RmqListenerFailureAnalyzer.class);
                assertThat(analysis.getDescription()).isEqualTo("An RMQ listener cannot be started:\n\n"
                        + "    Listener: @RmqListener on bean 'ledger' method 'ConcurrentLedger.handle'\n"
                        + "    Problem:  Conflicting definitions of topic 'ledger': topic 'ledger' type=FIXED_TIME"
                        + " slotAmount=16 mode=ORDERLY (registered in Redis) versus topic 'ledger' type=FIXED_TIME"
                        + " slotAmount=16 mode=CONCURRENT (requested); a topic is consumed in one mode, cluster-wide:"
                        + " to consume it CONCURRENT, stop its ORDERLY listeners and call"
                        + " RmqAdmin.endOrdering(\"ledger\")\n");
                assertThat(analysis.getAction()).isEqualTo("A topic is consumed in one mode everywhere (ORDERLY slots"
                        + " have owners and keep their messages in order, which CONCURRENT consumers must not touch);"
                        + " the first listener registers it with the topic. Make the listeners' modes agree"
                        + " (@RmqListener(mode), rmq.listeners.<id>.mode), or change the topic's mode: to consume it"
                        + " CONCURRENT, stop its ORDERLY listeners and call RmqAdmin.endOrdering(\"ledger\").");
            });
        });
        // application code that declares a mode meets the conflict analyzer, which names both sides too
        app.withUserConfiguration(DeclaresConcurrent.class).run(fromCode -> {
            FailureAnalysis analysis = analysis(fromCode, TopicConflictFailureAnalyzer.class);
            assertThat(analysis.getDescription()).isEqualTo("""
                    Topic 'ledger' is defined twice, differently:

                        topic 'ledger' type=FIXED_TIME slotAmount=16 mode=ORDERLY (registered in Redis)
                        topic 'ledger' type=FIXED_TIME slotAmount=16 mode=CONCURRENT (requested)
                    """);
            assertThat(analysis.getAction()).endsWith("call RmqAdmin.endOrdering(\"ledger\").");
        });
        // the mode stays with the topic after the ORDERLY application stopped, until ordering is ended
        app.withBean("ledger", ConcurrentLedger.class).run(third -> assertThat(third).hasFailed());
        app.run(admin -> admin.getBean(Rmq.class).admin().endOrdering("ledger"));
        app.withBean("ledger", ConcurrentLedger.class).run(fourth -> assertThat(fourth).hasNotFailed());
    }

    static class TwoParameters {
        @RmqListener(topic = "t", type = "PRIORITY")
        void handle(String a, String b) {
        }
    }

    @Test
    void anUnusableListenerFailsNamingBeanMethodAndProblem() {
        redisUp.withBean("myListener", TwoParameters.class).run(context -> assertThat(
                analysis(context, RmqListenerFailureAnalyzer.class).getDescription())
                .contains("Listener: @RmqListener on bean 'myListener' method 'TwoParameters.handle'",
                        "Problem:  the method takes 2 payload parameters"));
    }

    @Configuration(proxyBeanMethods = false)
    static class DefinesABadTopic {
        @Bean
        String badTopic(Rmq rmq) {
            rmq.defineTopic("t", TopicType.PRIORITY, 12);
            return "never";
        }
    }

    @Test
    void anInvalidArgumentFromApplicationCodeFailsNamingFieldValueAndRule() {
        redisUp.withUserConfiguration(DefinesABadTopic.class).run(context -> assertThat(
                analysis(context, RmqInvalidArgumentFailureAnalyzer.class).getDescription())
                .contains("Field: slotAmount", "Value: 12", "must be a power of two"));
    }

    @Test
    void withFailFastAnUnreachableRedisFailsStartUpNamingTheAddressAndTheWayOut() {
        redisDown.run(context -> {
            FailureAnalysis analysis = analysis(context, RedisUnreachableFailureAnalyzer.class);
            assertThat(analysis.getDescription()).contains("Redis:  127.0.0.1:", "Connection refused");
            assertThat(analysis.getAction()).contains("rmq.startup.fail-fast=false");
        });
    }

    /**
     * The analysis Spring Boot would print: the first analyzer (in spring.factories, sorted by order) that
     * recognises the failure. Asserts it is the expected one and fits one screen with no stack or cause chain.
     */
    @Test
    void anUnknownTransactionModeFailsNamingThePropertyAndTheModes() {
        redisDown.withPropertyValues("rmq.template.transaction-mode=later").run(context -> {
            FailureAnalysis analysis = analysis(context, InvalidRmqPropertyFailureAnalyzer.class);
            assertThat(analysis.getDescription()).contains("Property: rmq.template.transaction-mode", "Value:    later");
        });
    }

    private static FailureAnalysis analysis(AssertableApplicationContext context,
            Class<? extends FailureAnalyzer> expected) {
        assertThat(context).hasFailed();
        Throwable failure = context.getStartupFailure();
        if (expected != RedisUnreachableFailureAnalyzer.class) {
            // checks ran before RMQ connected to Redis (for the runners where Redis is down)
            assertThat(failure).rootCause().isNotInstanceOf(RedisConnectionException.class);
        }
        SpringFactoriesLoader.ArgumentResolver arguments = SpringFactoriesLoader.ArgumentResolver
                .of(BeanFactory.class, new DefaultListableBeanFactory())
                .and(Environment.class, environment);
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader
                .forDefaultResourceLocation(StartupFailureAnalysisTest.class.getClassLoader())
                .load(FailureAnalyzer.class, arguments, SpringFactoriesLoader.FailureHandler.handleMessage((m, ex) -> {
                    // as Boot does: an analyzer whose classes are missing (web ones here) is left out
                }));
        for (FailureAnalyzer analyzer : analyzers) {
            FailureAnalysis analysis = analyzer.analyze(failure);
            if (analysis != null) {
                assertThat(analyzer).isInstanceOf(expected);
                String text = analysis.getDescription() + "\n" + analysis.getAction();
                assertThat(text.lines().count()).as(text).isLessThanOrEqualTo(12);
                assertThat(text).doesNotContain("\tat ", "Caused by", "Exception:", "nested exception");
                return analysis;
            }
        }
        throw new AssertionError("no analyzer recognised " + failure);
    }
}
