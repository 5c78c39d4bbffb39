package io.rmq.spring.metrics;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.spring.RmqMessage;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** A small application whose listeners succeed, fail until they die, and leave messages waiting. */
@SpringBootConfiguration
@EnableAutoConfiguration
class MetricsTestApplication {

    @Bean
    SimpleMeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }

    @Bean
    Listeners listeners() {
        return new Listeners();
    }

    static class Listeners {

        final List<String> handled = new CopyOnWriteArrayList<>();
        final List<Integer> failedAttempts = new CopyOnWriteArrayList<>();

        @RmqListener(id = "m-ok", topic = "m-fixed", type = "FIXED_TIME", slotAmount = "4")
        public void onFixed(String body) {
            handled.add(body);
        }

        /** Fails every time: one retry, then dead. */
        @RmqListener(id = "m-failing", topic = "m-failing", type = "PRIORITY", slotAmount = "2", maxRetries = "1",
                backoffInitial = "50ms", backoffJitter = "0")
        public void onFailing(RmqMessage<String> message) {
            failedAttempts.add(message.attempt());
            throw new IllegalStateException("fails on purpose: " + message.payload());
        }
    }
}
