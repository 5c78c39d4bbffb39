package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * ORDERLY parallel across groups: the owner of a slot runs different groups of it at once, each group strictly in
 * order, so a group whose head waits for its retry holds back only itself.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderlyGroupsTest extends OrderlyTestSupport {

    /** A retry far longer than handling B takes, even on a busy machine. */
    private static final Duration BACKOFF = Duration.ofSeconds(2);

    OrderlyGroupsTest(RedisTopology topology) {
        super(topology);
    }

    /**
     * One slot, groups A and B. A's head fails twice; B's messages, sent after A's (so due later), are all handled
     * while A's head waits for its retries, and A's later messages only after A's head succeeded.
     */
    @Test
    void aFailingGroupWaitsWhileOtherGroupsOfItsSlotProceed() {
        String topic = "groups";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        // the sender knows the topic is ORDERLY before it sends, so the group is stored with each message
        rmq.declareConsumeMode(topic, ConsumeMode.ORDERLY);
        List<String> starts = new CopyOnWriteArrayList<>(); // "a:0#1": body and attempt, in the order handlers began
        Map<String, Long> startedAt = new ConcurrentHashMap<>();
        Map<String, Long> endedAt = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        List<String> overlaps = new CopyOnWriteArrayList<>();
        ConsumerSettings settings = new ConsumerSettings(8, Duration.ofSeconds(5),
                new RetryPolicy(5, BackoffPolicy.fixed(BACKOFF)));
        ListenerContainer container = newEngine().container(topic, settings, String.class, (String body,
                Delivery d) -> {
            String group = body.substring(0, 1);
            String handling = body + "#" + d.attempt();
            if (running.computeIfAbsent(group, g -> new AtomicInteger()).incrementAndGet() != 1) {
                overlaps.add("two handlers of group " + group + " at once, at " + handling);
            }
            startedAt.put(handling, System.nanoTime());
            starts.add(handling);
            try {
                Thread.sleep(20); // long enough for a second handler of the group to show as an overlap
                if (body.equals("a:0") && d.attempt() <= 2) {
                    throw new IllegalStateException("fails on purpose: " + handling);
                }
            }
            finally {
                endedAt.put(handling, System.nanoTime());
                running.get(group).decrementAndGet();
            }
        }, ContainerOptions.of("o-groups", 4).withMode(ConsumeMode.ORDERLY)
                .withOwnershipTimeout(Duration.ofSeconds(3)));
        containers.add(container);
        container.start();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> ((OrderlyListenerContainer) container).ownedSlots().size() == 1);
        Instant base = Instant.now().minusSeconds(60);
        try (LogCapture log = LogCapture.rmq().expecting("fails on purpose")) {
            for (int i = 0; i < 3; i++) {
                rmq.producer().send(OutgoingMessage.fixedTime(topic, "a:" + i, base.plusMillis(i)).withGroup("A"));
            }
            for (int i = 0; i < 5; i++) {
                rmq.producer().send(OutgoingMessage.fixedTime(topic, "b:" + i, base.plusMillis(3 + i))
                        .withGroup("B"));
            }
            // everything is handled in the end whatever the engine does, so what follows can say what went wrong
            await().atMost(Duration.ofSeconds(60)).until(() -> starts.containsAll(List.of("a:2#1", "b:4#1"))
                    && endedAt.containsKey("a:2#1") && endedAt.containsKey("b:4#1"));
            assertThat(log.warnings()).as("one line per failure caused").hasSize(2)
                    .allSatisfy(line -> assertThat(line).contains("a:0", "retrying"));
        }
        assertThat(overlaps).as("handlers of one group at once").isEmpty();
        assertThat(starts.stream().filter(s -> s.startsWith("a:")))
                .as("A in order, its head retried before its later messages (all handlings: %s)", starts)
                .containsExactly("a:0#1", "a:0#2", "a:0#3", "a:1#1", "a:2#1");
        assertThat(starts.stream().filter(s -> s.startsWith("b:")))
                .as("B in order (all handlings: %s)", starts)
                .containsExactly("b:0#1", "b:1#1", "b:2#1", "b:3#1", "b:4#1");
        assertThat(startedAt.get("a:0#2") - startedAt.get("a:0#1")).as("A's retry waits for its backoff")
                .isGreaterThanOrEqualTo(BACKOFF.toNanos() * 3 / 4);
        long headSucceeded = startedAt.get("a:0#3");
        assertThat(endedAt.get("b:4#1")).as("B completed before A's head's retry succeeded (all handlings: %s)",
                starts).isLessThan(headSucceeded);
        assertThat(startedAt.get("a:1#1")).as("A's second message waited for its head's success")
                .isGreaterThanOrEqualTo(endedAt.get("a:0#3"));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(rmq.admin().stats(topic).pending()).as("waiting or in flight").isZero();
            assertThat(rmq.admin().stats(topic).dead()).as("dead").isZero();
        });
    }

    /**
     * A group's run over many messages settles what it handled as it goes, not only at its end: while the handler of
     * its seventh message blocks, the six before it are acknowledged in Redis (what a freeze or a kill at that moment
     * would have handled again, issue 43).
     */
    @Test
    void aLongRunOfOneGroupIsAcknowledgedInRedisAsItGoes() throws Exception {
        String topic = "long-run";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        rmq.declareConsumeMode(topic, ConsumeMode.ORDERLY);
        java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<String> handled = new CopyOnWriteArrayList<>();
        ListenerContainer container = newEngine().container(topic, ORDERED, String.class, (String body,
                Delivery d) -> {
            if (body.equals("a:6")) {
                blocked.countDown();
                release.await();
            }
            else {
                Thread.sleep(20); // longer than an ack waits for company: each is due as its handler returns
            }
            handled.add(body);
        }, ContainerOptions.of("o-long-run", 4).withMode(ConsumeMode.ORDERLY)
                .withOwnershipTimeout(Duration.ofSeconds(3)));
        containers.add(container);
        Instant base = Instant.now().minusSeconds(60);
        for (int i = 0; i < 8; i++) { // one batch (ORDERED: 8), one group: one run of 8 messages
            rmq.producer().send(OutgoingMessage.fixedTime(topic, "a:" + i, base.plusMillis(i)).withGroup("A"));
        }
        container.start();
        try {
            assertThat(blocked.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("the seventh handler started")
                    .isTrue();
            assertThat(handled).containsExactly("a:0", "a:1", "a:2", "a:3", "a:4", "a:5");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(rmq.admin().stats(topic)
                    .pending()).as("waiting or in flight while a:6's handler blocks: a:6 and a:7").isEqualTo(2));
        }
        finally {
            release.countDown();
        }
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(rmq.admin().stats(topic).pending())
                .as("waiting or in flight").isZero());
        assertThat(handled).hasSize(8);
    }

    /**
     * Messages stored without a group (here: sent before the sender knew the topic is ORDERLY) are the slot's common
     * lane, each ordered with every other message of the slot: a group's message sent before one of them ends before
     * it starts, and nothing sent after it starts before it ends — so a group whose first messages went without the
     * stored group keeps its order. Grouped messages sent after them run in parallel again.
     */
    @Test
    void messagesStoredWithoutAGroupAreOrderedWithEveryMessageOfTheirSlot() {
        String topic = "common";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1); // this producer knows no mode: it stores no group yet
        Instant base = Instant.now().minusSeconds(60);
        // sent before any listener registered the mode (a container does so when it is made): stored without their
        // group, in the common lane
        for (int i = 0; i < 2; i++) {
            rmq.producer().send(OutgoingMessage.fixedTime(topic, "early-A:" + i, base.plusMillis(i)).withGroup("A"));
        }
        Map<String, long[]> spans = new ConcurrentHashMap<>();
        List<String> starts = new CopyOnWriteArrayList<>();
        AtomicInteger atOnce = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        ListenerContainer container = newEngine().container(topic, ORDERED, String.class, (String body,
                Delivery d) -> {
            long start = System.nanoTime();
            starts.add(body + (d.group() == null ? "" : "@" + d.group()));
            mostAtOnce.accumulateAndGet(atOnce.incrementAndGet(), Math::max);
            try {
                Thread.sleep(30);
            }
            finally {
                atOnce.decrementAndGet();
                spans.put(body, new long[] {start, System.nanoTime()});
            }
        }, ContainerOptions.of("o-common", 4).withMode(ConsumeMode.ORDERLY)
                .withOwnershipTimeout(Duration.ofSeconds(3)));
        containers.add(container);
        container.start();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> ((OrderlyListenerContainer) container).ownedSlots().size() == 1);
        rmq.declareConsumeMode(topic, ConsumeMode.ORDERLY); // the sender learns the mode (as its look-up would)
        for (int i = 0; i < 3; i++) {
            for (String group : List.of("A", "B", "C", "D")) {
                rmq.producer().send(OutgoingMessage.fixedTime(topic, group + ":" + i, base.plusMillis(10 + 4 * i
                        + group.charAt(0) - 'A')).withGroup(group));
            }
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> spans.size() == 14);
        assertThat(starts).as("stored without their group").contains("early-A:0", "early-A:1");
        assertThat(starts).as("stored with it").contains("A:0@A", "B:2@B");
        long earlyEnd = Math.max(spans.get("early-A:0")[1], spans.get("early-A:1")[1]);
        assertThat(spans.get("early-A:1")[0]).as("the common lane in order").isGreaterThanOrEqualTo(
                spans.get("early-A:0")[1]);
        spans.forEach((body, span) -> {
            if (!body.startsWith("early")) {
                assertThat(span[0]).as("%s starts after the common lane ended (%s)", body, starts)
                        .isGreaterThanOrEqualTo(earlyEnd);
            }
        });
        for (String group : List.of("A", "B", "C", "D")) {
            for (int i = 1; i < 3; i++) {
                assertThat(spans.get(group + ":" + i)[0]).as("%s in order (%s)", group, starts)
                        .isGreaterThanOrEqualTo(spans.get(group + ":" + (i - 1))[1]);
            }
        }
        assertThat(mostAtOnce.get()).as("groups of the slot in parallel once the common lane is done").isGreaterThan(1);
    }
}
