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
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** When RMQ's observations appear, and what replaces them (no Redis needed: nothing here connects). */
class RmqObservationAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RmqObservationAutoConfiguration.class));

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
}
