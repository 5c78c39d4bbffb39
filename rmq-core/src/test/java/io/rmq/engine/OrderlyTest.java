package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotClaims;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer.OrderedStep;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RateLimit;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * ORDERLY consumption: one owner per slot across independent engines (each with its own connection), per-key order
 * through failures and retries, rebalancing on join and leave, fencing in Redis, and the cluster-wide rate limit.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderlyTest extends OrderlyTestSupport {

    OrderlyTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void threeInstancesShareTheSlotsAndHandleEachKeyInOrderThroughFailures() {
        String topic = "ledger";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 16);
        Checker checker = new Checker();
        Set<String> failedOnce = ConcurrentHashMap.newKeySet();
        MessageHandler<String> handler = (body, d) -> {
            if (body.endsWith(":3") && failedOnce.add(body)) {
                throw new IllegalStateException("first attempt of " + body + " fails on purpose");
            }
            Thread.sleep(1);
        };
        List<OrderlyListenerContainer> three = List.of(
                orderly(newEngine(), topic, 3, Duration.ofSeconds(3), checker, handler),
                orderly(newEngine(), topic, 3, Duration.ofSeconds(3), checker, handler),
                orderly(newEngine(), topic, 3, Duration.ofSeconds(3), checker, handler));
        await().atMost(Duration.ofSeconds(60)).until(() -> three.stream().allMatch(c -> c.ownedSlots().size() >= 5));
        try (LogCapture log = LogCapture.rmq().expecting("fails on purpose")) {
            sendLedger(topic, 24, 10, 0);
            await().atMost(Duration.ofSeconds(120)).until(() -> checker.done.size() == 240);
            assertThat(log.warnings()).as("one line per failure caused").hasSize(24);
        }
        checker.assertInOrder(24, 10);
        Set<Integer> all = new HashSet<>();
        three.forEach(c -> {
            assertThat(c.ownedSlots()).hasSizeBetween(5, 6);
            assertThat(Collections.disjoint(all, c.ownedSlots())).isTrue();
            all.addAll(c.ownedSlots());
        });
        assertThat(all).hasSize(16);
        assertThat(failedOnce).hasSize(24);
        assertThat(rmq.admin().stats(topic).pending()).isZero();
        three.forEach(c -> assertThat(c.stallsRepaired()).isZero());
    }

    @Test
    void aJoiningInstanceGetsItsShareAndALeavingOneHandsItsSlotsOverWithoutOverlap() throws Exception {
        String topic = "rebalance";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 16);
        Checker checker = new Checker();
        MessageHandler<String> handler = (body, d) -> Thread.sleep(2);
        OrderlyListenerContainer first = orderly(newEngine(), topic, 4, Duration.ofSeconds(3), checker, handler);
        await().atMost(Duration.ofSeconds(30)).until(() -> first.ownedSlots().size() == 16);
        sendLedger(topic, 32, 20, 0);
        OrderlyListenerContainer second = orderly(newEngine(), topic, 4, Duration.ofSeconds(3), checker, handler);
        await().atMost(Duration.ofSeconds(45)).until(() -> second.ownedSlots().size() == 8
                && first.ownedSlots().size() == 8);
        sendLedger(topic, 32, 20, 20);
        first.stop();
        await().atMost(Duration.ofSeconds(45)).until(() -> second.ownedSlots().size() == 16);
        sendLedger(topic, 32, 20, 40);
        await().atMost(Duration.ofSeconds(120)).until(() -> checker.done.size() == 32 * 60);
        checker.assertInOrder(32, 60);
        assertThat(rmq.admin().stats(topic).inFlight()).isZero();
    }

    @Test
    void aFailedMessageSuspendsItsSlotUntilItsRetryAndGoesToDeadAfterMaxRetries() {
        String topic = "suspend";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        Checker checker = new Checker();
        List<String> handled = new CopyOnWriteArrayList<>();
        List<Long> at = new CopyOnWriteArrayList<>();
        orderly(newEngine(), topic, 2, Duration.ofSeconds(3), checker, (body, d) -> {
            handled.add(body + "#" + d.attempt());
            at.add(System.currentTimeMillis());
            if (body.startsWith("a:") || body.equals("b:1") && d.attempt() == 1) {
                throw new IllegalStateException("fails on purpose: " + body);
            }
        });
        Instant base = Instant.now().minusSeconds(60);
        try (LogCapture log = LogCapture.rmq().expecting("fails on purpose")) {
            rmq.producer().sendFixedTime(topic, "a:0", base);
            rmq.producer().sendFixedTime(topic, "b:1", base.plusMillis(1));
            rmq.producer().sendFixedTime(topic, "c:2", base.plusMillis(2));
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 7);
            assertThat(log.warnings()).hasSize(5).satisfies(lines -> {
                assertThat(lines.subList(0, 3)).allSatisfy(line -> assertThat(line).contains("a:0", "retrying"));
                assertThat(lines.get(3)).contains("attempt 4", "failed for the last time");
                assertThat(lines.get(4)).contains("b:1", "retrying");
            });
        }
        // a fails 1 + 3 retries and goes to dead; b fails once, then succeeds; c only after b
        assertThat(handled).containsExactly("a:0#1", "a:0#2", "a:0#3", "a:0#4", "b:1#1", "b:1#2", "c:2#1");
        assertThat(at.get(1) - at.get(0)).as("the retry waits for its backoff").isGreaterThanOrEqualTo(90);
        assertThat(rmq.admin().deadMessages(topic, 0, 10)).singleElement()
                .satisfies(dead -> assertThat(dead.lastError()).contains("fails on purpose: a:0"));
        assertThat(checker.violations).isEmpty();
    }

    @Test
    void redisFencesAnInstanceWhoseOwnershipRanOutOrWasTakenOver() {
        String topic = "fence";
        rmq.defineTopic(topic, TopicType.PRIORITY, 1);
        DefaultRmqConsumer a = (DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        DefaultRmqConsumer b = (DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        rmq.producer().sendPriority(topic, "x", 5);
        rmq.producer().sendPriority(topic, "y", 9);
        // a holds the slot for 2 s: longer than a loaded machine takes for the next three calls
        Claim claimA = SlotClaims.claim(a, 0, "a", 0, 2000, 0).join();
        assertThat(claimA.held()).isTrue();
        assertThat(SlotClaims.claim(b, 0, "b", 0, 500, 0).join().held()).as("held by a").isFalse();
        OrderedStep step = a.orderedStep(0, claimA.epoch(), 1, List.of(), null, null, null).join();
        assertThat(step.deliveries()).extracting(Delivery::bodyAsString).containsExactly("y");
        // a stops renewing (paused, cut off); its time runs out and b takes the slot with a higher epoch
        await().atMost(Duration.ofSeconds(30)).until(() -> SlotClaims.claim(b, 0, "b", 0, 5000, 0).join().held());
        long epochB = SlotClaims.claim(b, 0, "b", 0, 5000, 0).join().epoch();
        assertThat(epochB).isGreaterThan(claimA.epoch());
        OrderedStep late = a.orderedStep(0, claimA.epoch(), 5, step.deliveries(), null, null, null).join();
        assertThat(late.fenced()).as("a can neither settle nor take").isTrue();
        assertThat(SlotClaims.claim(a, 0, "a", claimA.epoch(), 500, 0).join().held()).as("nor renew").isFalse();
        // b gets what a had taken and not settled first, with the attempt a's loss counted, then the rest
        OrderedStep takeover = b.orderedStep(0, epochB, 5, List.of(), null, null, null).join();
        assertThat(takeover.deliveries()).extracting(Delivery::bodyAsString).containsExactly("y", "x");
        assertThat(takeover.deliveries()).extracting(Delivery::attempt).containsExactly(2, 1);
        OrderedStep settled = b.orderedStep(0, epochB, 5, takeover.deliveries(), null, null, null).join();
        assertThat(settled.fenced()).isFalse();
        assertThat(rmq.admin().stats(topic).inFlight()).isZero();
        // a ZooKeeper-decided epoch takes over from any lower one, a stale one is refused
        Claim zk = SlotClaims.claim(a, 0, "a", 0, 5000, epochB + 100).join();
        assertThat(zk.epoch()).isEqualTo(epochB + 100);
        assertThat(SlotClaims.claim(b, 0, "b", 0, 5000, epochB + 50).join()).isEqualTo(new Claim(0, -1));
    }

    @Test
    void concurrentConsumersRefuseAnOrderedTopicUntilOrderingIsEnded() {
        String topic = "modes";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 2);
        DefaultRmqConsumer orderedConsumer = (DefaultRmqConsumer) rmq.consumer(topic, ORDERED);
        rmq.producer().send(OutgoingMessage.fixedTime(topic, "m", Instant.now()).withSlotBasis("k"));
        Claim claim0 = SlotClaims.claim(orderedConsumer, 0, "me", 0, 5000, 0).join();
        Claim claim1 = SlotClaims.claim(orderedConsumer, 1, "me", 0, 5000, 0).join();
        assertThat(claim0.held() && claim1.held()).isTrue();
        assertThatThrownBy(() -> rmq.consumer(topic, FAST).poll()).hasMessageContaining("ORDERLY");
        assertThatThrownBy(() -> rmq.admin().endOrdering(topic)).hasMessageContaining("still owned");
        assertThat(orderedConsumer.releaseOwnership(0, "me", claim0.epoch()).join()).isTrue();
        assertThat(orderedConsumer.releaseOwnership(1, "me", claim1.epoch()).join()).isTrue();
        rmq.admin().endOrdering(topic);
        assertThat(rmq.consumer(topic, FAST).poll().deliveries()).extracting(Delivery::bodyAsString)
                .containsExactly("m");
    }

    @Test
    void theRateLimitHoldsAcrossThreeInstances() {
        for (ConsumeMode mode : ConsumeMode.values()) {
            String topic = "limited-" + mode.name().toLowerCase();
            rmq.defineTopic(topic, TopicType.RANGE_MERGE, 8);
            List<OutgoingMessage> backlog = new ArrayList<>();
            for (int i = 0; i < 3000; i++) {
                backlog.add(OutgoingMessage.rangeMerge(topic, "m-" + i, Duration.ofMillis(1)));
            }
            rmq.producer().sendBatch(backlog);
            List<Long> handledAt = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 3; i++) {
                ListenerContainer container = newEngine().container(topic, ORDERED, String.class,
                        (String body, Delivery d) -> handledAt.add(System.currentTimeMillis()),
                        ContainerOptions.of("r-" + topic + i, 4).withMode(mode).withRateLimit(RateLimit.parse("200/s"))
                                .withOwnershipTimeout(Duration.ofSeconds(2)));
                containers.add(container);
                container.start();
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> handledAt.size() >= 1200);
            List<Long> times = handledAt.stream().sorted().toList();
            // a four-second window after the first second: 800 at 200/s (the bucket holds at most 20 more). The
            // handlers' clocks are read after the limiter let them go, so a loaded machine bunches them: the bounds
            // are generous, yet far from 2,400 (a limit per instance) and from no limit at all.
            long from = times.get(0) + 1000;
            long count = times.stream().filter(t -> t >= from && t < from + 4000).count();
            System.out.printf("[rate-limit] %s %s: %d handled in 4 s at 200/s by 3 instances%n", topology, mode, count);
            assertThat(count).as(mode + ": handled in 4 s at 200/s").isBetween(400L, 1000L);
            containers.forEach(ListenerContainer::stop);
            containers.clear();
        }
    }
}
