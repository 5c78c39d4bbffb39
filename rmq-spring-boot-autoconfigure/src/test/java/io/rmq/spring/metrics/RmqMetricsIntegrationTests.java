package io.rmq.spring.metrics;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * RMQ's meters end to end through Spring Boot, on a real Redis, standalone and cluster (the subclasses): what was
 * sent, consumed, handled, how late, and what waits in Redis, each meter with its tags.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = MetricsTestApplication.class, properties = {"rmq.topics.m-waiting.type=FIXED_TIME",
        "rmq.topics.m-waiting.slot-amount=4", "rmq.topics.m-merge.type=RANGE_MERGE",
        "rmq.metrics.queue-sizes-interval=300ms"})
abstract class RmqMetricsIntegrationTests {

    @Autowired
    RmqTemplate template;

    @Autowired
    MeterRegistry registry;

    @Autowired
    MetricsTestApplication.Listeners listeners;

    static void redis(DynamicPropertyRegistry registry, RedisTopology topology) {
        topology.springProperties("mt-" + topology.name().toLowerCase() + "-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    @Test
    void sendsAreCountedAsAddedOrMerged() {
        template.sendRangeMerge("m-merge", "same", Duration.ofMinutes(10));
        template.sendRangeMerge("m-merge", "same", Duration.ofMinutes(10));
        template.sendRangeMerge("m-merge", "other", Duration.ofMinutes(10));
        await().atMost(Duration.ofSeconds(10)).until(() -> count("messaging.client.sent.messages", "m-merge") == 3);
        assertThat(registry.get("messaging.client.sent.messages").tag("messaging.destination.name", "m-merge")
                .tag("messaging.system", "rmq").tag("messaging.operation.name", "send").tag("error.type", "none")
                .counter().count()).isEqualTo(3);
        assertThat(registry.get("rmq.send.messages").tag("messaging.destination.name", "m-merge")
                .tag("rmq.send.result", "added").counter().count()).isEqualTo(2);
        assertThat(registry.get("rmq.send.messages").tag("messaging.destination.name", "m-merge")
                .tag("rmq.send.result", "merged").counter().count()).isEqualTo(1);
        Timer sends = registry.get("messaging.client.operation.duration").tag("messaging.destination.name", "m-merge")
                .tag("messaging.operation.name", "send").tag("error.type", "none").timer();
        assertThat(sends.count()).isBetween(1L, 3L); // single sends to one slot may share a script call
    }

    @Test
    void handledMessagesAreCountedTimedAndTheirLatenessRecorded() {
        Instant due = Instant.now().minusSeconds(3);
        for (int i = 0; i < 5; i++) {
            template.sendFixedTime("m-fixed", "job-" + i, due);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> handled("m-ok", "ack") == 5);
        assertThat(listeners.handled).hasSize(5);
        assertThat(registry.get("messaging.client.consumed.messages").tag("rmq.listener.id", "m-ok")
                .tag("messaging.destination.name", "m-fixed").tag("messaging.operation.name", "receive")
                .counter().count()).isEqualTo(5);
        Timer process = registry.get("messaging.process.duration").tag("rmq.listener.id", "m-ok")
                .tag("messaging.operation.name", "process").tag("error.type", "none").timer();
        assertThat(process.count()).isEqualTo(5);
        Timer lateness = registry.get("rmq.delivery.lateness").tag("rmq.listener.id", "m-ok")
                .tag("messaging.destination.name", "m-fixed").timer();
        assertThat(lateness.count()).isEqualTo(5);
        // due 3 s before they were sent: at least that late, and not by minutes
        assertThat(lateness.max(java.util.concurrent.TimeUnit.MILLISECONDS)).isBetween(2_900.0, 60_000.0);
        // fixed buckets (no client-side percentiles: they are contended across handler threads): the last one holds
        // every recording of the window, so p50/p99 can be estimated from them (the dashboard does)
        io.micrometer.core.instrument.distribution.CountAtBucket[] buckets = lateness.takeSnapshot().histogramCounts();
        assertThat(buckets).isNotEmpty();
        assertThat(buckets[buckets.length - 1].count()).isEqualTo(5);
        assertThat(lateness.takeSnapshot().percentileValues()).isEmpty();
        assertThat(registry.get("messaging.client.operation.duration").tag("messaging.destination.name", "m-fixed")
                .tag("messaging.operation.name", "receive").tag("error.type", "none").timer().count()).isPositive();
        assertThat(registry.get("messaging.client.operation.duration").tag("messaging.destination.name", "m-fixed")
                .tag("messaging.operation.name", "ack").tag("error.type", "none").timer().count()).isPositive();
    }

    @Test
    void failuresAreCountedByOutcomeAndDeadMessagesShowInTheQueueSizes() {
        try (LogCapture log = LogCapture.rmq().expecting("m-failing")) {
            template.sendPriority("m-failing", "bad", 5);
            await().atMost(Duration.ofSeconds(30)).until(() -> handled("m-failing", "dead") == 1);
            assertThat(log.messages()).isNotEmpty();
        }
        assertThat(handled("m-failing", "retry")).isEqualTo(1);
        assertThat(handled("m-failing", "ack")).isZero();
        assertThat(listeners.failedAttempts).containsExactly(1, 2);
        assertThat(registry.get("messaging.process.duration").tag("rmq.listener.id", "m-failing")
                .tag("error.type", "IllegalStateException").timer().count()).isEqualTo(2);
        assertThat(registry.get("messaging.client.operation.duration").tag("messaging.destination.name", "m-failing")
                .tag("messaging.operation.name", "nack").tag("error.type", "none").timer().count()).isEqualTo(2);
        // the gauges follow Redis on their schedule (every 300 ms here)
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge("m-failing", "dead") == 1);
        assertThat(gauge("m-failing", "waiting")).isZero();
        assertThat(gauge("m-failing", "in_flight")).isZero();
        assertThat(gauge("m-failing", "retrying")).isZero();
    }

    @Test
    void queueSizesAreReadFromRedisOnTheirSchedule() {
        Instant later = Instant.now().plus(Duration.ofHours(1));
        template.sendBatch(List.of(OutgoingMessage.fixedTime("m-waiting", "a", later),
                OutgoingMessage.fixedTime("m-waiting", "b", later), OutgoingMessage.fixedTime("m-waiting", "c", later)));
        await().atMost(Duration.ofSeconds(10)).until(() -> gauge("m-waiting", "waiting") == 3);
        assertThat(gauge("m-waiting", "dead")).isZero();
        assertThat(registry.find("rmq.messages").tag("messaging.destination.name", "m-waiting").gauges()).hasSize(4);
    }

    private double count(String name, String topic) {
        Counter counter = registry.find(name).tag("messaging.destination.name", topic).tag("error.type", "none")
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private double handled(String listener, String outcome) {
        Counter counter = registry.find("rmq.handled.messages").tag("rmq.listener.id", listener)
                .tag("rmq.outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private double gauge(String topic, String state) {
        Gauge gauge = registry.find("rmq.messages").tag("messaging.destination.name", topic).tag("rmq.state", state)
                .tag("messaging.system", "rmq").gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }
}
