package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.rmq.admin.TopicStats;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.NackOutcome;
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
import static org.awaitility.Awaitility.await;

/**
 * TopicStats: every message counted once as waiting, in flight, retrying or dead; the earliest due time of time-typed
 * topics; and what one {@code stats()} call costs in Redis commands.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class TopicStatsTest extends EngineTestSupport {

    private static final ConsumerSettings LONG_BACKOFF = new ConsumerSettings(50, Duration.ofSeconds(30),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofSeconds(30))));
    private static final ConsumerSettings SHORT_BACKOFF = new ConsumerSettings(50, Duration.ofSeconds(30),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(300))));

    TopicStatsTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void aPriorityRetryBackingOffIsRetryingNotWaitingAndWaitingAgainOnceDue() {
        rmq.defineTopic("prio", TopicType.PRIORITY, 4);
        for (int i = 0; i < 4; i++) {
            rmq.producer().send(OutgoingMessage.priority("prio", "job-" + i, i));
        }
        RmqConsumer slow = rmq.consumer("prio", LONG_BACKOFF);
        List<Delivery> taken = slow.poll().deliveries();
        assertThat(taken).hasSize(4);
        assertThat(slow.nack(taken.get(0), "fails on purpose")).isEqualTo(NackOutcome.RETRY);
        assertThat(slow.deadLetter(taken.get(1), "dead on purpose")).isEqualTo(NackOutcome.DEAD);
        slow.ack(taken.get(2));
        // taken.get(3) stays in flight
        rmq.producer().send(OutgoingMessage.priority("prio", "new", 9));

        TopicStats stats = rmq.admin().stats("prio");
        assertThat(stats.waiting()).as("only the new one").isEqualTo(1);
        assertThat(stats.retrying()).isEqualTo(1);
        assertThat(stats.inFlight()).isEqualTo(1);
        assertThat(stats.dead()).isEqualTo(1);
        assertThat(stats.pending()).isEqualTo(3);
        assertThat(stats.oldestDue()).as("PRIORITY has no due times").isNull();
        assertThat(stats.slots()).hasSize(4);
        assertThat(stats.slots().stream().mapToLong(TopicStats.SlotStats::retrying).sum()).isEqualTo(1);
        assertThat(stats.slots().stream().mapToLong(TopicStats.SlotStats::waiting).sum()).isEqualTo(1);
        assertThat(stats.slots()).allMatch(s -> s.oldestDue() == null);

        RmqConsumer quick = rmq.consumer("prio", SHORT_BACKOFF);
        Delivery again = quick.poll().deliveries().stream().filter(d -> d.bodyAsString().equals("new"))
                .findFirst().orElseThrow();
        assertThat(quick.nack(again, "fails on purpose")).isEqualTo(NackOutcome.RETRY);
        assertThat(rmq.admin().stats("prio").retrying()).isEqualTo(2);
        // once its backoff is over, a retry is due again: waiting, until a pop takes it
        await().atMost(Duration.ofSeconds(10)).until(() -> rmq.admin().stats("prio").retrying() == 1);
        TopicStats after = rmq.admin().stats("prio");
        assertThat(after.waiting()).isEqualTo(1);
        assertThat(after.inFlight()).isEqualTo(1);
        assertThat(after.pending()).isEqualTo(3);
    }

    @Test
    void aTimeTypedTopicReportsItsEarliestDueTimeAndRetriesBackingOffInTheStore() {
        rmq.defineTopic("times", TopicType.FIXED_TIME, 4);
        Instant base = Instant.ofEpochMilli(System.currentTimeMillis() - 60_000);
        assertThat(rmq.admin().stats("times").oldestDue()).as("empty").isNull();
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            batch.add(OutgoingMessage.fixedTime("times", "late-" + i, base.plusSeconds(i)));
        }
        batch.add(OutgoingMessage.fixedTime("times", "future", base.plusSeconds(3600)));
        rmq.producer().sendBatch(batch);

        TopicStats stats = rmq.admin().stats("times");
        assertThat(stats.waiting()).isEqualTo(9);
        assertThat(stats.retrying()).isZero();
        assertThat(stats.oldestDue()).isEqualTo(base);
        for (TopicStats.SlotStats slot : stats.slots()) {
            assertThat(slot.oldestDue() == null).isEqualTo(slot.waiting() == 0);
        }
        assertThat(stats.slots().stream().map(TopicStats.SlotStats::oldestDue).filter(d -> d != null)
                .min(Instant::compareTo)).contains(base);

        RmqConsumer consumer = rmq.consumer("times", LONG_BACKOFF);
        List<Delivery> taken = consumer.poll().deliveries();
        assertThat(taken).hasSize(8);
        Delivery first = taken.stream().filter(d -> d.bodyAsString().equals("late-0")).findFirst().orElseThrow();
        assertThat(consumer.nack(first, "fails on purpose")).isEqualTo(NackOutcome.RETRY);
        taken.stream().filter(d -> d != first).forEach(consumer::ack);

        TopicStats after = rmq.admin().stats("times");
        assertThat(after.waiting()).as("the future one").isEqualTo(1);
        assertThat(after.retrying()).as("back in store at its retry time, 30 s ahead").isEqualTo(1);
        assertThat(after.inFlight()).isZero();
        assertThat(after.oldestDue()).as("the retry's time, the earliest in store now")
                .isBetween(Instant.now().plusSeconds(20), Instant.now().plusSeconds(40));
    }

    /**
     * A stats call reads only the slots that hold anything, found with plain {@code EXISTS} first: on a standalone
     * server one {@code EXISTS} of every slot's keys, then (it found something) one stats script per slot, pipelined;
     * on a cluster one {@code EXISTS} per slot, then a stats script for the one occupied slot. An empty topic costs the
     * {@code EXISTS} alone.
     */
    @Test
    void aStatsCallRunsTheScriptOnlyWhereSomethingIs() {
        rmq.defineTopic("cost", TopicType.FIXED_TIME, 16);
        rmq.defineTopic("empty", TopicType.FIXED_TIME, 16);
        rmq.producer().send(OutgoingMessage.fixedTime("cost", "x", Instant.now()));
        rmq.admin().stats("cost"); // scripts loaded, connections open
        Map<String, Long> delta = statsCost("cost");
        System.out.println("[stats cost] " + topology + ", 16 slots, one occupied, one stats() call: " + delta);
        boolean standalone = topology == io.rmq.test.RedisTopology.STANDALONE;
        long scripts = standalone ? 16 : 1;
        assertThat(delta.get("evalsha")).isEqualTo(scripts);
        // inside the script, per slot: TIME, 3 ZCARD, EXISTS owner, ZRANGEBYSCORE retry, EXISTS attempts, ZRANGE
        assertThat(delta.getOrDefault("zcard", 0L)).isEqualTo(3 * scripts);
        assertThat(delta.get("exists")).isEqualTo((standalone ? 1 : 16) + 2 * scripts);
        assertThat(delta.keySet()).containsOnly("evalsha", "time", "zcard", "exists", "zrangebyscore", "zrange");

        Map<String, Long> empty = statsCost("empty");
        assertThat(empty).as("an empty topic").isEqualTo(Map.of("exists", standalone ? 1L : 16L));
        assertThat(rmq.admin().stats("empty").slots()).hasSize(16).allSatisfy(slot -> {
            assertThat(slot.waiting() + slot.inFlight() + slot.dead() + slot.retrying()).isZero();
            assertThat(slot.oldestDue()).isNull();
        });
    }

    /** The commands Redis ran for one {@code stats(topic)} call, without connection upkeep. */
    private Map<String, Long> statsCost(String topic) {
        Map<String, Long> before = commandCalls();
        rmq.admin().stats(topic);
        Map<String, Long> after = commandCalls();
        Map<String, Long> delta = new TreeMap<>();
        after.forEach((command, calls) -> {
            long d = calls - before.getOrDefault(command, 0L);
            // connection upkeep (the measuring connections, topology refreshes) is not the stats call's
            if (d > 0 && !java.util.Set.of("info", "cluster", "hello", "client", "command", "ping")
                    .contains(command.split("\\|")[0])) {
                delta.put(command, d);
            }
        });
        return delta;
    }
}
