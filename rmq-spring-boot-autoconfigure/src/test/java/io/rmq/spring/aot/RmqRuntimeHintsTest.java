package io.rmq.spring.aot;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.rmq.autoconfigure.RmqProperties;
import io.rmq.consumer.Delivery;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqHandler;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.spring.dashboard.RmqDashboard;
import io.rmq.spring.operations.RmqOperations;
import org.junit.jupiter.api.Test;

import org.springframework.aot.AotDetector;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.javapoet.ClassName;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.SendTo;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hints a GraalVM native image needs (checked with Spring's {@link RuntimeHintsPredicates}; no native image is
 * built here): RMQ's resources, proxy and JSON-bound types, and each listener method with its payload types, found by
 * Spring's AOT processing of a context.
 */
class RmqRuntimeHintsTest {

    record Order(String id, List<Line> lines) {
    }

    record Line(String sku, int quantity) {
    }

    record Refund(String orderId) {
    }

    record Receipt(String orderId) {
    }

    record Audit(Map<String, Integer> counts) {
    }

    record NotAPayload(String value) {
    }

    record Shipment(String id) {
    }

    record Batched(String id) {
    }

    @RmqListener(topic = "shipments")
    static class ClassLevel {
        @RmqHandler
        void onShipment(Shipment shipment) {
        }
    }

    static class BatchListener {
        @RmqListener(topic = "batched", batch = "true")
        void onBatch(List<Batched> batch) {
        }
    }

    static class Listeners {
        @RmqListener(topic = "orders")
        @SendTo("receipts")
        Receipt onOrder(Order order, @Header(RmqHeaders.ATTEMPT) int attempt, Delivery delivery) {
            return new Receipt(order.id());
        }

        @RmqListener(topic = "refunds")
        void onRefund(RmqMessage<Refund> refund) {
        }

        @RmqListener(topic = "audits")
        void onAudit(Message<Audit> audit) {
        }

        void notAListener(NotAPayload value) {
        }
    }

    private final RuntimeHints hints = new RuntimeHints();

    @Test
    void everyLuaScriptOfRmqCoreIsAResource() throws IOException {
        new RmqRuntimeHints().registerHints(hints, getClass().getClassLoader());
        Resource[] scripts = new PathMatchingResourcePatternResolver().getResources("classpath*:io/rmq/redis/scripts/*.lua");
        assertThat(scripts).hasSizeGreaterThan(10);
        for (Resource script : scripts) {
            assertThat(RuntimeHintsPredicates.resource().forResource("io/rmq/redis/scripts/" + script.getFilename()))
                    .as(script.getFilename()).accepts(hints);
        }
    }

    @Test
    void theDashboardsAssetsAreResources() {
        new RmqRuntimeHints().registerHints(hints, getClass().getClassLoader());
        for (String asset : List.of("dashboard.html", "dashboard.js", "dashboard.css")) {
            assertThat(RmqDashboard.class.getResource(asset)).as(asset).isNotNull();
            assertThat(RuntimeHintsPredicates.resource().forResource("io/rmq/spring/dashboard/" + asset)).as(asset)
                    .accepts(hints);
        }
    }

    @Test
    void theUnconnectedCommandsProxyAndWhatTheDashboardAndEndpointReturnAreRegistered() {
        new RmqRuntimeHints().registerHints(hints, getClass().getClassLoader());
        assertThat(RuntimeHintsPredicates.proxies().forInterfaces(RedisClusterAsyncCommands.class)).accepts(hints);
        for (Class<?> type : List.of(RmqOperations.Overview.class, RmqOperations.DeadPage.class,
                RmqOperations.DeadView.class, RmqOperations.FindView.class, RmqDashboard.Overview.class,
                RmqDashboard.TopicMeters.class)) {
            assertThat(RuntimeHintsPredicates.reflection().onType(type)).as(type.getName()).accepts(hints);
        }
        // the accessors Jackson reads a record through
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RmqOperations.DeadView.class, "body"))
                .accepts(hints);
        // the record components the check of unknown rmq.* keys walks, nested records included
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RmqProperties.Consumer.class, "backoff"))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RmqProperties.Backoff.class, "jitter"))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RmqProperties.Topic.class, "slotAmount"))
                .accepts(hints);
    }

    @Test
    void theRegistrarsAreFoundInAotFactories() {
        assertThat(AotServices.factories().load(RuntimeHintsRegistrar.class))
                .anyMatch(RmqRuntimeHints.class::isInstance);
        assertThat(AotServices.factories().load(BeanRegistrationAotProcessor.class))
                .anyMatch(RmqListenerBeanRegistrationAotProcessor.class::isInstance);
    }

    @Test
    void aotProcessingOfAContextRegistersItsListenerMethodsAndTheirPayloadTypes() throws Exception {
        assertThat(AotDetector.useGeneratedArtifacts()).isFalse();
        RuntimeHints generated;
        try (GenericApplicationContext context = new GenericApplicationContext()) {
            context.registerBean("listeners", Listeners.class);
            context.registerBean("classLevel", ClassLevel.class);
            context.registerBean("batchListener", BatchListener.class);
            DefaultGenerationContext generation = new DefaultGenerationContext(
                    new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
            new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
            generated = generation.getRuntimeHints();
        }
        for (String method : List.of("onOrder", "onRefund", "onAudit")) {
            assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Listeners.class, method)).as(method)
                    .accepts(generated);
        }
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(ClassLevel.class, "onShipment"))
                .accepts(generated);
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(BatchListener.class, "onBatch"))
                .accepts(generated);
        // payloads (and what they hold), T of RmqMessage<T> and Message<T>, the @SendTo reply, a @RmqHandler's
        // payload and a batch listener's element type
        for (Class<?> type : List.of(Order.class, Line.class, Refund.class, Audit.class, Receipt.class, Shipment.class,
                Batched.class)) {
            assertThat(RuntimeHintsPredicates.reflection().onType(type)).as(type.getSimpleName()).accepts(generated);
        }
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Order.class, "lines")).accepts(generated);
        // not listeners, not payloads
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Listeners.class, "notAListener"))
                .rejects(generated);
        assertThat(RuntimeHintsPredicates.reflection().onType(NotAPayload.class)).rejects(generated);
        assertThat(RuntimeHintsPredicates.reflection().onType(Delivery.class)).rejects(generated);
    }
}
