package io.rmq.container.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * CONCURRENT containers of one topic share its slots ({@link SlotShares}): each prefers a disjoint share, a join or a
 * leave moves only the share of the one that comes or goes, a member that stops beating ages out, and an idle
 * container takes from a busy one's slots. Several containers in one JVM stand for several processes (each start is
 * a member of its own); the fault suite kills real processes.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class SlotSharesTest extends ContainerTestSupport {

    private static final int SLOTS = 16;
    /** Membership timeout of the tests: heartbeats every half of it. */
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final ConsumerSettings SETTINGS = new ConsumerSettings(8, Duration.ofSeconds(5),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));

    private final List<RmqListenerContainer> started = new ArrayList<>();

    SlotSharesTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void stopStarted() {
        started.forEach(RmqListenerContainer::stop);
    }

    private RmqListenerContainer start(String topic, String id, int concurrency, MessageHandler<String> handler) {
        ContainerOptions options = new ContainerOptions(id, concurrency, Duration.ofSeconds(2), Duration.ofSeconds(2),
                null).withOwnershipTimeout(TIMEOUT);
        RmqListenerContainer c = (RmqListenerContainer) engine.container(topic, SETTINGS, String.class, handler,
                options);
        c.start();
        started.add(c);
        return c;
    }

    private static Set<Integer> slots(RmqListenerContainer c) {
        return Arrays.stream(c.preferredSlots()).boxed().collect(Collectors.toSet());
    }

    /**
     * Awaits shares that split every slot among {@code containers}, each computed from a membership of exactly them;
     * returns them in order. A container may win no slot at all (rendezvous hashing: 3 members leave one of them
     * empty-handed once in ~700 random ids), which is legal, so emptiness is not what tells a settled membership.
     */
    private static List<Set<Integer>> awaitPartition(RmqListenerContainer... containers) {
        List<Set<Integer>> shares = new ArrayList<>();
        List<Integer> seen = new ArrayList<>();
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                shares.clear();
                seen.clear();
                Set<Integer> union = new HashSet<>();
                int total = 0;
                for (RmqListenerContainer c : containers) {
                    Set<Integer> share = slots(c);
                    shares.add(share);
                    seen.add(c.liveMembers());
                    union.addAll(share);
                    total += share.size();
                }
                return union.size() == SLOTS && total == SLOTS && seen.stream().allMatch(n -> n == containers.length);
            });
        }
        catch (ConditionTimeoutException ex) {
            throw new AssertionError("no partition among " + containers.length + " containers: last shares " + shares
                    + ", members each saw " + seen, ex);
        }
        return List.copyOf(shares);
    }

    private void sendDue(String topic, int count, String prefix) {
        Instant due = Instant.now().minusSeconds(1);
        for (int i = 0; i < count; i++) {
            engine.producer().sendFixedTime(topic, prefix + i, due);
        }
    }

    @Test
    void containersPreferDisjointSharesThatCoverEverySlotAndAJoinOrLeaveMovesOnlyItsShare() {
        engine(RmqInstrumentation.NONE).defineTopic("shared", TopicType.FIXED_TIME, SLOTS);
        Map<String, String> handledBy = new ConcurrentHashMap<>();
        RmqListenerContainer a = start("shared", "a", 2, (String body, Delivery d) -> handledBy.put(body, "a"));
        RmqListenerContainer b = start("shared", "b", 2, (String body, Delivery d) -> handledBy.put(body, "b"));
        RmqListenerContainer c = start("shared", "c", 2, (String body, Delivery d) -> handledBy.put(body, "c"));
        List<Set<Integer>> three = awaitPartition(a, b, c);

        // a leave (graceful stop) gives the leaver's slots to the others; theirs stay where they were
        c.stop();
        List<Set<Integer>> two = awaitPartition(a, b);
        assertThat(two.get(0)).containsAll(three.get(0));
        assertThat(two.get(1)).containsAll(three.get(1));

        // a join takes only slots the joiner wins: nobody else's share changes otherwise
        RmqListenerContainer d = start("shared", "d", 2, (String body, Delivery del) -> handledBy.put(body, "d"));
        List<Set<Integer>> joined = awaitPartition(a, b, d);
        assertThat(two.get(0)).containsAll(joined.get(0));
        assertThat(two.get(1)).containsAll(joined.get(1));

        // and everything sent is handled once the shares have settled
        sendDue("shared", 200, "m");
        await().atMost(Duration.ofSeconds(30)).until(() -> handledBy.size() == 200);
        assertThat(Set.copyOf(handledBy.values())).isSubsetOf("a", "b", "d");
        assertThat(started).allMatch(x -> x.stallsRepaired() == 0);
    }

    @Test
    void aContainerAloneServesEverySlot() {
        engine(RmqInstrumentation.NONE).defineTopic("alone", TopicType.FIXED_TIME, SLOTS);
        Set<Integer> slotsHandled = ConcurrentHashMap.newKeySet();
        Set<String> handled = ConcurrentHashMap.newKeySet();
        RmqListenerContainer a = start("alone", "a", 4, (String body, Delivery d) -> {
            handled.add(body);
            slotsHandled.add(d.slot());
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> slots(a).size() == SLOTS);
        sendDue("alone", 300, "m");
        await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 300);
        assertThat(slotsHandled).hasSize(SLOTS);
        assertThat(a.stallsRepaired()).isZero();
    }

    /**
     * A member that beat once and then never again (a process killed while it held a share): its slots are served by
     * steals meanwhile, and are the survivor's own once its membership has timed out.
     */
    @Test
    void aDeadMembersShareIsServedAndTakenOverWhenItsMembershipTimesOut() throws Exception {
        engine(RmqInstrumentation.NONE).defineTopic("ghosted", TopicType.FIXED_TIME, SLOTS);
        Set<String> handled = ConcurrentHashMap.newKeySet();
        RmqListenerContainer a = start("ghosted", "a", 4, (String body, Delivery d) -> handled.add(body));
        await().atMost(Duration.ofSeconds(10)).until(() -> slots(a).size() == SLOTS);
        // long enough that sending and handling 200 messages ends before it on a loaded machine
        long ghostMillis = 30_000; // > the 5 s + 15 s awaits below plus the sends
        // another engine (a process of its own) whose one container is listed by its heartbeat
        io.rmq.Rmq ghostEngine = io.rmq.Rmq.create(client.client(), io.rmq.RmqOptions.DEFAULT
                .withKeyPrefix(engine.options().keyPrefix()));
        io.rmq.redis.internal.ConsumerRoster ghost = io.rmq.internal.RmqInternals.redis(ghostEngine).roster();
        try {
            ghost.join("ghosted", "ghost", ghostMillis, (live, error) -> { });
            await().atMost(Duration.ofSeconds(5)).until(() -> slots(a).size() < SLOTS);
            Set<Integer> ghostShare = IntStream.range(0, SLOTS).boxed().collect(Collectors.toSet());
            ghostShare.removeAll(slots(a));

            // while the ghost is listed, its slots are the survivor's to steal: nothing sent to them waits for it
            sendDue("ghosted", 200, "m");
            await().atMost(Duration.ofSeconds(15)).until(() -> handled.size() == 200);
            assertThat(slots(a)).as("served by steals while the ghost was still listed")
                    .doesNotContainAnyElementsOf(ghostShare);

            // its time runs out (its last beat is made to end now, rather than waiting out the long life that covered
            // the steps above on a loaded machine): the survivor's own share covers every slot again, within a beat or
            // two
            ghost.abandon(1).get(5, TimeUnit.SECONDS); // its engine beats no more, as a killed process
            await().atMost(Duration.ofMillis(TIMEOUT.toMillis() + 5000)).until(() -> slots(a).size() == SLOTS);
            assertThat(ghostShare).isNotEmpty();
            assertThat(a.stallsRepaired()).isZero();
        }
        finally {
            ghostEngine.close();
        }
    }

    /**
     * More containers than slots (5 on a 4-slot topic): one at least has no share of its own. A full poll (after a
     * lost wake-up subscription or a failed idle check; the watchdog's resync takes the same path) pops every slot,
     * own and foreign, and every poller then sleeps: no busy loop, no slot the watchdog finds unpolled.
     */
    @Test
    void moreContainersThanSlotsStayIdleAndAFullPollCoversEverySlot() throws Exception {
        engine(RmqInstrumentation.NONE).defineTopic("crowded", TopicType.FIXED_TIME, 4);
        try (LogCapture log = LogCapture.rmq().expecting("not polled", "made no pass")) {
            List<RmqListenerContainer> five = IntStream.range(0, 5).mapToObj(i -> start("crowded", "c" + i, 1,
                    (String body, Delivery d) -> { })).toList();
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                Set<Integer> union = new HashSet<>();
                int total = 0;
                for (RmqListenerContainer c : five) {
                    union.addAll(slots(c));
                    total += slots(c).size();
                }
                return union.size() == 4 && total == 4;
            });
            assertThat(five).anyMatch(c -> slots(c).isEmpty());

            long since = System.currentTimeMillis();
            for (int i = 0; i < five.size(); i++) {
                Poller poller = five.get(i).poller();
                if (i % 2 == 0) {
                    poller.wakeListener.resubscribed(); // what the wake-up subscriber calls after a reconnect
                }
                else {
                    poller.events.post(new PollerEvents.SlotsChecked(null, new IllegalStateException("on purpose")));
                }
            }
            // every container looks at every slot: its own and the others' alike
            await().atMost(Duration.ofSeconds(10)).until(() -> five.stream().allMatch(c -> {
                AtomicLongArray polled = c.poller().schedule.lastPolled();
                return IntStream.range(0, polled.length()).allMatch(s -> polled.get(s) >= since);
            }));
            // then they sleep: a few heartbeats and idle checks in 3 s (an idle poller makes ~10 passes; a spinning
            // one makes millions)
            long[] before = five.stream().mapToLong(c -> c.poller().passes).toArray();
            Thread.sleep(3000);
            for (int i = 0; i < five.size(); i++) {
                assertThat(five.get(i).poller().passes - before[i]).as("passes of idle poller %d in 3 s", i)
                        .isLessThan(300);
            }
            assertThat(five).allMatch(c -> c.stallsRepaired() == 0);
            assertThat(log.messages()).isEmpty();
        }
    }

    /** A container whose handlers are stuck (its buffer full) has its slots emptied by an idle one. */
    @Test
    void anIdleContainerStealsFromAFullOne() throws Exception {
        engine(RmqInstrumentation.NONE).defineTopic("stolen", TopicType.FIXED_TIME, SLOTS);
        CountDownLatch release = new CountDownLatch(1);
        Map<String, Integer> stolenSlots = new ConcurrentHashMap<>();
        Set<String> heldByA = ConcurrentHashMap.newKeySet();
        RmqListenerContainer a = start("stolen", "a", 1, (String body, Delivery d) -> {
            heldByA.add(body);
            release.await(60, TimeUnit.SECONDS);
        });
        RmqListenerContainer b = start("stolen", "b", 4, (String body, Delivery d) -> stolenSlots.put(body, d.slot()));
        List<Set<Integer>> shares = awaitPartition(a, b);
        try {
            int sent = 600;
            sendDue("stolen", sent, "m");
            // a holds what fits in its buffer; b handles everything else, a's slots included
            await().atMost(Duration.ofSeconds(30)).until(() -> a.outstanding() > 0
                    && stolenSlots.size() + a.outstanding() == sent);
            assertThat(stolenSlots.values()).as("b handled messages of a's slots").anyMatch(shares.get(0)::contains);
        }
        finally {
            release.countDown();
        }
        assertThat(heldByA).doesNotContainAnyElementsOf(stolenSlots.keySet());
    }
}
