package io.rmq.engine;

import java.time.Duration;
import java.util.List;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer.OrderedStep;
import io.rmq.consumer.internal.SlotClaims;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.core.TopicType;
import io.rmq.redis.internal.RmqRedis;
import io.rmq.redis.internal.MembersBeat;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import io.rmq.redis.internal.RmqRedis.MembersAction;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Ownership leased by the membership (the Redis coordinator, see own.lua and members.lua): an owner key holds no
 * deadline; a claimant takes a slot over only from a holder missing from the live list its own heartbeat returned;
 * a heartbeat of an instance the membership dropped fails; the epoch fences every step; an owner key written by an
 * engine before the leases keeps its deadline.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderlyLeaseTest extends OrderlyTestSupport {

    OrderlyLeaseTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void aLeasedSlotIsTakenOverOnlyFromAHolderTheMembershipDropped() {
        String topic = "lease";
        rmq.defineTopic(topic, TopicType.PRIORITY, 1);
        RmqRedis redis = redis(rmq);
        DefaultRmqConsumer a = (DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        DefaultRmqConsumer b = (DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        rmq.producer().sendPriority(topic, "x", 5);
        rmq.producer().sendPriority(topic, "y", 9);
        // a's membership lasts 1.5 s unless it beats again, b's a minute
        assertThat(redis.members(topic, "a", 1500, MembersAction.JOIN).join().listed()).isTrue();
        MembersBeat listedA = redis.members(topic, "b", 60_000, MembersAction.JOIN).join();
        assertThat(listedA.live()).containsExactlyInAnyOrder("a", "b");
        Claim claimA = SlotClaims.claimLeased(a, 0, "a", 0, listedA).join();
        assertThat(claimA.held()).isTrue();
        OrderedStep step = a.orderedStep(0, claimA.epoch(), 1, List.of(), null, null, null).join();
        assertThat(step.deliveries()).extracting(Delivery::bodyAsString).containsExactly("y");

        // while a is listed, b does not take the slot; nor with a list not newer than the one a claimed with
        assertThat(SlotClaims.claimLeased(b, 0, "b", 0, listedA).join().held()).as("a is live").isFalse();
        MembersBeat stale = new MembersBeat(true, listedA.redisNow(), List.of("b"));
        assertThat(SlotClaims.claimLeased(b, 0, "b", 0, stale).join().held()).as("list not newer than a's")
                .isFalse();
        assertThat(SlotClaims.claim(b, 0, "b", 0, 5000, 0).join().held()).as("a timed claim cannot judge a lease")
                .isFalse();
        assertThat(a.orderedStep(0, claimA.epoch(), 0, List.of(), null, null, null).join().fenced())
                .as("no deadline fences a").isFalse();

        // a stops beating: once the membership has dropped it, b's heartbeat no longer lists it and b takes over
        await().atMost(Duration.ofSeconds(30)).until(() -> !redis.members(topic, "b", 60_000, MembersAction.BEAT)
                .join().live().contains("a"));
        MembersBeat withoutA = redis.members(topic, "b", 60_000, MembersAction.BEAT).join();
        Claim claimB = SlotClaims.claimLeased(b, 0, "b", 0, withoutA).join();
        assertThat(claimB.held()).isTrue();
        assertThat(claimB.tookOver()).isTrue();
        assertThat(claimB.epoch()).isGreaterThan(claimA.epoch());
        // a is fenced, and its heartbeat fails rather than listing it again
        assertThat(a.orderedStep(0, claimA.epoch(), 5, step.deliveries(), null, null, null).join().fenced())
                .as("a can neither settle nor take").isTrue();
        assertThat(redis.members(topic, "a", 1500, MembersAction.BEAT).join().listed()).isFalse();
        assertThat(redis.members(topic, "b", 60_000, MembersAction.BEAT).join().live()).containsExactly("b");
        // b gets what a had taken and not settled first, with the attempt a's loss counted, then the rest
        OrderedStep takeover = b.orderedStep(0, claimB.epoch(), 5, List.of(), null, null, null).join();
        assertThat(takeover.deliveries()).extracting(Delivery::bodyAsString).containsExactly("y", "x");
        assertThat(takeover.deliveries()).extracting(Delivery::attempt).containsExactly(2, 1);
        rmq.producer().sendPriority(topic, "z", 1);
        assertThat(b.orderedStep(0, claimB.epoch(), 1, takeover.deliveries(), null, null, null).join().deliveries())
                .extracting(Delivery::bodyAsString).containsExactly("z");

        // ending ordering is refused while b is listed, and goes ahead once it left: z goes back to store
        assertThatThrownBy(() -> rmq.admin().endOrdering(topic)).hasMessageContaining("still owned");
        redis.members(topic, "b", 60_000, MembersAction.LEAVE).join();
        assertThat(rmq.admin().endOrdering(topic)).isEqualTo(1);
    }

    @Test
    void anOwnerKeyOfAnEngineBeforeTheLeasesKeepsItsDeadline() {
        String topic = "oldkey";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        RmqRedis redis = redis(rmq);
        DefaultRmqConsumer b = (DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        // an engine before the leases holds the slot for 3 s more (it renews until every second)
        byte[] owner = redis.keys().slots(rmq.topics().get(topic))[0].owner();
        long until = System.currentTimeMillis() + 3000; // the test's Redis runs on this machine
        hset(owner, "id", "old@1-abc", "epoch", "7", "until", Long.toString(until), "decided", "0");
        MembersBeat live = redis.members(topic, "b", 60_000, MembersAction.JOIN).join();
        assertThat(live.live()).doesNotContain("old@1-abc");
        Claim refused = SlotClaims.claimLeased(b, 0, "b", 0, live).join();
        assertThat(refused.held()).as("its until is in the future").isFalse();
        assertThat(refused.retryAfterMillis()).isPositive();
        await().atMost(Duration.ofSeconds(30)).until(() -> SlotClaims.claimLeased(b, 0, "b", 0,
                redis.members(topic, "b", 60_000, MembersAction.BEAT).join()).join().held());
    }

    @Test
    void aContainerDroppedFromTheMembershipGivesUpItsSlotsAndJoinsAgain() throws Exception {
        String topic = "dropped";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 4);
        Checker checker = new Checker();
        try (LogCapture log = LogCapture.rmq().expecting("dropped from the membership")) {
            OrderlyListenerContainer container = orderly(rmq, topic, 2, Duration.ofSeconds(2), checker,
                    (body, d) -> { });
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == 4);
            String first = container.instanceId();
            // as if it had missed its heartbeats for the ownership timeout: the membership drops it
            RmqRedis redis = redis(rmq);
            redis.members(topic, first, 0, MembersAction.LEAVE).join();
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().stream()
                    .anyMatch(m -> m.contains("dropped from the membership")));
            // it joins again under a new id, takes the slots of the old one over (never live again), and handles
            // what comes
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == 4
                    && !container.instanceId().equals(first));
            assertThat(redis.members(topic, "reader", 60_000, MembersAction.LIST).join().live())
                    .containsExactly(container.instanceId());
            sendLedger(topic, 4, 3, 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> checker.done.size() == 12);
            checker.assertInOrder(4, 3);
            assertThat(checker.violations).isEmpty();
        }
    }

    @Test
    void aHandlerStillRunningWhenTheMembershipDroppedItKeepsItsSlotToItself() throws Exception {
        String topic = "dropped-running";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        Checker checker = new Checker();
        java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch goOn = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger entered = new java.util.concurrent.atomic.AtomicInteger();
        try (LogCapture log = LogCapture.rmq().expecting("dropped from the membership")) {
            OrderlyListenerContainer container = orderly(rmq, topic, 2, Duration.ofSeconds(2), checker,
                    (body, d) -> {
                        if (entered.incrementAndGet() == 1) {
                            inside.countDown();
                            goOn.await(); // the first handler stays inside the slot's head
                        }
                    });
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == 1);
            sendLedger(topic, 1, 3, 0);
            assertThat(inside.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            String first = container.instanceId();
            redis(rmq).members(topic, first, 0, MembersAction.LEAVE).join();
            // it joins again under a new id and owns the slot again, while the first handler is still inside
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == 1
                    && !container.instanceId().equals(first));
            // the second handler thread does not enter the slot (its head again, under the new epoch) meanwhile
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> entered.get() == 1);
            goOn.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> checker.done.size() == 3);
            checker.assertInOrder(1, 3);
            assertThat(checker.violations).isEmpty();
        }
        finally {
            goOn.countDown();
        }
    }

    private void hset(byte[] key, String... fieldsAndValues) {
        java.util.Map<byte[], byte[]> map = new java.util.LinkedHashMap<>();
        for (int i = 0; i < fieldsAndValues.length; i += 2) {
            map.put(fieldsAndValues[i].getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    fieldsAndValues[i + 1].getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        raw(commands -> commands.hset(key, map));
    }
}
