package io.rmq.guide;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The README's class-level listener ({@link OrderEvents}) does what its comments say, on a real Redis. */
@ExtendWith(RedisServersExtension.class)
class OrderEventsGuideTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({OrderEvents.class, Refunds.class})
    static class App {
    }

    static class Refunds {
        final BlockingQueue<String> refunded = new LinkedBlockingQueue<>();

        @RmqListener(topic = "refunds")
        void refund(String orderId) {
            refunded.add(orderId);
        }
    }

    @Test
    void eachOrderEventReachesItsHandlerAndACancellationARefund() throws InterruptedException {
        List<String> args = new ArrayList<>(List.of("--rmq.key-prefix=guide-" + UUID.randomUUID(),
                "--rmq.topics.refunds.type=FIXED_TIME", "--spring.main.web-application-type=none",
                "--spring.main.banner-mode=off"));
        RedisTopology.STANDALONE.springProperties().forEach((key, value) -> args.add("--" + key + "=" + value));
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                .run(args.toArray(String[]::new));
                // after the start: Boot's logging system resets Logback while the application starts
                LogCapture log = LogCapture.of(OrderEvents.class.getName())) {
            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            rmq.sendFixedTime("order-events", new OrderEvents.OrderCreated("1", 500), Instant.now());
            rmq.sendFixedTime("order-events", new OrderEvents.OrderCancelled("2", "late"), Instant.now());
            rmq.sendFixedTime("order-events", "{\"id\":\"3\",\"refundedCents\":200}", Instant.now());
            assertThat(context.getBean(Refunds.class).refunded.poll(30, TimeUnit.SECONDS)).isEqualTo("2");
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().size() == 2);
            assertThat(log.messages()).containsExactlyInAnyOrder("Order 1 created",
                    "Unknown order event {\"id\":\"3\",\"refundedCents\":200}");
        }
    }
}
