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

    /**
     * Instances of this engine are listed by the roster (ids with the roster mark); instances of older engines only in
     * the topic's own membership key. A claim on the roster's list alone never takes a slot over from an older
     * engine's instance (it may be alive, listed where that list did not look): it is refused as such, and taken over
     * only on a list that read the topic's key and misses it. A roster instance missing from a newer list is taken
     * over as before.
     */
    @Test
    void aClaimOnTheRosterAloneNeverTakesASlotOverFromAnOlderEnginesInstance() {
        String topic = "roster-lease";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 2);
        RmqRedis redis = redis(rmq);
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        String older = OLDER;
        MembersBeat olderList = holdAsOlderInstance(consumer, topic, 60_000, 0);

        String mine = "new@2-abcdef12.r";
        long later = olderList.redisNow() + 1;
        Claim onRoster = SlotClaims.claimLeased(consumer, 0, mine, 0,
                new MembersBeat(true, later, List.of(mine), false)).join();
        assertThat(onRoster.held()).isFalse();
        assertThat(onRoster.heldByOlderEngine()).as("refused as an older engine's slot").isTrue();
        MembersBeat covering = redis.members(topic, mine, 60_000, MembersAction.JOIN).join();
        assertThat(covering.live()).contains(older);
        Claim whileListed = SlotClaims.claimLeased(consumer, 0, mine, 0, covering).join();
        assertThat(whileListed.held()).isFalse();
        assertThat(whileListed.heldByOlderEngine()).as("a live holder, not one the list missed").isFalse();
        redis.members(topic, older, 0, MembersAction.LEAVE).join();
        MembersBeat without = redis.members(topic, mine, 60_000, MembersAction.BEAT).join();
        Claim taken = SlotClaims.claimLeased(consumer, 0, mine, 0, without).join();
        assertThat(taken.held()).isTrue();
        assertThat(taken.tookOver()).isTrue();

        // a roster instance holding slot 1 that a newer roster list misses is taken over on that list alone
        String other = "other@3-12345678.r";
        MembersBeat both = new MembersBeat(true, without.redisNow() + 1, List.of(mine, other), false);
        assertThat(SlotClaims.claimLeased(consumer, 1, other, 0, both).join().held()).isTrue();
        assertThat(SlotClaims.claimLeased(consumer, 1, mine, 0, both).join().held()).as("other is listed").isFalse();
        Claim over = SlotClaims.claimLeased(consumer, 1, mine, 0,
                new MembersBeat(true, both.redisNow() + 1, List.of(mine), false)).join();
        assertThat(over.held()).isTrue();
        assertThat(over.tookOver()).isTrue();
    }

    /**
     * A rolling upgrade: an instance of an older engine (simulated with its membership heartbeat and its claims: it
     * reads only the topic's own membership key) holds two of four slots. A container of this engine finds it there,
     * lists itself there at every pass (so the older one sees it), counts it among the live, and leaves its slots alone
     * while it beats; once it stops beating, the container takes its slots over and handles everything, in order.
     */
    @Test
    void aContainerBesideAnOlderEnginesInstanceListsItselfWhereThatOneReadsAndTakesItsSlotsOnlyOnceItIsGone()
            throws Exception {
        String topic = "rolling";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 4);
        RmqRedis redis = redis(rmq);
        String older = OLDER;
        holdAsOlderInstance((DefaultRmqConsumer) newEngine().consumer(topic, ORDERED), topic, 1500, 0, 1);
        java.util.concurrent.atomic.AtomicBoolean beating = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.List<String> seenByOlder = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread beat = new Thread(() -> {
            while (beating.get()) {
                seenByOlder.addAll(redis.members(topic, older, 1500, MembersAction.BEAT).join().live());
                try {
                    Thread.sleep(300);
                }
                catch (InterruptedException ex) {
                    return;
                }
            }
        }, "older-engine-beat");
        beat.start();
        Checker checker = new Checker();
        byte[] owner0 = redis.keys().slots(rmq.topics().get(topic))[0].owner();
        byte[] owner1 = redis.keys().slots(rmq.topics().get(topic))[1].owner();
        try (LogCapture log = LogCapture.rmq().expecting("instances of an older RMQ are listed",
                "no instance of an older RMQ is listed any more", "that older engines read")) {
            OrderlyListenerContainer container = orderly(rmq, topic, 2, Duration.ofSeconds(2), checker,
                    (body, d) -> { });
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().stream()
                    .anyMatch(m -> m.contains("instances of an older RMQ are listed")));
            String first = container.instanceId();
            assertThat(first).endsWith(".r");
            await().atMost(Duration.ofSeconds(30)).until(() -> seenByOlder.contains(first));
            // dropped from the key the older instance reads (as if it had missed those beats): it gives its slots up
            // and joins again under a new id, and the old id is listed nowhere any more
            redis.members(topic, first, 0, MembersAction.LEAVE).join();
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().stream()
                    .anyMatch(m -> m.contains("that older engines read")));
            await().atMost(Duration.ofSeconds(30)).until(() -> !container.instanceId().equals(first));
            await().atMost(Duration.ofSeconds(30)).until(() -> !redis.roster().read().join().orderly(topic)
                    .contains(first));
            String mine = container.instanceId();
            seenByOlder.clear();
            await().atMost(Duration.ofSeconds(30)).until(() -> seenByOlder.contains(mine));
            // it leaves the older instance's slots alone while that one beats
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() ->
                    older.equals(ownerId(owner0)) && older.equals(ownerId(owner1)));
            assertThat(container.ownedSlots()).doesNotContain(0, 1);
            beating.set(false);
            beat.join();
            // gone: its entry runs out (1.5 s), and the container takes every slot
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == 4);
            assertThat(ownerId(owner0)).isEqualTo(mine);
            sendLedger(topic, 8, 3, 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> checker.done.size() == 24);
            checker.assertInOrder(8, 3);
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().stream()
                    .anyMatch(m -> m.contains("no instance of an older RMQ is listed any more")));
        }
        finally {
            beating.set(false);
            beat.join();
        }
    }

    /**
     * A container that stops while a handler still runs keeps its membership for the ownership timeout from the stop
     * (the engine's heartbeat goes on for its other listeners, but no longer renews this one), so that no other
     * instance takes the slot while the handler may still be inside; then it drops out.
     */
    @Test
    void aContainerStoppedWithAHandlerStillRunningStaysListedForItsTimeoutThenDropsOut() throws Exception {
        String topic = "lingering";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        Checker checker = new Checker();
        java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch goOn = new java.util.concurrent.CountDownLatch(1);
        try (LogCapture log = LogCapture.rmq().expecting("stopped with handlers still running")) {
            OrderlyListenerContainer container = orderly(rmq, topic, 1, Duration.ofSeconds(2), checker,
                    (body, d) -> {
                        inside.countDown();
                        goOn.await();
                    });
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == 1);
            String id = container.instanceId();
            sendLedger(topic, 1, 1, 0);
            assertThat(inside.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            container.stop();
            long stopped = System.currentTimeMillis();
            RmqRedis redis = redis(rmq);
            assertThat(redis.roster().read().join().orderly(topic)).as("listed after the stop").contains(id);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .until(() -> !redis.roster().read().join().orderly(topic).contains(id));
            // the beat that wrote its own entry ran within moments of the stop; the entry lived its 2 s from then
            assertThat(System.currentTimeMillis() - stopped).as("listed for its timeout after the stop")
                    .isGreaterThanOrEqualTo(1500);
        }
        finally {
            goOn.countDown();
        }
    }

    /** The id of the simulated instance of an older engine (no roster mark). */
    private static final String OLDER = "old@1-0ld0ld00";

    /**
     * As an instance of an older engine does: lists {@link #OLDER} in the topic's own membership key for
     * {@code ttlMillis} and claims {@code slots} on that list (each must be granted); returns the list.
     */
    private MembersBeat holdAsOlderInstance(DefaultRmqConsumer consumer, String topic, long ttlMillis, int... slots) {
        MembersBeat list = redis(rmq).members(topic, OLDER, ttlMillis, MembersAction.JOIN).join();
        for (int slot : slots) {
            assertThat(SlotClaims.claimLeased(consumer, slot, OLDER, 0, list).join().held()).as("slot %d", slot)
                    .isTrue();
        }
        return list;
    }

    private @org.jspecify.annotations.Nullable String ownerId(byte[] owner) {
        byte[] id = raw(commands -> commands.hget(owner, "id".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        return id == null ? null : new String(id, java.nio.charset.StandardCharsets.UTF_8);
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
            dropFromRoster(first);
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages().stream()
                    .anyMatch(m -> m.contains("dropped from the membership")));
            // it joins again under a new id, takes the slots of the old one over (never live again), and handles
            // what comes
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == 4
                    && !container.instanceId().equals(first));
            assertThat(redis.roster().read().join().orderly(topic)).containsExactly(container.instanceId());
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
            dropFromRoster(first);
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

    /**
     * Takes the engine's roster entry that lists {@code instanceId} off, as another engine's beat does once its time
     * ran out (the instance missed its heartbeats for the ownership timeout).
     */
    private void dropFromRoster(String instanceId) {
        RmqRedis redis = redis(rmq);
        byte[] live = redis.keys().consumersLive();
        byte[] members = redis.keys().consumersMembers();
        java.util.Map<byte[], byte[]> entries = raw(commands -> commands.hgetall(members));
        int dropped = 0;
        for (java.util.Map.Entry<byte[], byte[]> entry : entries.entrySet()) {
            if (new String(entry.getValue(), java.nio.charset.StandardCharsets.UTF_8).contains(instanceId)) {
                raw(commands -> commands.zrem(live, entry.getKey()));
                raw(commands -> commands.hdel(members, entry.getKey()));
                dropped++;
            }
        }
        assertThat(dropped).as("the roster entry listing %s", instanceId).isEqualTo(1);
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
