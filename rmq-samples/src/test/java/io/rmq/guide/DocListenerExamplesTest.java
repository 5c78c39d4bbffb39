package io.rmq.guide;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.rmq.admin.MessageRef;
import io.rmq.core.ConsumeMode;
import io.rmq.guide.Ledger.LedgerEntry;
import io.rmq.guide.OrderIndexing.OrderEvent;
import io.rmq.guide.Payments.Payment;
import io.rmq.guide.Payments.Receipt;
import io.rmq.readme.OrderRef;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The listener and ordering guides' examples ({@link OrderClosing}, {@link Payments}, {@link OrderIndexing},
 * {@link Ledger}) do what the guides say, on a real Redis; one application runs them all.
 */
@ExtendWith(RedisServersExtension.class)
class DocListenerExamplesTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    private static ConfigurableApplicationContext context;

    private static RmqTemplate rmq;

    @BeforeAll
    static void start() {
        List<String> args = new ArrayList<>(List.of("--rmq.key-prefix=doc-examples-" + UUID.randomUUID(),
                "--spring.main.web-application-type=none", "--spring.main.banner-mode=off",
                // the guides' listeners that name no type: their topics are the application's configuration
                "--rmq.topics.order-events.type=FIXED_TIME", "--rmq.topics.receipts.type=FIXED_TIME",
                // the sample's application.yml gives order-timeout 8 slots; the guide's listener asks for the default
                "--rmq.topics.order-timeout.slot-amount=16",
                // a failed batch element is retried soon, so the test does not wait for the default backoff
                "--rmq.consumer.backoff.initial=100ms", "--rmq.consumer.max-idle=1s"));
        RedisTopology.STANDALONE.springProperties().forEach((key, value) -> args.add("--" + key + "=" + value));
        // as sources, so the beans get the names an application's scan gives them (ledger, …)
        context = new SpringApplicationBuilder(App.class)
                .sources(OrderClosing.class, Payments.class, OrderIndexing.class, Ledger.class)
                .run(args.toArray(String[]::new));
        rmq = context.getBean(RmqTemplate.class);
    }

    @AfterAll
    static void stop() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void theListenerWithHeadersGetsTheValidatedPayload() {
        rmq.sendFixedTime("order-timeout", new OrderRef("7"), Instant.now());

        OrderClosing closing = context.getBean(OrderClosing.class);
        await().atMost(WAIT).until(() -> closing.orders.closed.contains("7"));
        assertThat(closing.orders.closed).containsExactly("7");
    }

    @Test
    void aSettledPaymentGetsAReceiptDueLaterAndAnUnsettledOneNone() {
        Payment settled = new Payment("p1", true);
        Payment open = new Payment("p2", false);
        rmq.sendPriority("payments", settled, 0);
        rmq.sendPriority("payments", open, 0);

        // a reply is sent before its message is acknowledged: once both are gone, every receipt is there
        await().atMost(WAIT).until(() -> !rmq.admin().find(MessageRef.body("payments", settled)).exists()
                && !rmq.admin().find(MessageRef.body("payments", open)).exists());
        assertThat(rmq.admin().find(MessageRef.body("receipts", new Receipt("p1"))).isWaiting())
                .as("receipt of p1, due in a minute").isTrue();
        assertThat(rmq.admin().find(MessageRef.body("receipts", new Receipt("p2"))).exists()).as("receipt of p2")
                .isFalse();
    }

    @Test
    void aBatchFailsOnlyTheEventsThatWereNotIndexed() {
        OrderIndexing indexing = context.getBean(OrderIndexing.class);
        indexing.search.failOnce.add("e2");
        try (LogCapture log = LogCapture.rmq().expecting("not indexed")) {
            for (String id : List.of("e1", "e2", "e3")) {
                rmq.sendFixedTime("order-events", new OrderEvent(id), Instant.now(), "one-slot");
            }

            await().atMost(WAIT).until(() -> indexing.search.tries.getOrDefault("e2", 0) == 2);
            // the others were acknowledged with the batch that failed e2: never handed over again
            MessageRef e2 = MessageRef.body("order-events", new OrderEvent("e2")).inGroup("one-slot");
            await().atMost(WAIT).until(() -> !rmq.admin().find(e2).exists());
            assertThat(indexing.search.tries).containsEntry("e1", 1).containsEntry("e2", 2).containsEntry("e3", 1);
            assertThat(log.warnings()).singleElement().asString().contains("attempt 1", "retrying", "not indexed");
        }
    }

    @Test
    void theLedgerListenerIsOrderlyAndAppliesEveryEntry() {
        Ledger ledger = context.getBean(Ledger.class);
        List<LedgerEntry> entries = List.of(new LedgerEntry("a", 100), new LedgerEntry("b", 200),
                new LedgerEntry("a", -50), new LedgerEntry("b", -20));
        entries.forEach(ledger::record);

        assertThat(context.getBean(RmqListenerEndpointRegistry.class).getListenerContainer("ledger.apply").mode())
                .isEqualTo(ConsumeMode.ORDERLY);
        await().atMost(WAIT).until(() -> ledger.accounts.applied.size() == entries.size());
        assertThat(ledger.accounts.applied).containsExactlyInAnyOrderElementsOf(entries);
    }
}
