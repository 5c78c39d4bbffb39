package io.rmq.tour;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

import io.rmq.admin.MessageRef;
import io.rmq.readme.OrderRef;
import io.rmq.readme.ShopApplication;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's tour, run: its sends and listeners in the Quick start's application on a real Redis, each doing what
 * the tour's comments say.
 */
@ExtendWith(RedisServersExtension.class)
class TourTest {

    private static ConfigurableApplicationContext context;
    private static TourSends tour;
    private static RmqTemplate rmq;

    @BeforeAll
    static void start() {
        List<String> args = new ArrayList<>(List.of("--spring.config.location=classpath:/io/rmq/readme/application.yml",
                "--rmq.key-prefix=tour-" + UUID.randomUUID(), "--spring.main.web-application-type=none",
                "--spring.main.banner-mode=off"));
        RedisTopology.STANDALONE.springProperties().forEach((key, value) -> args.add("--" + key + "=" + value));
        context = new SpringApplicationBuilder(ShopApplication.class)
                .sources(TourSends.class, Refunds.class, Ledger.class, Mails.class, Quotes.class).run(args.toArray(String[]::new));
        tour = context.getBean(TourSends.class);
        rmq = context.getBean(RmqTemplate.class);
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @Test
    void aBurstOfPriceChangesIsOneMessage() {
        assertThat(tour.priceChanged("product-17").merged()).isFalse();
        assertThat(tour.priceChanged("product-17").merged()).isTrue();
        assertThat(rmq.admin().stats("picture-render").waiting()).isEqualTo(1);
    }

    @Test
    void priceChangesMergeByProductAndTheNewestPriceWaits() {
        long before = rmq.admin().stats("picture-render").waiting();
        assertThat(tour.newPrice("sku-9", "9.99").merged()).isFalse();
        assertThat(tour.newPrice("sku-9", "11.00").merged()).isTrue();
        assertThat(tour.newPrice("sku-9", "12.50").merged()).isTrue();
        assertThat(rmq.admin().stats("picture-render").waiting()).isEqualTo(before + 1);
    }

    @Test
    void aSecondReminderWithinTheWindowIsDropped() {
        Mails mails = context.getBean(Mails.class);
        assertThat(tour.remindToPay("o-77").deduplicated()).isFalse();
        await().atMost(Duration.ofSeconds(30)).until(() -> mails.outbox.delivered.contains("pay-reminder:o-77")
                && rmq.admin().stats("mails").inFlight() == 0);
        assertThat(tour.remindToPay("o-77").deduplicated()).isTrue();
        assertThat(tour.remindToPay("o-78").deduplicated()).as("another order").isFalse();
        await().atMost(Duration.ofSeconds(30)).until(() -> mails.outbox.delivered.contains("pay-reminder:o-78"));
        assertThat(mails.outbox.delivered).containsOnlyOnce("pay-reminder:o-77");
    }

    @Test
    void aQuoteComesBackFromThePricingListener() {
        assertThat(tour.quote("sku-5")).isEqualTo(new PriceQuote("sku-5", 3 * 1999L));
    }

    @Test
    void thePayoutWaitsBeforeTheReindex() {
        tour.merchantTasks("42");
        assertThat(rmq.admin().browse("merchant-tasks", null, 10).messages())
                .extracting(message -> message.bodyAsString())
                .containsExactly("payout:42", "reindex:42");
    }

    @Test
    void aCancelledDeadlineIsGone() {
        OrderRef order = new OrderRef("tour-1");
        tour.deadline(order);
        // cancelled while waiting, or (rescheduled to now) already taken by the Quick start's listener and then
        // dropped or handled: either way it is no longer waiting
        await().atMost(Duration.ofSeconds(30))
                .until(() -> !rmq.admin().contains(MessageRef.body("order-timeout", order)));
    }

    @Test
    void aBadRefundDiesAtOnceAndIsRequeuedFromTheDeadQueue() {
        Refunds refunds = context.getBean(Refunds.class);
        try (LogCapture log = LogCapture.rmq().expecting("Invalid order id")) {
            rmq.sendFixedTime("refunds", new OrderRef("7"), Instant.now());
            rmq.sendFixedTime("refunds", new OrderRef(" "), Instant.now());
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("refunds") == 1);
            assertThat(refunds.payments.refunded).containsExactly("7");
            assertThat(rmq.admin().deadMessages("refunds", 0, 10)).singleElement()
                    .satisfies(dead -> assertThat(dead.attempts()).isEqualTo(1));   // noRetryFor: not retried

            assertThat(tour.retryTheDead()).isEqualTo(1);
            assertThat(log.messages()).anySatisfy(line -> assertThat(line).contains("died after 1 attempts"));
            // the bad id fails again, and is dead again
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("refunds") == 1
                    && !rmq.admin().contains(MessageRef.body("refunds", new OrderRef(" "))));
        }
    }

    @Test
    void eachAccountsEntriesAreAppliedInOrder() throws InterruptedException {
        Ledger ledger = context.getBean(Ledger.class);
        for (long sequence = 1; sequence <= 5; sequence++) {
            for (String account : List.of("alice", "bob")) {
                tour.post(new LedgerEntry(account, sequence, 100));
                Thread.sleep(2);   // distinct due times (ms), so the order sent is the order due
            }
        }
        List<Long> inOrder = LongStream.rangeClosed(1, 5).boxed().toList();
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.accounts.applied.size() == 2
                && ledger.accounts.applied.values().stream().allMatch(applied -> applied.size() == 5));
        assertThat(ledger.accounts.applied).containsOnlyKeys("alice", "bob")
                .allSatisfy((account, applied) -> assertThat(applied).isEqualTo(inOrder));
    }

    @Test
    void rateLimitedMailsAreAllDelivered() {
        Mails mails = context.getBean(Mails.class);
        List<String> sent = IntStream.range(0, 10).mapToObj(i -> "mail-" + i).toList();
        sent.forEach(mail -> rmq.sendPriority("mails", mail, 0));
        await().atMost(Duration.ofSeconds(30)).until(() -> mails.outbox.delivered.size() == sent.size());
        assertThat(mails.outbox.delivered).containsExactlyInAnyOrderElementsOf(sent);
    }

    @Test
    void theFiguresCountAWaitingDeadline() {
        rmq.sendFixedTime("order-timeout", new OrderRef("tour-later"), Instant.now().plus(Duration.ofHours(1)));
        assertThat(tour.figures().waiting()).isGreaterThanOrEqualTo(1);
        assertThat(tour.figures().topic()).isEqualTo("order-timeout");
    }
}
