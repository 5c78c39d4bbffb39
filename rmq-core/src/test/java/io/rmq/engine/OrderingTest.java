package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.rmq.admin.MessageRef;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderingTest extends EngineTestSupport {

    OrderingTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void priorityTopicDeliversHighestFirst() {
        rmq.defineTopic("pr", TopicType.PRIORITY, 1);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            batch.add(OutgoingMessage.priority("pr", "m" + i, (i * 37) % 100));
        }
        rmq.producer().sendBatch(batch);
        RmqConsumer consumer = rmq.consumer("pr", FAST.withBatchSize(7));
        List<Double> seen = new ArrayList<>();
        PollResult poll;
        while (!(poll = consumer.poll()).deliveries().isEmpty()) {
            poll.deliveries().forEach(d -> seen.add(d.score()));
            consumer.ackAll(poll.deliveries());
        }
        assertThat(seen).hasSize(100);
        assertThat(seen).isSortedAccordingTo((a, b) -> Double.compare(b, a));
    }

    @Test
    void timeTopicsNeverDeliverEarlyAndLateOnesGoOldestFirst() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        long base = System.currentTimeMillis();
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            // due times 100..690 ms ahead, sent shuffled
            int k = (i * 7) % 60;
            batch.add(OutgoingMessage.fixedTime("ft", "m" + k, Instant.ofEpochMilli(base + 100 + 10L * k)));
        }
        rmq.producer().sendBatch(batch);
        RmqConsumer consumer = rmq.consumer("ft", FAST.withBatchSize(100));
        // Nothing is due yet; on a loaded machine the send may have taken longer than 100 ms, so this first poll
        // is checked like the others below: whatever it got was due when its slot was popped.
        List<Delivery> got = new ArrayList<>(neverBeforeDue(consumer.poll()));
        consumer.ackAll(got);
        Thread.sleep(400);
        long stop = System.currentTimeMillis() + 30_000;
        while (got.size() < 60 && System.currentTimeMillis() < stop) {
            PollResult poll = consumer.poll();
            neverBeforeDue(poll);
            // within one poll the late ones come oldest first
            assertThat(poll.deliveries()).extracting(Delivery::score).isSorted();
            got.addAll(poll.deliveries());
            consumer.ackAll(poll.deliveries());
            Thread.sleep(5);
        }
        assertThat(got).hasSize(60);
        // Across polls the order holds per slot: the pops of one poll run on several masters of a cluster at
        // slightly different Redis times, so one slot may hand out a message another slot's next poll precedes.
        for (int slot = 0; slot < 4; slot++) {
            int s = slot;
            assertThat(got).filteredOn(d -> d.slot() == s).extracting(Delivery::score).as("slot %d", s).isSorted();
        }
    }

    /** Asserts that each delivery of {@code poll} was due when its slot was popped, by Redis's clock. */
    private static List<Delivery> neverBeforeDue(PollResult poll) {
        for (Delivery d : poll.deliveries()) {
            long poppedAt = d.leaseDeadline() - FAST.lease().toMillis(); // Redis clock when its slot was popped
            assertThat((double) poppedAt).as("never before due").isGreaterThanOrEqualTo(d.score());
        }
        return poll.deliveries();
    }

    @Test
    void aFixedTimeAtOrBeforeNowIsAcceptedAndDueAtOnceOldestFirst() {
        rmq.defineTopic("late", TopicType.FIXED_TIME, 1);
        Instant now = Instant.now();
        rmq.producer().sendFixedTime("late", "an-hour-ago", now.minusSeconds(3600));
        rmq.producer().sendFixedTime("late", "just-now", now);
        rmq.producer().sendFixedTime("late", "a-minute-ago", now.minusSeconds(60));
        rmq.producer().sendFixedTime("late", "later", now.plusSeconds(3600));
        var consumer = rmq.consumer("late", FAST);
        assertThat(consumer.poll().deliveries()).extracting(d -> d.bodyAsString())
                .containsExactly("an-hour-ago", "a-minute-ago", "just-now");
    }

    @Test
    void nextDueHintTellsWhenToPollAgain() {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 2);
        RmqConsumer consumer = rmq.consumer("ft", FAST);
        assertThat(consumer.poll().nextDue()).isEqualTo(-1);
        Instant at = Instant.now().plusSeconds(30);
        rmq.producer().sendFixedTime("ft", "x", at);
        assertThat(consumer.poll().nextDue()).isEqualTo(at.toEpochMilli());
    }

    @Test
    void retriedPriorityMessageKeepsItsPriorityAfterItsBackoff() throws Exception {
        rmq.defineTopic("pr", TopicType.PRIORITY, 1);
        // a backoff longer than any stall between the nack and the next poll on a loaded machine
        RmqConsumer consumer = rmq.consumer("pr", new ConsumerSettings(1, Duration.ofSeconds(5),
                new RetryPolicy(5, BackoffPolicy.fixed(Duration.ofSeconds(2)))));
        rmq.producer().sendPriority("pr", "vip", 100);
        Delivery vip = consumer.poll().deliveries().get(0);
        assertThat(vip.bodyAsString()).isEqualTo("vip");
        for (int i = 0; i < 5; i++) {
            rmq.producer().sendPriority("pr", "low-" + i, 1);
        }
        assertThat(consumer.nack(vip, new IllegalStateException("render farm busy"))).isEqualTo(NackOutcome.RETRY);
        // During the backoff the retry waits; low-priority work goes on.
        Delivery during = consumer.poll().deliveries().get(0);
        assertThat(during.bodyAsString()).startsWith("low-");
        consumer.ack(during);
        Thread.sleep(2100);
        // After the backoff the retry is back with priority 100, ahead of the rest.
        Delivery again = consumer.poll().deliveries().get(0);
        assertThat(again.bodyAsString()).isEqualTo("vip");
        assertThat(again.score()).isEqualTo(100.0);
        assertThat(again.attempt()).isEqualTo(2);
        consumer.ack(again);
    }

    @Test
    void failedTimeMessageIsRetriedAfterItsBackoffNotBefore() throws Exception {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 2);
        RmqConsumer consumer = rmq.consumer("rm", new ConsumerSettings(10, Duration.ofSeconds(5),
                new RetryPolicy(5, BackoffPolicy.fixed(Duration.ofMillis(500)))));
        rmq.producer().sendRangeMerge("rm", "job", Duration.ofMillis(1));
        Thread.sleep(20);
        PollResult popped = consumer.poll();
        Delivery first = popped.deliveries().get(0);
        consumer.nack(first, new RuntimeException("boom"));
        // By Redis's clock: the retry is stored 500 ms after the failure, which came between the pop and this read
        long retryDue = rmq.admin().find(MessageRef.body("rm", "job")).retryAt().toEpochMilli();
        PollResult early = consumer.poll();
        assertThat(retryDue).isBetween(popped.redisNow() + 500, early.redisNow() + 500);
        // a poll before then gets nothing (on a loaded machine this poll may already be later: then it is due)
        assertThat(neverBeforeDue(early)).allSatisfy(d -> assertThat(d.score()).isEqualTo((double) retryDue));
        Delivery second = early.deliveries().isEmpty() ? awaitOne(consumer).deliveries().get(0)
                : early.deliveries().get(0);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(consumer.ack(second)).isTrue();
        assertThat(rmq.admin().stats("rm").waiting()).isZero();
        assertThat(rmq.admin().stats("rm").inFlight()).isZero();
    }

    @Test
    void exponentialBackoffGrowsAndIsCapped() throws Exception {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 1);
        RmqConsumer consumer = rmq.consumer("rm", new ConsumerSettings(10, Duration.ofSeconds(5),
                new RetryPolicy(10, BackoffPolicy.exponential(Duration.ofMillis(100), 3.0, Duration.ofMillis(700), 0.0))));
        rmq.producer().sendRangeMerge("rm", "job", Duration.ofMillis(1));
        Thread.sleep(10);
        long[] expected = {100, 300, 700, 700};
        PollResult popped = awaitOne(consumer);
        for (long delay : expected) {
            consumer.nack(popped.deliveries().get(0), "fail");
            PollResult after = consumer.poll();
            // By Redis's clock: the retry is due exactly the backoff after the failure, which came after the pop and
            // before this poll (a round trip's length on a loaded machine does not enter into it)
            long retryDue = after.deliveries().isEmpty() ? after.nextDue() : (long) after.deliveries().get(0).score();
            assertThat(retryDue - delay).as("retry due - %d ms", delay).isBetween(popped.redisNow(), after.redisNow());
            popped = after.deliveries().isEmpty() ? awaitOne(consumer) : after;
        }
    }

    /** Polls until something is delivered (a generous 30 s: a loaded machine is slow, not wrong). */
    private PollResult awaitOne(RmqConsumer consumer) throws InterruptedException {
        long stop = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < stop) {
            PollResult poll = consumer.poll();
            if (!poll.deliveries().isEmpty()) {
                return poll;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("nothing delivered");
    }
}
