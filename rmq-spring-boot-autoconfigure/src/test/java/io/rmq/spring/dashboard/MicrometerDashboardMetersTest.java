package io.rmq.spring.dashboard;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The dashboard's figures from the meters named in the README (sent, handled, lateness percentiles). */
class MicrometerDashboardMetersTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private MicrometerDashboardMeters meters(MeterRegistry registry) {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        if (registry != null) {
            beans.registerSingleton("registry", registry);
        }
        return new MicrometerDashboardMeters(beans.getBeanProvider(MeterRegistry.class));
    }

    @Test
    void sentHandledAndLatenessAreReadPerTopic() {
        Counter.builder("messaging.client.sent.messages").tags("messaging.destination.name", "orders", "error.type",
                "none").register(registry).increment(5);
        Counter.builder("messaging.client.sent.messages").tags("messaging.destination.name", "orders", "error.type",
                "RmqUnavailableException").register(registry).increment(2);
        Counter.builder("rmq.handled.messages").tags("messaging.destination.name", "orders", "rmq.listener.id", "a",
                "rmq.outcome", "ack").register(registry).increment(3);
        Counter.builder("rmq.handled.messages").tags("messaging.destination.name", "orders", "rmq.listener.id", "a",
                "rmq.outcome", "dead").register(registry).increment(1);
        Timer lateness = Timer.builder("rmq.delivery.lateness").tags("messaging.destination.name", "orders",
                "rmq.listener.id", "a").publishPercentiles(0.5, 0.9, 0.99).register(registry);
        for (int i = 1; i <= 100; i++) {
            lateness.record(Duration.ofMillis(i));
        }

        RmqDashboard.TopicMeters orders = meters(registry).topic("orders");
        assertThat(orders.sent()).as("sends that failed are not counted").isEqualTo(5.0);
        assertThat(orders.handled()).as("every outcome").isEqualTo(4.0);
        assertThat(orders.latenessP50()).isBetween(40.0, 60.0);
        assertThat(orders.latenessP99()).isBetween(90.0, 110.0);
        assertThat(meters(registry).available()).isTrue();

        // RMQ's own lateness timer has fixed buckets, no client-side percentiles: estimated from its buckets
        Timer histogram = Timer.builder("rmq.delivery.lateness").tags("messaging.destination.name", "late",
                "rmq.listener.id", "b").serviceLevelObjectives(io.rmq.micrometer.MicrometerInstrumentation.LATENESS_BUCKETS)
                .register(registry);
        for (int i = 1; i <= 100; i++) {
            histogram.record(Duration.ofMillis(i));
        }
        RmqDashboard.TopicMeters late = meters(registry).topic("late");
        assertThat(late.latenessP50()).as("an upper bound of p50 from the buckets").isBetween(50.0, 70.0);
        assertThat(late.latenessP99()).isBetween(99.0, 125.0);

        RmqDashboard.TopicMeters other = meters(registry).topic("other");
        assertThat(other.sent()).as("no meter: shown as —").isNull();
        assertThat(other.latenessP50()).isNull();
    }

    @Test
    void withoutARegistryThereAreNoFigures() {
        assertThat(meters(null).available()).isFalse();
        assertThat(meters(null).topic("orders")).isNull();
    }
}
