package io.rmq.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.producer.OutgoingMessage;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Send 10,000, close the application while handlers run, start it again: every message is handled, and a message is
 * handled twice only if it was in flight at the close.
 */
@ExtendWith(RedisServersExtension.class)
class GracefulShutdownTest {

    static final int MESSAGES = 10_000;
    static final int CONCURRENCY = 4;

    /** Handled count per body, across both application runs. */
    static final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
    /** Bodies whose handler was running when the first application began to close. */
    static final Set<String> running = ConcurrentHashMap.newKeySet();
    static volatile Set<String> inFlightAtClose = Set.of();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        Worker worker() {
            return new Worker();
        }
    }

    static class Worker {

        @RmqListener(topic = "shutdown-test", type = "PRIORITY", concurrency = "" + CONCURRENCY, batchSize = "50")
        void handle(String body) throws InterruptedException {
            running.add(body);
            try {
                Thread.sleep(1);
                handled.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet();
            }
            finally {
                running.remove(body);
            }
        }
    }

    private static ConfigurableApplicationContext start(RedisTopology topology, String prefix) {
        List<String> properties = new ArrayList<>(List.of(topology.propertyValues(prefix)));
        properties.add("rmq.shutdown-timeout=10s");
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties(properties.toArray(String[]::new)).run();
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void closingWhileHandlersRunLosesNothing(RedisTopology topology) {
        handled.clear();
        running.clear();
        String prefix = "shutdown-" + UUID.randomUUID();
        ConfigurableApplicationContext first = start(topology, prefix);
        RmqTemplate template = first.getBean(RmqTemplate.class);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            batch.add(OutgoingMessage.priority("shutdown-test", "msg-" + i, i % 100));
        }
        assertThat(template.sendBatch(batch).added()).isEqualTo(MESSAGES);

        await().atMost(Duration.ofMinutes(1)).until(() -> handled.size() >= 1500);
        inFlightAtClose = Set.copyOf(running);
        first.close();
        int handledByFirst = handled.size();
        assertThat(handledByFirst).isLessThan(MESSAGES);

        ConfigurableApplicationContext second = start(topology, prefix);
        try {
            await().atMost(Duration.ofMinutes(2)).until(() -> handled.size() == MESSAGES);
            RmqTemplate again = second.getBean(RmqTemplate.class);
            await().atMost(Duration.ofSeconds(10)).until(() -> again.admin().stats("shutdown-test").inFlight() == 0);
            var stats = again.admin().stats("shutdown-test");
            assertThat(stats.pending() + stats.dead()).isZero();
        }
        finally {
            second.close();
        }
        List<String> duplicates = handled.entrySet().stream().filter(e -> e.getValue().get() > 1)
                .map(Map.Entry::getKey).toList();
        // Graceful close lets running handlers finish and acks them, so normally nothing is handled twice; what
        // may be repeated is only what was in flight when the close began.
        assertThat(duplicates).allSatisfy(body -> assertThat(inFlightAtClose).contains(body));
        assertThat(duplicates.size()).isLessThanOrEqualTo(CONCURRENCY);
    }
}
