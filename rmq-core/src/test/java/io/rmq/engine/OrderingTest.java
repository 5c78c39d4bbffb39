package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

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
        // Nothing is due yet.
        assertThat(consumer.poll().deliveries()).isEmpty();
        Thread.sleep(400);
        List<Delivery> got = new ArrayList<>();
        long stop = System.currentTimeMillis() + 5000;
        while (got.size() < 60 && System.currentTimeMillis() < stop) {
            PollResult poll = consumer.poll();
            for (Delivery d : poll.deliveries()) {
                long poppedAt = d.leaseDeadline() - FAST.lease().toMillis(); // Redis clock when its slot was popped
                assertThat((double) poppedAt).as("never before due").isGreaterThanOrEqualTo(d.score());
            }
            // within one poll the late ones come oldest first
            assertThat(poll.deliveries()).extracting(Delivery::score).isSorted();
            got.addAll(poll.deliveries());
            consumer.ackAll(poll.deliveries());
            Thread.sleep(5);
        }
        assertThat(got).hasSize(60);
        assertThat(got).extracting(Delivery::score).isSorted();
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
        RmqConsumer consumer = rmq.consumer("pr", new ConsumerSettings(1, Duration.ofSeconds(5),
                new RetryPolicy(5, BackoffPolicy.fixed(Duration.ofMillis(300)))));
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
        Thread.sleep(400);
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
        Delivery first = consumer.poll().deliveries().get(0);
        consumer.nack(first, new RuntimeException("boom"));
        PollResult early = consumer.poll();
        assertThat(early.deliveries()).isEmpty();
        assertThat(early.nextDue()).isBetween(early.redisNow() + 1, early.redisNow() + 500);
        Thread.sleep(600);
        Delivery second = consumer.poll().deliveries().get(0);
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
        for (long delay : expected) {
            Delivery d = awaitOne(consumer);
            consumer.nack(d, "fail");
            PollResult after = consumer.poll();
            assertThat(after.nextDue() - after.redisNow()).isBetween(delay - 20, delay);
        }
    }

    private Delivery awaitOne(RmqConsumer consumer) throws InterruptedException {
        long stop = System.currentTimeMillis() + 5000;
        while (System.currentTimeMillis() < stop) {
            List<Delivery> got = consumer.poll().deliveries();
            if (!got.isEmpty()) {
                return got.get(0);
            }
            Thread.sleep(10);
        }
        throw new AssertionError("nothing delivered");
    }
}
