package io.rmq.autoconfigure;

import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.rmq.micrometer.observation.ObservationInstrumentation;
import io.rmq.micrometer.observation.RmqProcessContext;
import io.rmq.micrometer.observation.RmqProcessObservationConvention;
import io.rmq.micrometer.observation.RmqSendContext;
import io.rmq.micrometer.observation.RmqSendObservationConvention;
import io.rmq.observe.RmqInstrumentation.SendScope;
import java.time.Instant;
import java.util.UUID;

import io.rmq.Rmq;
import io.rmq.test.ContextFailureLogs;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When RMQ's observations appear and what replaces them (no Redis needed: nothing connects), and, against a real Redis,
 * that the engine reports to them with the propagation the properties ask for.
 */
@ExtendWith({RedisServersExtension.class, ContextFailureLogs.class})
class RmqObservationAutoConfigurationTest {

    /** Observations are opt-in (as Spring Kafka's): the tests below turn them on unless they say otherwise. */
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RmqObservationAutoConfiguration.class))
            .withPropertyValues("rmq.observation.enabled=true");

    @Test
    void theEngineReportsToTheObservationsAndItsListenersReadContextsWithPropagateContext() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class,
                        RmqObservationAutoConfiguration.class))
                .withPropertyValues(RedisTopology.STANDALONE.propertyValues("obs-" + UUID.randomUUID()))
                .withPropertyValues("rmq.topics.orders.type=FIXED_TIME",
                        "rmq.observation.enabled=true", "rmq.observation.propagate-context=true")
                .withBean(ObservationRegistry.class, () -> registry).run(context -> {
                    assertThat(context).hasNotFailed();
                    Rmq rmq = context.getBean(Rmq.class);
                    assertThat(rmq.options().propagateContext()).isTrue();
                    rmq.producer().sendFixedTime("orders", "{\"id\":1}", Instant.now());
                    TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("rmq.send")
                            .that().hasBeenStopped()
                            .hasLowCardinalityKeyValue("messaging.destination.name", "orders");
                });
    }

    @Test
    void appearsWithAnObservationRegistry() {
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(ObservationInstrumentation.class);
        });
    }

    @Test
    void isAbsentWithoutAnObservationRegistry() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(ObservationInstrumentation.class);
        });
    }

    @Test
    void backsOffForTheApplicationsOwnInstrumentation() {
        ObservationInstrumentation own = new ObservationInstrumentation(ObservationRegistry.NOOP);
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
                .withBean("myInstrumentation", ObservationInstrumentation.class, () -> own).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).getBean(ObservationInstrumentation.class).isSameAs(own);
                });
    }

    @Test
    void isOffByDefaultEvenWithAnObservationRegistry() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RmqObservationAutoConfiguration.class))
                .withBean(ObservationRegistry.class, TestObservationRegistry::create).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(ObservationInstrumentation.class);
                });
    }

    @Test
    void isOffWithObservationEnabledFalse() {
        runner.withBean(ObservationRegistry.class, TestObservationRegistry::create)
                .withPropertyValues("rmq.observation.enabled=false").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(ObservationInstrumentation.class);
                });
    }

    @Test
    void takesTheApplicationsConventions() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withBean(RmqSendObservationConvention.class, () -> new RmqSendObservationConvention() {
                    @Override
                    public String getName() {
                        return "my.send";
                    }
                })
                .withBean(RmqProcessObservationConvention.class, () -> new RmqProcessObservationConvention() {
                    @Override
                    public String getContextualName(RmqProcessContext context) {
                        return "handle " + context.topic();
                    }
                }).run(context -> {
                    ObservationInstrumentation instrumentation = context.getBean(ObservationInstrumentation.class);
                    instrumentation.sendStarted("orders", 1).finished(1, 0, null);
                    TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("my.send")
                            .that().hasBeenStarted().hasBeenStopped()
                            .hasLowCardinalityKeyValue("messaging.destination.name", "orders");
                });
    }

    @Test
    void propagateContextMakesTheSendCarryTheContextAndIsOffByDefault() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        // a stand-in for a tracing handler: injects a traceparent as Micrometer Tracing's propagating handler does
        registry.observationConfig().observationHandler(new io.micrometer.observation.ObservationHandler<RmqSendContext>() {
            @Override
            public void onStart(RmqSendContext context) {
                context.getSetter().set(context.getCarrier(), "traceparent", "00-abc-def-01");
            }

            @Override
            public boolean supportsContext(io.micrometer.observation.Observation.Context context) {
                return context instanceof RmqSendContext;
            }
        });
        runner.withBean(ObservationRegistry.class, () -> registry).run(context -> {
            SendScope scope = context.getBean(ObservationInstrumentation.class).sendStarted("orders", 1);
            assertThat(scope.context()).isEmpty();
            scope.finished(1, 0, null);
        });
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("rmq.observation.propagate-context=true").run(context -> {
                    assertThat(context.getBean(RmqProperties.class).observation().propagateContext()).isTrue();
                    SendScope scope = context.getBean(ObservationInstrumentation.class).sendStarted("orders", 1);
                    assertThat(scope.context()).containsEntry("traceparent", "00-abc-def-01");
                    scope.finished(1, 0, null);
                });
    }

    @Test
    void anUnsampledSendCarriesNoContextUnlessPropagateUnsampled() {
        String unsampled = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
        String sampled = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        java.util.concurrent.atomic.AtomicReference<String> injected = new java.util.concurrent.atomic.AtomicReference<>();
        TestObservationRegistry registry = TestObservationRegistry.create();
        // a stand-in for a tracing handler: injects the traceparent its sampler decided, as Micrometer Tracing does
        registry.observationConfig().observationHandler(new io.micrometer.observation.ObservationHandler<RmqSendContext>() {
            @Override
            public void onStart(RmqSendContext context) {
                context.getSetter().set(context.getCarrier(), "traceparent", injected.get());
            }

            @Override
            public boolean supportsContext(io.micrometer.observation.Observation.Context context) {
                return context instanceof RmqSendContext;
            }
        });
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("rmq.observation.propagate-context=true").run(context -> {
                    assertThat(context.getBean(RmqProperties.class).observation().propagateUnsampled()).isFalse();
                    ObservationInstrumentation instrumentation = context.getBean(ObservationInstrumentation.class);
                    injected.set(unsampled);
                    SendScope scope = instrumentation.sendStarted("orders", 1);
                    assertThat(scope.context()).as("unsampled: nothing to store").isEmpty();
                    scope.finished(1, 0, null);
                    injected.set(sampled);
                    scope = instrumentation.sendStarted("orders", 1);
                    assertThat(scope.context()).containsExactly(java.util.Map.entry("traceparent", sampled));
                    scope.finished(1, 0, null);
                });
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("rmq.observation.propagate-context=true", "rmq.observation.propagate-unsampled=true")
                .run(context -> {
                    injected.set(unsampled);
                    SendScope scope = context.getBean(ObservationInstrumentation.class).sendStarted("orders", 1);
                    assertThat(scope.context()).containsExactly(java.util.Map.entry("traceparent", unsampled));
                    scope.finished(1, 0, null);
                });
        runner.withBean(ObservationRegistry.class, () -> registry)
                .withPropertyValues("rmq.observation.propagate-unsampled=true").run(context -> {
                    injected.set(unsampled);
                    SendScope scope = context.getBean(ObservationInstrumentation.class).sendStarted("orders", 1);
                    assertThat(scope.context()).as("propagate-unsampled alone propagates nothing").isEmpty();
                    scope.finished(1, 0, null);
                });
    }
}
