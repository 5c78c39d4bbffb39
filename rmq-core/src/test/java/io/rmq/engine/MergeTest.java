package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.internal.SlotRouter;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;

@ParameterizedClass
@EnumSource(RedisTopology.class)
class MergeTest extends EngineTestSupport {

    MergeTest(RedisTopology topology) {
        super(topology);
    }

    record Price(long itemId, String currency, long cents) {
    }

    @Test
    void thousandSendsOfOneBodyAreOneMessageForEveryType() {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 16);
        rmq.defineTopic("pr", TopicType.PRIORITY, 16);
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 16);
        Instant at = Instant.now().plusSeconds(60);
        int merged = 0;
        for (int i = 0; i < 1000; i++) {
            Price body = new Price(42, "EUR", 1999);
            merged += rmq.producer().sendRangeMerge("rm", body, Duration.ofMinutes(1)).merged() ? 1 : 0;
            rmq.producer().sendPriority("pr", body, i % 7);
            rmq.producer().sendFixedTime("ft", body, at.plusMillis(i));
        }
        assertThat(merged).isEqualTo(999);
        assertThat(rmq.admin().stats("rm").waiting()).isEqualTo(1);
        assertThat(rmq.admin().stats("pr").waiting()).isEqualTo(1);
        assertThat(rmq.admin().stats("ft").waiting()).isEqualTo(1);
    }

    @Test
    void batchOfDuplicatesMergesToo() {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 16);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            batch.add(OutgoingMessage.rangeMerge("rm", "item-" + (i % 10), Duration.ofMinutes(1)));
        }
        var result = rmq.producer().sendBatch(batch);
        assertThat(result.sent()).isEqualTo(1000);
        assertThat(result.added()).isEqualTo(10);
        assertThat(rmq.admin().stats("rm").waiting()).isEqualTo(10);
    }

    @Test
    void aBatchLargerThanOneWriteToTheConnectionKeepsTheMergeRulesOfEveryType() {
        // ~2.6 MB per batch: its commands go to the connection in several groups, about a chunk (1,000) per slot
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 4);
        rmq.defineTopic("pr", TopicType.PRIORITY, 4);
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        Instant at = Instant.now().plusSeconds(600);
        String filler = "x".repeat(200);
        for (int round = 0; round < 2; round++) {
            List<OutgoingMessage> batch = new ArrayList<>();
            for (int i = 0; i < 4_000; i++) {
                batch.add(OutgoingMessage.rangeMerge("rm", "r" + i + filler, Duration.ofMinutes(10)));
                batch.add(OutgoingMessage.priority("pr", "p" + i + filler, round * 10_000 + i));
                batch.add(OutgoingMessage.fixedTime("ft", "f" + i + filler, at.plusMillis(round * 10_000 + i)));
            }
            var result = rmq.producer().sendBatch(batch);
            assertThat(result.sent()).isEqualTo(12_000);
            assertThat(result.added()).isEqualTo(round == 0 ? 12_000 : 0);
        }
        assertThat(rmq.admin().stats("rm").waiting()).isEqualTo(4_000);
        assertThat(rmq.admin().stats("pr").waiting()).isEqualTo(4_000);
        assertThat(rmq.admin().stats("ft").waiting()).isEqualTo(4_000);
        // the second round's values: PRIORITY and FIXED_TIME take the latest
        byte[] priority = ("p7" + filler).getBytes();
        assertThat(redisAdmin(rmq).storeScore(redis(rmq).keys().slot("pr", SlotRouter.slot(priority, null, 4)),
                priority).join()).isEqualTo(10_007.0);
        byte[] fixed = ("f7" + filler).getBytes();
        assertThat(redisAdmin(rmq).storeScore(redis(rmq).keys().slot("ft", SlotRouter.slot(fixed, null, 4)), fixed)
                .join()).isEqualTo((double) at.plusMillis(10_007).toEpochMilli());
    }

    @Test
    void rangeMergeKeepsTheTimeOfTheFirstSend() throws Exception {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 4);
        SendResult first = rmq.producer().sendRangeMerge("rm", "sku-1", Duration.ofMillis(400));
        var slot = redis(rmq).keys().slot("rm", first.slot());
        double firstDue = redisAdmin(rmq).storeScore(slot, "sku-1".getBytes()).get();
        Thread.sleep(150);
        assertThat(rmq.producer().sendRangeMerge("rm", "sku-1", Duration.ofMillis(400)).merged()).isTrue();
        assertThat(redisAdmin(rmq).storeScore(slot, "sku-1".getBytes()).get()).isEqualTo(firstDue);

        RmqConsumer consumer = rmq.consumer("rm", FAST);
        List<Delivery> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 5000;
        PollResult poll = null;
        while (got.isEmpty() && System.currentTimeMillis() < deadline) {
            poll = consumer.poll();
            got.addAll(poll.deliveries());
            Thread.sleep(10);
        }
        assertThat(got).hasSize(1);
        assertThat(got.get(0).score()).isEqualTo(firstDue);
        // the clock of the pop that delivered it (its lease started then): PollResult.redisNow() is the earliest
        // clock over all slots polled, and another master's pop may have run a millisecond before this one
        assertThat(got.get(0).leaseDeadline() - FAST.lease().toMillis()).isGreaterThanOrEqualTo((long) firstDue);
    }

    @Test
    void batchSendsDueRangeMergeMessagesByRedisClockAndKeepTheFirstTime() throws Exception {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 4);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            batch.add(OutgoingMessage.rangeMerge("rm", "sku-" + i, Duration.ofSeconds(30)));
        }
        SendResult probe = rmq.producer().sendRangeMerge("rm", "probe", Duration.ofSeconds(30));
        var probeSlot = redis(rmq).keys().slot("rm", probe.slot());
        double scriptDue = redisAdmin(rmq).storeScore(probeSlot, "probe".getBytes()).get();
        assertThat(rmq.producer().sendBatch(batch).added()).isEqualTo(100);
        for (int i = 0; i < 100; i++) {
            byte[] member = ("sku-" + i).getBytes();
            double due = -1;
            for (var slot : redis(rmq).keys().slots(rmq.topics().get("rm"))) {
                Double score = redisAdmin(rmq).storeScore(slot, member).get();
                if (score != null) {
                    due = score;
                }
            }
            // computed from the estimated Redis clock: off by at most half a round trip of its reading, a few ms on
            // a quiet machine (measured in benchmarks); a loaded one can make a round trip last far longer
            assertThat(due).isBetween(scriptDue - 1_000, scriptDue + 30_000);
        }
        double firstDue = redisAdmin(rmq).storeScore(probeSlot, "probe".getBytes()).get();
        Thread.sleep(20);
        assertThat(rmq.producer().sendBatch(List.of(OutgoingMessage.rangeMerge("rm", "probe", Duration.ofSeconds(30))))
                .added()).isZero();
        assertThat(redisAdmin(rmq).storeScore(probeSlot, "probe".getBytes()).get()).isEqualTo(firstDue);
    }

    @Test
    void priorityAndFixedTimeTakeTheLatestValue() throws Exception {
        rmq.defineTopic("pr", TopicType.PRIORITY, 4);
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        rmq.producer().sendPriority("pr", "merchant-7", 1);
        SendResult pr = rmq.producer().sendPriority("pr", "merchant-7", 9);
        assertThat(pr.merged()).isTrue();
        assertThat(redisAdmin(rmq).storeScore(redis(rmq).keys().slot("pr", pr.slot()), "merchant-7".getBytes()).get())
                .isEqualTo(9.0);

        Instant later = Instant.now().plusSeconds(120);
        Instant sooner = Instant.now().plusSeconds(30);
        rmq.producer().sendFixedTime("ft", "order-1", later);
        SendResult ft = rmq.producer().sendFixedTime("ft", "order-1", sooner);
        assertThat(ft.merged()).isTrue();
        assertThat(redisAdmin(rmq).storeScore(redis(rmq).keys().slot("ft", ft.slot()), "order-1".getBytes()).get())
                .isEqualTo((double) sooner.toEpochMilli());
    }

    @Test
    void equalObjectsSerializeIdenticallyWhateverTheirMapOrder() {
        rmq.defineTopic("pr", TopicType.PRIORITY, 16);
        Map<String, Object> a = new LinkedHashMap<>();
        a.put("zeta", 1);
        a.put("alpha", Map.of("y", 2, "x", 1));
        Map<String, Object> b = new java.util.HashMap<>();
        b.put("zeta", 1);
        b.put("alpha", new TreeMap<>(Map.of("x", 1, "y", 2)));
        rmq.producer().sendPriority("pr", a, 1);
        assertThat(rmq.producer().sendPriority("pr", b, 2).merged()).isTrue();
        assertThat(rmq.options().codec().encode(a)).asString().isEqualTo("{\"alpha\":{\"x\":1,\"y\":2},\"zeta\":1}");
    }

    @Test
    void asyncSendsAndSlotBasisRouting() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 16);
        Instant at = Instant.now().plusSeconds(60);
        var futures = new ArrayList<java.util.concurrent.CompletableFuture<SendResult>>();
        for (int i = 0; i < 200; i++) {
            futures.add(rmq.producer().sendAsync(OutgoingMessage.fixedTime("ft", "order-" + i, at).withSlotBasis("merchant-3")));
        }
        int slot = futures.get(0).get().slot();
        for (var f : futures) {
            assertThat(f.get().slot()).isEqualTo(slot);
            assertThat(f.get().merged()).isFalse();
        }
        assertThat(rmq.admin().stats("ft").slots().get(slot).waiting()).isEqualTo(200);
        assertThat(rmq.admin().stats("ft").waiting()).isEqualTo(200);
    }
}
