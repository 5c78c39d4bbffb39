package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.rmq.admin.BrowsePage;
import io.rmq.admin.CancelResult;
import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.RescheduleResult;
import io.rmq.admin.WaitingMessage;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotClaims;
import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.internal.SlotRouter;
import io.rmq.core.TopicType;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Managing waiting messages by their body: find, cancel, reschedule, browse, purge. */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ManagementTest extends EngineTestSupport {

    ManagementTest(RedisTopology topology) {
        super(topology);
    }

    record OrderTimeout(long orderId) {
    }

    /** Retries after 1 h: a failed message stays "retrying" for the whole test. */
    private static final ConsumerSettings SLOW_RETRY = new ConsumerSettings(100, Duration.ofSeconds(5),
            new RetryPolicy(5, BackoffPolicy.fixed(Duration.ofHours(1))));

    private static final ConsumerSettings NO_RETRY = new ConsumerSettings(100, Duration.ofSeconds(5),
            new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));

    private static final Instant LATER = Instant.now().plus(Duration.ofHours(1));

    @Test
    void cancelRemovesAWaitingMessageAndSaysWhetherItFoundOne() {
        rmq.defineTopic("order-timeouts", TopicType.FIXED_TIME, 8);
        rmq.producer().sendFixedTime("order-timeouts", new OrderTimeout(7), LATER);
        rmq.producer().sendFixedTime("order-timeouts", new OrderTimeout(8), LATER);

        MessageStatus before = rmq.admin().find(MessageRef.body("order-timeouts", new OrderTimeout(7)));
        assertThat(before.isWaiting()).isTrue();
        assertThat(before.waitingScore()).isEqualTo((double) LATER.toEpochMilli());
        assertThat(before.isRetrying()).isFalse();
        assertThat(rmq.admin().contains(MessageRef.body("order-timeouts", new OrderTimeout(7)))).isTrue();

        CancelResult cancelled = rmq.admin().cancel(MessageRef.body("order-timeouts", new OrderTimeout(7)));
        assertThat(cancelled).isEqualTo(new CancelResult(true, false, false, false));
        assertThat(cancelled.cancelled()).isTrue();
        assertThat(rmq.admin().contains(MessageRef.body("order-timeouts", new OrderTimeout(7)))).isFalse();
        assertThat(rmq.admin().find(MessageRef.body("order-timeouts", new OrderTimeout(7))).exists()).isFalse();

        CancelResult again = rmq.admin().cancel(MessageRef.body("order-timeouts", new OrderTimeout(7)));
        assertThat(again.found()).isFalse();
        assertThat(rmq.admin().stats("order-timeouts").waiting()).isEqualTo(1);
    }

    @Test
    void aMessageSentWithASlotBasisIsFoundWithTheSameSlotBasis() {
        rmq.defineTopic("ledger", TopicType.FIXED_TIME, 16);
        String body = "entry-1";
        // a basis that routes elsewhere than the body itself
        String basis = "account-1";
        for (int i = 2; SlotRouter.slot(basis.getBytes(StandardCharsets.UTF_8), 16)
                == SlotRouter.slot(body.getBytes(StandardCharsets.UTF_8), 16); i++) {
            basis = "account-" + i;
        }
        rmq.producer().send(io.rmq.producer.OutgoingMessage.fixedTime("ledger", body, LATER).withSlotBasis(basis));
        assertThat(rmq.admin().find(MessageRef.body("ledger", body)).exists()).as("looked for in the body's own slot")
                .isFalse();
        assertThat(rmq.admin().find(MessageRef.body("ledger", body).inGroup(basis)).isWaiting()).isTrue();
        assertThat(rmq.admin().cancel(MessageRef.body("ledger", body).inGroup(basis)).cancelled()).isTrue();
        assertThat(rmq.admin().stats("ledger").waiting()).isZero();
    }

    @Test
    void aCancelledMessageInFlightIsReportedAndNotDeliveredAgainAfterItFails() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        rmq.producer().sendFixedTime("jobs", "job-1", Instant.now());
        RmqConsumer consumer = rmq.consumer("jobs", FAST);
        Delivery delivery = consumer.poll().deliveries().get(0);

        CancelResult result = rmq.admin().cancel(MessageRef.body("jobs", "job-1"));
        assertThat(result).isEqualTo(new CancelResult(false, false, true, false));
        assertThat(result.cancelled()).isFalse();
        assertThat(result.found()).isTrue();
        MessageStatus status = rmq.admin().find(MessageRef.body("jobs", "job-1"));
        assertThat(status.inFlight()).isTrue();
        assertThat(status.cancelled()).isTrue();

        assertThat(consumer.nack(delivery, "failed on purpose")).isEqualTo(NackOutcome.DROPPED);
        assertThat(rmq.admin().find(MessageRef.body("jobs", "job-1")).exists()).isFalse();
        sleep(FAST.retry().backoff().initial().toMillis() + 100);
        assertThat(consumer.poll().deliveries()).isEmpty();
        assertThat(rmq.admin().stats("jobs").dead()).isZero();
    }

    @Test
    void aCancelledMessageInFlightThatSucceedsLeavesNoMarkBehind() {
        rmq.defineTopic("jobs", TopicType.PRIORITY, 2);
        rmq.producer().sendPriority("jobs", "job-1", 3);
        RmqConsumer consumer = rmq.consumer("jobs", FAST);
        Delivery delivery = consumer.poll().deliveries().get(0);
        assertThat(rmq.admin().cancel(MessageRef.body("jobs", "job-1")).inFlight()).isTrue();
        assertThat(consumer.ack(delivery)).isTrue();
        assertThat(rmq.admin().find(MessageRef.body("jobs", "job-1")).exists()).isFalse();

        // sent again later: an ordinary message, delivered and retried as any other
        rmq.producer().sendPriority("jobs", "job-1", 3);
        Delivery second = consumer.poll().deliveries().get(0);
        assertThat(rmq.admin().find(MessageRef.body("jobs", "job-1")).cancelled()).isFalse();
        assertThat(consumer.nack(second, "failed on purpose")).isEqualTo(NackOutcome.RETRY);
    }

    @Test
    void aCancelledMessageWhoseLeaseExpiresOrThatIsReleasedIsDropped() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 1);
        rmq.producer().sendFixedTime("jobs", "expires", Instant.now());
        rmq.producer().sendFixedTime("jobs", "released", Instant.now());
        RmqConsumer shortLease = rmq.consumer("jobs", FAST.withLease(Duration.ofMillis(100)));
        List<Delivery> deliveries = shortLease.poll().deliveries();
        assertThat(deliveries).hasSize(2);
        assertThat(rmq.admin().cancel(MessageRef.body("jobs", "expires")).inFlight()).isTrue();
        assertThat(rmq.admin().cancel(MessageRef.body("jobs", "released")).inFlight()).isTrue();

        Delivery released = deliveries.stream().filter(d -> d.bodyAsString().equals("released")).findFirst().orElseThrow();
        assertThat(shortLease.release(List.of(released))).as("dropped, not released").isZero();
        sleep(200);
        shortLease.sweep();
        assertThat(rmq.admin().stats("jobs").pending()
                + rmq.admin().stats("jobs").dead()).isZero();
        assertThat(shortLease.poll().deliveries()).isEmpty();
    }

    @Test
    void cancelRemovesAPendingRetry() {
        rmq.defineTopic("timed", TopicType.RANGE_MERGE, 2);
        rmq.defineTopic("ranked", TopicType.PRIORITY, 2);
        rmq.producer().sendRangeMerge("timed", "t", Duration.ofMillis(1));
        rmq.producer().sendPriority("ranked", "p", 9);
        sleep(20);
        for (String topic : List.of("timed", "ranked")) {
            RmqConsumer consumer = rmq.consumer(topic, SLOW_RETRY);
            Delivery delivery = consumer.poll().deliveries().get(0);
            assertThat(consumer.nack(delivery, "failed on purpose")).isEqualTo(NackOutcome.RETRY);
            MessageStatus retrying = rmq.admin().find(MessageRef.body(topic, delivery.bodyAsString()));
            assertThat(retrying.isRetrying()).as(topic).isTrue();
            assertThat(retrying.failedAttempts()).isEqualTo(1);
            assertThat(retrying.retryAt()).isAfter(Instant.now().plus(Duration.ofMinutes(50)));

            CancelResult result = rmq.admin().cancel(MessageRef.body(topic, delivery.bodyAsString()));
            assertThat(result.cancelled()).as(topic).isTrue();
            assertThat(rmq.admin().find(MessageRef.body(topic, delivery.bodyAsString())).exists()).isFalse();
            assertThat(rmq.admin().stats(topic).waiting()).isZero();
        }
    }

    @Test
    void cancelOfADeadBodyReportsItAndLeavesItInTheDeadQueue() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 2);
        rmq.producer().sendFixedTime("jobs", "poison", Instant.now());
        RmqConsumer consumer = rmq.consumer("jobs", NO_RETRY);
        assertThat(consumer.nack(consumer.poll().deliveries().get(0), "bad input")).isEqualTo(NackOutcome.DEAD);

        MessageStatus dead = rmq.admin().find(MessageRef.body("jobs", "poison"));
        assertThat(dead.isDead()).isTrue();
        assertThat(dead.deadReason()).isEqualTo("bad input");
        assertThat(dead.isPending()).isFalse();
        assertThat(rmq.admin().contains(MessageRef.body("jobs", "poison"))).isFalse();

        CancelResult result = rmq.admin().cancel(MessageRef.body("jobs", "poison"));
        assertThat(result).isEqualTo(new CancelResult(false, false, false, true));
        assertThat(result.found()).isTrue();
        assertThat(rmq.admin().deadCount("jobs")).isEqualTo(1);
    }

    @Test
    void findShowsAWaitingDuplicateOfAMessageInFlight() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 2);
        rmq.producer().sendFixedTime("jobs", "job", Instant.now());
        RmqConsumer consumer = rmq.consumer("jobs", FAST);
        Delivery delivery = consumer.poll().deliveries().get(0);
        rmq.producer().sendFixedTime("jobs", "job", LATER);
        MessageStatus both = rmq.admin().find(MessageRef.body("jobs", "job"));
        assertThat(both.inFlight()).isTrue();
        assertThat(both.waitingScore()).isEqualTo((double) LATER.toEpochMilli());

        // cancel takes the waiting copy and marks the delivery: neither comes back
        assertThat(rmq.admin().cancel(MessageRef.body("jobs", "job")))
                .isEqualTo(new CancelResult(true, false, true, false));
        assertThat(consumer.nack(delivery, "failed on purpose")).isEqualTo(NackOutcome.DROPPED);
        assertThat(rmq.admin().find(MessageRef.body("jobs", "job")).exists()).isFalse();
    }

    @Test
    void rescheduleGivesAWaitingMessageANewTimeWhateverTheMergeRule() {
        rmq.defineTopic("digest", TopicType.RANGE_MERGE, 4);
        rmq.producer().sendRangeMerge("digest", "user-1", Duration.ofHours(1));
        RmqConsumer consumer = rmq.consumer("digest", FAST);
        assertThat(consumer.poll().deliveries()).isEmpty();

        assertThat(rmq.admin().reschedule(MessageRef.body("digest", "user-1"), Instant.now().minusSeconds(5)))
                .isEqualTo(RescheduleResult.RESCHEDULED);
        Delivery delivery = consumer.poll().deliveries().get(0);
        assertThat(delivery.bodyAsString()).isEqualTo("user-1");
        assertThat(rmq.admin().reschedule(MessageRef.body("digest", "user-1"), LATER))
                .isEqualTo(RescheduleResult.IN_FLIGHT);
        consumer.ack(delivery);
        assertThat(rmq.admin().reschedule(MessageRef.body("digest", "user-1"), LATER))
                .isEqualTo(RescheduleResult.NOT_FOUND);
    }

    @Test
    void reprioritizeReordersAWaitingPriorityMessage() {
        rmq.defineTopic("render", TopicType.PRIORITY, 1);
        rmq.producer().sendPriority("render", "small", 1);
        rmq.producer().sendPriority("render", "big", 5);
        assertThat(rmq.admin().reprioritize(MessageRef.body("render", "small"), 10))
                .isEqualTo(RescheduleResult.RESCHEDULED);
        RmqConsumer consumer = rmq.consumer("render", FAST.withBatchSize(1));
        Delivery first = consumer.poll().deliveries().get(0);
        assertThat(first.bodyAsString()).isEqualTo("small");
        assertThat(first.score()).isEqualTo(10);
    }

    @Test
    void rescheduleOfAMessageWaitingForItsRetryMovesTheRetryAndKeepsItsAttempts() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 2);
        rmq.defineTopic("ranked", TopicType.PRIORITY, 2);
        rmq.producer().sendFixedTime("timed", "t", Instant.now());
        rmq.producer().sendPriority("ranked", "p", 1);
        RmqConsumer timed = rmq.consumer("timed", SLOW_RETRY);
        timed.nack(timed.poll().deliveries().get(0), "failed on purpose");
        assertThat(rmq.admin().reschedule(MessageRef.body("timed", "t"), Instant.now()))
                .isEqualTo(RescheduleResult.RESCHEDULED);
        Delivery again = timed.poll().deliveries().get(0);
        assertThat(again.attempt()).isEqualTo(2);

        // PRIORITY: the backoff stays, the message comes back with its new priority
        // a backoff longer than a loaded machine's stall between the nack and the "still backing off" poll
        ConsumerSettings quickRetry = new ConsumerSettings(100, Duration.ofSeconds(5),
                new RetryPolicy(5, BackoffPolicy.fixed(Duration.ofSeconds(2))));
        RmqConsumer ranked = rmq.consumer("ranked", quickRetry);
        ranked.nack(ranked.poll().deliveries().get(0), "failed on purpose");
        assertThat(rmq.admin().reprioritize(MessageRef.body("ranked", "p"), 42))
                .isEqualTo(RescheduleResult.RESCHEDULED);
        assertThat(ranked.poll().deliveries()).as("still backing off").isEmpty();
        Delivery back = await().atMost(Duration.ofSeconds(30)).until(() -> ranked.poll().deliveries(),
                list -> !list.isEmpty()).get(0);
        assertThat(back.score()).isEqualTo(42);
        assertThat(back.attempt()).isEqualTo(2);
    }

    @Test
    void rescheduleAndCancelRejectBadInputNamingTheRule() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 2);
        rmq.defineTopic("ranked", TopicType.PRIORITY, 2);
        assertThatThrownBy(() -> rmq.admin().reprioritize(MessageRef.body("timed", "x"), 3))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("orders by time: use reschedule(message, dueAt)");
        assertThatThrownBy(() -> rmq.admin().reschedule(MessageRef.body("ranked", "x"), Instant.now()))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("orders by priority: use reprioritize(message, priority)");
        assertThatThrownBy(() -> rmq.admin().reschedule(MessageRef.body("timed", "x"), null))
                .hasMessage("Invalid dueAt 'null': must not be null");
        assertThatThrownBy(() -> rmq.admin().cancel(MessageRef.body("timed", null)))
                .hasMessageContaining("Invalid body 'null': must not be null");
        assertThatThrownBy(() -> rmq.admin().cancel(MessageRef.body("no-such-topic", "x")))
                .hasMessageContaining("Invalid topic 'no-such-topic': is not defined");
        assertThatThrownBy(() -> rmq.admin().reschedule(MessageRef.body("timed", "x"), Instant.MAX))
                .hasMessageContaining("Invalid dueAt '" + Instant.MAX + "': must be within ±2^53 ms of the epoch");
        assertThatThrownBy(() -> rmq.admin().find(MessageRef.body("timed", "x").inGroup("")))
                .hasMessage("Invalid group '': must be null or non-empty (topic 'timed')");
        assertThatThrownBy(() -> rmq.admin().browse("timed", null, 0))
                .hasMessage("Invalid limit '0': must be between 1 and 1000");
    }

    @Test
    void browsePagesThroughWaitingMessagesInTakingOrderAcrossSlots() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 8);
        long base = Instant.now().plus(Duration.ofHours(1)).toEpochMilli();
        List<io.rmq.producer.OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            // many equal due times, spread over all slots: ties must neither repeat nor go missing across pages
            batch.add(io.rmq.producer.OutgoingMessage.fixedTime("timed", "m-" + i, Instant.ofEpochMilli(base + i % 5)));
        }
        rmq.producer().sendBatch(batch);
        List<WaitingMessage> all = browseAll("timed", 7);
        assertThat(all).hasSize(60);
        assertThat(all).extracting(WaitingMessage::bodyAsString).doesNotHaveDuplicates();
        assertThat(all).isSortedAccordingTo(Comparator.comparingDouble(WaitingMessage::score)
                .thenComparingInt(WaitingMessage::slot));

        rmq.defineTopic("ranked", TopicType.PRIORITY, 4);
        for (int i = 0; i < 40; i++) {
            rmq.producer().sendPriority("ranked", "p-" + i, i % 3);
        }
        List<WaitingMessage> ranked = browseAll("ranked", 6);
        assertThat(ranked).hasSize(40);
        assertThat(ranked).extracting(WaitingMessage::bodyAsString).doesNotHaveDuplicates();
        assertThat(ranked).isSortedAccordingTo(Comparator.comparingDouble(WaitingMessage::score).reversed()
                .thenComparingInt(WaitingMessage::slot));
    }

    @Test
    void browseGoesOnWhenTheLastMessageSeenLeftMeanwhile() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 4);
        long due = LATER.toEpochMilli();
        for (int i = 0; i < 30; i++) {
            rmq.producer().sendFixedTime("timed", "m-" + i, Instant.ofEpochMilli(due)); // all tied
        }
        BrowsePage first = rmq.admin().browse("timed", null, 10);
        WaitingMessage lastSeen = first.messages().get(9);
        assertThat(rmq.admin().cancel(MessageRef.body("timed", lastSeen.bodyAsString())).cancelled()).isTrue();
        List<String> seen = new ArrayList<>(first.messages().stream().map(WaitingMessage::bodyAsString).toList());
        BrowsePage.Cursor cursor = first.next();
        while (cursor != null) {
            BrowsePage page = rmq.admin().browse("timed", cursor, 10);
            page.messages().forEach(m -> seen.add(m.bodyAsString()));
            cursor = page.next();
        }
        assertThat(seen).hasSize(30).doesNotHaveDuplicates();
    }

    @Test
    void purgeDeletesWaitingMessagesButNotThoseInFlightOrDead() {
        rmq.defineTopic("ranked", TopicType.PRIORITY, 2);
        List<io.rmq.producer.OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 2500; i++) { // more than one purge chunk (1000) per slot
            batch.add(io.rmq.producer.OutgoingMessage.priority("ranked", "p-" + i, i));
        }
        rmq.producer().sendBatch(batch);
        RmqConsumer consumer = rmq.consumer("ranked", NO_RETRY.withBatchSize(2));
        List<Delivery> inFlight = consumer.poll().deliveries();
        assertThat(inFlight).hasSize(4);
        consumer.nack(inFlight.get(0), "failed on purpose");

        assertThat(rmq.admin().purge("ranked")).isEqualTo(2500 - 4);
        var stats = rmq.admin().stats("ranked");
        assertThat(stats.waiting()).isZero();
        assertThat(stats.inFlight()).isEqualTo(3);
        assertThat(stats.dead()).isEqualTo(1);
        assertThat(consumer.ackAll(inFlight.subList(1, 4))).isEqualTo(3);
    }

    @Test
    void cancellingTheSuspendedHeadOfAnOrderedSlotLetsTheSlotMoveOn() {
        rmq.defineTopic("ledger", TopicType.FIXED_TIME, 1);
        long now = Instant.now().toEpochMilli();
        rmq.producer().sendFixedTime("ledger", "first", Instant.ofEpochMilli(now - 2));
        rmq.producer().sendFixedTime("ledger", "second", Instant.ofEpochMilli(now - 1));
        rmq.producer().sendFixedTime("ledger", "third", Instant.ofEpochMilli(now));
        DefaultRmqConsumer owner = (DefaultRmqConsumer) rmq.consumer("ledger", SLOW_RETRY);
        Claim claim = SlotClaims.claim(owner, 0, "me", 0, 10_000, 0).join();
        var step = owner.orderedStep(0, claim.epoch(), 3, List.of(), null, null, null).join();
        assertThat(step.deliveries()).extracting(Delivery::bodyAsString).containsExactly("first", "second", "third");
        // "first" fails: the slot is suspended until its retry (an hour away)
        var suspended = owner.orderedStep(0, claim.epoch(), 3, List.of(), step.deliveries().get(0), "failed on purpose",
                null).join();
        assertThat(suspended.deliveries()).isEmpty();
        assertThat(rmq.admin().find(MessageRef.body("ledger", "first")).isRetrying()).isTrue();
        // "second" and "third" were taken but not handled: behind the waiting head of their lane they went back to the
        // store, in order; cancelling "third" removes it there
        assertThat(rmq.admin().cancel(MessageRef.body("ledger", "third")))
                .isEqualTo(new CancelResult(true, false, false, false));

        assertThat(rmq.admin().cancel(MessageRef.body("ledger", "first")))
                .isEqualTo(new CancelResult(false, true, false, false));
        var next = owner.orderedStep(0, claim.epoch(), 3, List.of(), null, null, null).join();
        assertThat(next.deliveries()).extracting(Delivery::bodyAsString).containsExactly("second");
        owner.orderedStep(0, claim.epoch(), 0, next.deliveries(), null, null, null).join();
        var stats = rmq.admin().stats("ledger");
        assertThat(stats.pending() + stats.dead()).isZero();
    }

    private List<WaitingMessage> browseAll(String topic, int pageSize) {
        List<WaitingMessage> all = new ArrayList<>();
        BrowsePage page = rmq.admin().browse(topic, null, pageSize);
        all.addAll(page.messages());
        int pages = 1;
        while (page.next() != null) {
            page = rmq.admin().browse(topic, page.next(), pageSize);
            all.addAll(page.messages());
            assertThat(++pages).as("pages").isLessThan(100);
        }
        return all;
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
