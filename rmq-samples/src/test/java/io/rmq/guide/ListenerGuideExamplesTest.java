package io.rmq.guide;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.rmq.spring.RmqTemplate;
import io.rmq.spring.listener.RmqListenerContainerFactory;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The listener guide's repeated listener ({@link Invoicing}) and second container factory
 * ({@link BulkFactoryConfiguration}) do what the guide says, on a real Redis.
 */
@ExtendWith(RedisServersExtension.class)
class ListenerGuideExamplesTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @Test
    void theRepeatedListenerHasTwoContainersAndTheSecondFactoryLeavesTheFirstInPlace() {
        List<String> args = new ArrayList<>(List.of("--rmq.key-prefix=guide-" + UUID.randomUUID(),
                "--spring.main.web-application-type=none", "--spring.main.banner-mode=off"));
        RedisTopology.STANDALONE.springProperties().forEach((key, value) -> args.add("--" + key + "=" + value));
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
                // as sources, so the beans get the names an application's scan gives them (invoicing, …)
                .sources(Invoicing.class, BulkFactoryConfiguration.class).run(args.toArray(String[]::new))) {
            RmqListenerEndpointRegistry registry = context.getBean(RmqListenerEndpointRegistry.class);
            assertThat(registry.getListenerContainer("invoicing.archive")).isNotNull();
            assertThat(registry.getListenerContainer("invoicing.archive-2")).isNotNull();
            assertThat(context.getBeansOfType(RmqListenerContainerFactory.class))
                    .containsOnlyKeys("rmqListenerContainerFactory", "bulkFactory");

            RmqTemplate rmq = context.getBean(RmqTemplate.class);
            rmq.sendFixedTime("invoices", "invoice-1", Instant.now());
            rmq.sendFixedTime("credit-notes", "note-1", Instant.now());
            Invoicing invoicing = context.getBean(Invoicing.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> invoicing.archive.stored.size() == 2);
            assertThat(invoicing.archive.stored).containsExactlyInAnyOrder("invoices:invoice-1", "credit-notes:note-1");
        }
    }
}
