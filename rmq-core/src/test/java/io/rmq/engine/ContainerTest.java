package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.RmqListenerContainer;
import io.rmq.container.internal.ListenerContainers;
import io.rmq.core.TopicDefinition;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static io.rmq.internal.RmqInternals.wakeUps;

/** The engine's listener container and the pieces it relies on, without Spring. */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ContainerTest extends EngineTestSupport {

    ContainerTest(RedisTopology topology) {
        super(topology);
    }

    private RmqListenerContainer container(String topic, int concurrency, Duration maxIdle,
            io.rmq.consumer.MessageHandler<String> handler) {
        RmqConsumer consumer = rmq.consumer(topic, FAST);
        return ListenerContainers.concurrent(consumer, wakeUps(rmq), String.class, handler,
                new ContainerOptions("c-" + topic, concurrency, maxIdle, Duration.ofSeconds(5), null));
    }

    @Test
    void aGracefulShutdownLogsNoLostWakeUpSubscription() throws Exception {
        rmq.defineTopic("quiet", TopicType.FIXED_TIME, 2);
        try (LogCapture log = LogCapture.rmq(); LogCapture lettuce = LogCapture.of("io.lettuce.core")) {
            RmqListenerContainer container = container("quiet", 1, Duration.ofSeconds(1), (String body, Delivery d) -> {
            });
            container.start();
            // an application's shutdown: the listeners stop, then its Redis client, and last the engine
            container.stop();
            client.shutdown();
            Thread.sleep(2500); // the subscription's check runs every second
            rmq.close();
            client = null;
            assertThat(log.messages()).noneMatch(m -> m.contains("wake-up subscription"));
            // the engine closes connections its client already closed
            assertThat(lettuce.messages()).allMatch(m -> m.equals("Connection is already closed"));
        }
    }

    /**
     * Slots answer one by one, yet a backlog that one round of pops takes whole is handled in priority order across
     * its slots: a quick slot's lower priorities must not start before a higher one that another slot returned a
     * moment later. Repeated, since the order in which replies come is up to the machine.
     */
    @Test
    void aPriorityBacklogTakenInOneRoundIsHandledHighestFirstAcrossSlots() throws Exception {
        for (int run = 0; run < 5; run++) {
            String topic = "backlog-" + run;
            rmq.defineTopic(topic, TopicType.PRIORITY, 4);
            List<OutgoingMessage> backlog = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                // distinct priorities in shuffled order, spread over the four slots by their bodies
                backlog.add(OutgoingMessage.priority(topic, "task-" + i, (i * 17) % 40));
            }
            rmq.producer().sendBatch(backlog);
            List<Double> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
            RmqListenerContainer container = container(topic, 1, Duration.ofSeconds(1),
                    (String body, Delivery d) -> handled.add(d.score()));
            container.start();
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 40);
            }
            finally {
                container.stop();
            }
            assertThat(handled).as("priorities in the order handled, run %d", run)
                    .isSortedAccordingTo(java.util.Comparator.reverseOrder());
        }
    }

    @Test
    void releasedDeliveriesGoBackAtOnceWithoutCountingAnAttempt() {
        rmq.defineTopic("pr", TopicType.PRIORITY, 2);
        RmqConsumer consumer = rmq.consumer("pr", FAST);
        rmq.producer().sendPriority("pr", "a", 5);
        rmq.producer().sendPriority("pr", "b", 7);
        List<Delivery> got = consumer.poll().deliveries();
        assertThat(got).hasSize(2);
        assertThat(consumer.release(got)).isEqualTo(2);
        assertThat(consumer.release(got)).as("fenced: already released").isZero();
        List<Delivery> again = consumer.poll().deliveries();
        assertThat(again).extracting(Delivery::bodyAsString).containsExactly("b", "a");
        assertThat(again).extracting(Delivery::attempt).containsOnly(1);
        assertThat(again).extracting(Delivery::score).containsExactly(7.0, 5.0);
    }

    @Test
    void aTopicDefinedByAnotherProcessIsFoundInTheRedisRegistry() {
        rmq.defineTopic("shared", TopicType.FIXED_TIME, 8);
        try (Rmq other = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
            TopicDefinition found = other.topics().get("shared");
            assertThat(found).isEqualTo(new TopicDefinition("shared", TopicType.FIXED_TIME, 8));
            assertThat(other.producer().sendFixedTime("shared", "x", Instant.now().plusSeconds(5)).merged()).isFalse();
        }
    }

    @Test
    void newFirstMessageIsAnnouncedToSleepingConsumers() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        BlockingQueue<long[]> heard = new LinkedBlockingQueue<>();
        wakeUps(rmq).register("ft", (slot, due) -> heard.add(new long[] {slot, due}));
        Instant later = Instant.now().plusSeconds(60);
        var first = rmq.producer().send(OutgoingMessage.fixedTime("ft", "x", later).withSlotBasis("k"));
        long[] wake = heard.poll(30, TimeUnit.SECONDS);
        assertThat(wake).containsExactly(first.slot(), later.toEpochMilli());
        // a later message in the same slot is not first: no announcement
        rmq.producer().send(OutgoingMessage.fixedTime("ft", "y", later.plusSeconds(1)).withSlotBasis("k"));
        // a sooner one is
        Instant sooner = Instant.now().plusSeconds(30);
        rmq.producer().send(OutgoingMessage.fixedTime("ft", "z", sooner).withSlotBasis("k"));
        assertThat(heard.poll(30, TimeUnit.SECONDS)).containsExactly(first.slot(), sooner.toEpochMilli());
        assertThat(heard.poll(300, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void aBatchThatHoldsTheFirstMessageIsAnnouncedOncePerSlot() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 4);
        BlockingQueue<long[]> heard = new LinkedBlockingQueue<>();
        wakeUps(rmq).register("ft", (slot, due) -> heard.add(new long[] {slot, due}));
        Instant later = Instant.now().plusSeconds(60);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            batch.add(OutgoingMessage.fixedTime("ft", "m" + i, later.plusMillis(i)).withSlotBasis("k"));
        }
        int slot = rmq.producer().send(OutgoingMessage.fixedTime("ft", "probe", later.plusSeconds(5))
                .withSlotBasis("k")).slot();
        assertThat(heard.poll(30, TimeUnit.SECONDS)).containsExactly(slot, later.plusSeconds(5).toEpochMilli());
        assertThat(rmq.producer().sendBatch(batch).added()).isEqualTo(50);
        assertThat(heard.poll(30, TimeUnit.SECONDS)).containsExactly(slot, later.toEpochMilli());
        // a batch entirely behind the first message announces nothing
        List<OutgoingMessage> behind = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            behind.add(OutgoingMessage.fixedTime("ft", "n" + i, later.plusSeconds(1).plusMillis(i)).withSlotBasis("k"));
        }
        assertThat(rmq.producer().sendBatch(behind).added()).isEqualTo(50);
        assertThat(heard.poll(300, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void aPriorityBatchIsAnnouncedAsDueNowOncePerSlot() throws Exception {
        rmq.defineTopic("pr", TopicType.PRIORITY, 4);
        BlockingQueue<long[]> heard = new LinkedBlockingQueue<>();
        wakeUps(rmq).register("pr", (slot, due) -> heard.add(new long[] {slot, due}));
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            batch.add(OutgoingMessage.priority("pr", "p" + i, i).withSlotBasis("k"));
        }
        long before = System.currentTimeMillis();
        assertThat(rmq.producer().sendBatch(batch).added()).isEqualTo(50);
        long[] wake = heard.poll(30, TimeUnit.SECONDS);
        assertThat(wake).isNotNull();
        assertThat(wake[0]).isBetween(0L, 3L);
        // due = Redis's now (same host here; generous bounds for a loaded machine)
        assertThat(wake[1]).isBetween(before - 60_000, System.currentTimeMillis() + 60_000);
        assertThat(heard.poll(300, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void leaseExtensionsRacingAcksNeverCauseARedelivery() throws Exception {
        // A 1.5 s lease is extended every 500 ms while acks stream out: every extension races with acks in flight.
        // An ack fenced by an extension it had not yet seen must be retried with the new token; if it were not, the
        // message would stay in prepare, be swept after its lease and delivered a second time. (A shorter lease
        // would also expire, rightly, when a loaded machine stalls the container longer than the lease.)
        rmq.defineTopic("race", TopicType.RANGE_MERGE, 16);
        var settings = new io.rmq.consumer.ConsumerSettings(64, Duration.ofMillis(1500), FAST.retry());
        java.util.Map<String, Integer> handled = new ConcurrentHashMap<>();
        int messages = 20_000;
        CountDownLatch all = new CountDownLatch(messages);
        RmqListenerContainer container = ListenerContainers.concurrent(rmq.consumer("race", settings), wakeUps(rmq),
                String.class, (String body, Delivery d) -> {
                    if (handled.merge(body, 1, Integer::sum) == 1) {
                        all.countDown();
                    }
                    if (body.hashCode() % 50 == 0) {
                        Thread.sleep(1); // some handlers hold their message across an extension
                    }
                }, new ContainerOptions("c-race", 8, Duration.ofSeconds(5), Duration.ofSeconds(5), null));
        container.start();
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            batch.add(OutgoingMessage.rangeMerge("race", "m-" + i, Duration.ofMillis(1)));
            if (batch.size() == 1000) {
                rmq.producer().sendBatch(batch);
                batch = new ArrayList<>();
                Thread.sleep(40); // spread the load over several extension rounds
            }
        }
        assertThat(all.await(120, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(2000); // longer than a lease: a fenced ack would have been swept and redelivered by now
        container.stop();
        assertThat(handled).hasSize(messages);
        assertThat(handled.values()).as("deliveries per message").containsOnly(1);
        assertThat(rmq.admin().stats("race").inFlight()).isZero();
        assertThat(rmq.admin().stats("race").waiting()).isZero();
    }

    @Test
    void leaseExtensionsRacingATrickleOfAcksNeverCauseARedelivery() throws Exception {
        // As above, but the W3 shape: messages fall due one per ms, so each ack goes out alone, from the handler
        // thread, while the poller's extensions (every 500 ms) are in flight.
        rmq.defineTopic("trickle", TopicType.FIXED_TIME, 16);
        var settings = new io.rmq.consumer.ConsumerSettings(64, Duration.ofMillis(1500), FAST.retry());
        java.util.Map<String, Integer> handled = new ConcurrentHashMap<>();
        int messages = 4_000;
        CountDownLatch all = new CountDownLatch(messages);
        RmqListenerContainer container = ListenerContainers.concurrent(rmq.consumer("trickle", settings), wakeUps(rmq),
                String.class, (String body, Delivery d) -> {
                    if (handled.merge(body, 1, Integer::sum) == 1) {
                        all.countDown();
                    }
                }, new ContainerOptions("c-trickle", 8, Duration.ofSeconds(5), Duration.ofSeconds(5), null));
        container.start();
        long base = System.currentTimeMillis() + 500;
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            batch.add(OutgoingMessage.fixedTime("trickle", "t-" + i, Instant.ofEpochMilli(base + i)));
        }
        rmq.producer().sendBatch(batch);
        assertThat(all.await(120, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(2000); // longer than a lease: a fenced ack would have been swept and redelivered by now
        container.stop();
        assertThat(handled).hasSize(messages);
        assertThat(handled.values()).as("deliveries per message").containsOnly(1);
        assertThat(rmq.admin().stats("trickle").inFlight()).isZero();
    }

    @Test
    void containerHandlesEverythingWithItsConcurrencyAndStopsGracefully() throws Exception {
        rmq.defineTopic("pr", TopicType.PRIORITY, 16);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        Set<String> threads = ConcurrentHashMap.newKeySet();
        RmqListenerContainer container = container("pr", 4, Duration.ofSeconds(30), (body, d) -> {
            threads.add(Thread.currentThread().getName());
            Thread.sleep(2);
            seen.add(body);
        });
        container.start();
        try {
            List<OutgoingMessage> batch = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                batch.add(OutgoingMessage.priority("pr", "m" + i, i % 3));
            }
            rmq.producer().sendBatch(batch);
            await().atMost(Duration.ofSeconds(60)).until(() -> seen.size() == 2000);
            assertThat(threads).hasSize(4).allSatisfy(name -> assertThat(name).startsWith("c-pr-handler-"));
        }
        finally {
            container.stop();
        }
        assertThat(container.isRunning()).isFalse();
        await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().stats("pr").inFlight() == 0);
    }

    @Test
    void idleContainerWakesForANewMessageWithoutPolling() throws Exception {
        rmq.defineTopic("ft", TopicType.FIXED_TIME, 16);
        BlockingQueue<Long> lateness = new LinkedBlockingQueue<>();
        RmqListenerContainer container = container("ft", 1, Duration.ofMinutes(5), (body, d) ->
                lateness.add(System.currentTimeMillis() - (long) d.score()));
        container.start();
        try {
            Thread.sleep(300); // first full poll done; now it sleeps up to 5 minutes
            rmq.producer().sendFixedTime("ft", "close-order", Instant.now().plusMillis(500));
            Long late = lateness.poll(20, TimeUnit.SECONDS);
            assertThat(late).as("delivered long before the 5-minute idle poll").isNotNull();
            assertThat(late).as("not before due (local clock vs Redis clock on the same host)").isGreaterThan(-50L);
        }
        finally {
            container.stop();
        }
    }

    @Test
    void idleContainerDoesNotBusyPoll() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(topology == RedisTopology.STANDALONE, "one server to count on");
        rmq.defineTopic("idle", TopicType.FIXED_TIME, 16);
        rmq.producer().sendFixedTime("idle", "far-future", Instant.now().plusSeconds(3600));
        RmqListenerContainer container = container("idle", 4, Duration.ofSeconds(30), (body, d) -> { });
        container.start();
        try (var stats = ((io.lettuce.core.RedisClient) client).connect()) {
            // the start-up poll is done once the server stays quiet for half a second (a loaded machine may take
            // seconds to start the container; a busy-polling one never goes quiet)
            long[] last = {commandsProcessed(stats.sync().info("stats"))};
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
                long now = commandsProcessed(stats.sync().info("stats"));
                long delta = now - last[0];
                last[0] = now;
                return delta < 10;
            });
            long before = commandsProcessed(stats.sync().info("stats"));
            Thread.sleep(3000);
            long after = commandsProcessed(stats.sync().info("stats"));
            // Whole server, including other idle test contexts in this JVM: a busy-polling container would issue
            // thousands of commands in 3 s; a sleeping one none.
            assertThat(after - before).isLessThan(60);
        }
        finally {
            container.stop();
        }
    }

    private static long commandsProcessed(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("total_commands_processed:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new AssertionError("no total_commands_processed in INFO");
    }

    @Test
    void leaseIsExtendedWhileASlowHandlerRuns() throws Exception {
        rmq.defineTopic("rm", TopicType.RANGE_MERGE, 1);
        CountDownLatch done = new CountDownLatch(1);
        List<Integer> attempts = new ArrayList<>();
        // extended every 333 ms: a loaded machine's stall must outlast the 1 s lease to cause a (rightful) redelivery
        RmqConsumer consumer = rmq.consumer("rm", FAST.withLease(Duration.ofMillis(1000)));
        RmqListenerContainer container = ListenerContainers.concurrent(consumer, wakeUps(rmq), String.class,
                (String body, Delivery d) -> {
                    attempts.add(d.attempt());
                    Thread.sleep(3000); // three leases long
                    done.countDown();
                }, new ContainerOptions("slow", 1, Duration.ofSeconds(30), Duration.ofSeconds(5), null));
        container.start();
        try {
            rmq.producer().sendRangeMerge("rm", "slow-job", Duration.ofMillis(1));
            assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().stats("rm").inFlight() == 0);
            Thread.sleep(500);
            assertThat(attempts).containsExactly(1);
            assertThat(rmq.admin().stats("rm").waiting()).isZero();
        }
        finally {
            container.stop();
        }
    }

    @Test
    void leasesOfDeliveriesStillHeldAreExtendedWhileThousandsAroundThemSettle() throws Exception {
        // Invariant 7: the poller extends every outstanding lease from its own list, from which settled entries are
        // dropped in bulk as thousands of others settle around the few still held. A held delivery lost from that
        // list would not be extended and would come again after its 1 s lease (attempt 2); a settled one kept
        // counted would keep outstanding() above zero. Random handler times and failures, repeated.
        rmq.defineTopic("held", TopicType.RANGE_MERGE, 16);
        long seed = System.nanoTime();
        java.util.Random random = new java.util.Random(seed);
        int messages = 3_000;
        java.util.Map<String, List<Integer>> attempts = new ConcurrentHashMap<>();
        Set<String> slow = ConcurrentHashMap.newKeySet();
        Set<String> failing = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < messages; i++) {
            int roll = random.nextInt(1000);
            if (roll < 4) {
                slow.add("h-" + i); // held across two extensions and past its first lease
            }
            else if (roll < 40) {
                failing.add("h-" + i); // its first attempt throws: a nack in between the acks
            }
        }
        CountDownLatch done = new CountDownLatch(messages);
        RmqConsumer consumer = rmq.consumer("held", FAST.withLease(Duration.ofMillis(1000)));
        RmqListenerContainer container = ListenerContainers.concurrent(consumer, wakeUps(rmq), String.class,
                (String body, Delivery d) -> {
                    attempts.computeIfAbsent(body, b -> new java.util.concurrent.CopyOnWriteArrayList<>())
                            .add(d.attempt());
                    if (failing.contains(body) && d.attempt() == 1) {
                        throw new IllegalStateException("first attempt of " + body + " fails on purpose");
                    }
                    if (slow.contains(body)) {
                        Thread.sleep(1500 + (body.hashCode() & 511));
                    }
                    else if ((body.hashCode() & 7) == 0) {
                        Thread.sleep(1);
                    }
                    done.countDown();
                }, new ContainerOptions("c-held", 4, Duration.ofSeconds(5), Duration.ofSeconds(10), null));
        try (LogCapture logs = LogCapture.rmq().expecting("fails on purpose")) {
            container.start();
            try {
                List<OutgoingMessage> batch = new ArrayList<>();
                for (int i = 0; i < messages; i++) {
                    batch.add(OutgoingMessage.rangeMerge("held", "h-" + i, Duration.ofMillis(1)));
                    if (batch.size() == 500) {
                        rmq.producer().sendBatch(batch);
                        batch = new ArrayList<>();
                        Thread.sleep(random.nextInt(200));
                    }
                }
                assertThat(done.await(120, TimeUnit.SECONDS)).as("all handled (seed %d)", seed).isTrue();
                await().atMost(Duration.ofSeconds(30)).until(() -> container.outstanding() == 0);
                await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().stats("held").inFlight() == 0);
            }
            finally {
                container.stop();
            }
            assertThat(logs.messages().size()).as("failures logged").isEqualTo(failing.size());
        }
        assertThat(attempts).as("seed %d", seed).hasSize(messages);
        attempts.forEach((body, tries) -> assertThat(tries).as("attempts of %s (seed %d)", body, seed)
                .isEqualTo(failing.contains(body) ? List.of(1, 2) : List.of(1)));
        assertThat(container.outstanding()).isZero();
        assertThat(rmq.admin().stats("held").waiting()).isZero();
    }
}
