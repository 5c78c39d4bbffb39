package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.BatchMessageHandler;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailedMessage;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.FailurePolicy;
import io.rmq.consumer.RmqBatchFailure;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Batch listeners of the engine: one slot's deliveries of one pop, handled and settled together. */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class BatchListenerTest extends EngineTestSupport {

    BatchListenerTest(RedisTopology topology) {
        super(topology);
    }

    record Order(long id) {
    }

    /** One handled batch: the payloads and their deliveries' slots and attempts. */
    record Batch(List<String> payloads, List<Integer> slots, List<Integer> attempts) {
    }

    private final List<ListenerContainer> containers = new CopyOnWriteArrayList<>();

    @AfterEach
    void stopContainers() {
        containers.forEach(ListenerContainer::stop);
    }

    private static ConsumerSettings settings(int batchSize) {
        return new ConsumerSettings(batchSize, Duration.ofSeconds(5),
                new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));
    }

    private ListenerContainer start(Rmq engine, String topic, ConsumerSettings settings, int concurrency,
            BatchMessageHandler<String> handler) {
        ListenerContainer container = engine.batchContainer(topic, settings, String.class, handler,
                new ContainerOptions("batch-" + topic, concurrency, Duration.ofSeconds(1), Duration.ofSeconds(10),
                        null));
        containers.add(container);
        container.start();
        return container;
    }

    private static BatchMessageHandler<String> recording(List<Batch> into) {
        return (payloads, deliveries) -> into.add(new Batch(List.copyOf(payloads),
                deliveries.stream().map(Delivery::slot).toList(), deliveries.stream().map(Delivery::attempt).toList()));
    }

    private void send(String topic, int count) {
        List<OutgoingMessage> messages = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            messages.add(OutgoingMessage.fixedTime(topic, "m-" + i, Instant.now()));
        }
        rmq.producer().sendBatch(messages);
    }

    private void awaitSettled(String topic) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            var stats = rmq.admin().stats(topic);
            assertThat(stats.waiting() + stats.inFlight()).as("%s", stats).isZero();
        });
    }

    @Test
    void eachBatchIsOneSlotsDeliveriesOfOnePopAtMostBatchSizeAndIsAckedInOneCall() {
        AtomicInteger ackCalls = new AtomicInteger();
        AtomicInteger started = new AtomicInteger();
        Map<RmqInstrumentation.Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        RmqInstrumentation counting = new RmqInstrumentation() {
            @Override
            public void operation(String operation, String topic, long nanos, Throwable error) {
                if (operation.equals("ack")) {
                    ackCalls.incrementAndGet();
                }
            }

            @Override
            public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
                started.incrementAndGet();
                return new HandleScope() {
                    @Override
                    public void settled(Outcome outcome) {
                        outcomes.computeIfAbsent(outcome, o -> new AtomicInteger()).incrementAndGet();
                    }
                };
            }
        };
        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix).withInstrumentation(counting));
        try {
            engine.defineTopic("orders", TopicType.FIXED_TIME, 4);
            rmq.defineTopic("orders", TopicType.FIXED_TIME, 4);
            send("orders", 200);
            List<Batch> batches = new CopyOnWriteArrayList<>();
            ListenerContainer container = start(engine, "orders", settings(10), 2, recording(batches));
            awaitSettled("orders");
            container.stop();
            assertThat(batches).allSatisfy(batch -> {
                assertThat(batch.payloads()).hasSizeBetween(1, 10).hasSameSizeAs(batch.slots());
                assertThat(batch.slots()).as("one slot per batch").containsOnly(batch.slots().get(0));
            });
            assertThat(batches).as("backlogged: batches hold more than one").anyMatch(b -> b.payloads().size() > 1);
            List<String> handled = batches.stream().flatMap(b -> b.payloads().stream()).toList();
            assertThat(handled).hasSize(200).doesNotHaveDuplicates();
            assertThat(ackCalls.get()).as("one ack call per batch").isBetween(1, batches.size());
            assertThat(started.get()).as("instrumentation counts messages").isEqualTo(200);
            assertThat(outcomes.get(RmqInstrumentation.Outcome.ACK)).hasValue(200);
        }
        finally {
            containers.forEach(ListenerContainer::stop);
            engine.close();
        }
    }

    @Test
    void aBatchFailureRetriesOnlyItsIndexesAndAcksTheRest() {
        rmq.defineTopic("mixed", TopicType.FIXED_TIME, 2);
        send("mixed", 40);
        List<Batch> batches = new CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.rmq()) {
            start(rmq, "mixed", settings(8), 1, (payloads, deliveries) -> {
                recording(batches).handle(payloads, deliveries);
                // every odd message fails its first attempt
                List<Integer> failed = new ArrayList<>();
                for (int i = 0; i < payloads.size(); i++) {
                    if (number(payloads.get(i)) % 2 == 1 && deliveries.get(i).attempt() == 1) {
                        failed.add(i);
                    }
                }
                if (!failed.isEmpty()) {
                    throw new RmqBatchFailure("odd ones failed", new IllegalStateException("odd"),
                            failed.stream().mapToInt(Integer::intValue).toArray());
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> handledCount(batches) == 60);
            awaitSettled("mixed");
            assertThat(log.warnings()).hasSize(20).allMatch(m -> m.contains("retrying after its backoff")
                    && m.contains("IllegalStateException: odd"));
        }
        Map<String, List<Integer>> attempts = attemptsByPayload(batches);
        assertThat(attempts).hasSize(40).allSatisfy((payload, seen) -> assertThat(seen).as(payload)
                .isEqualTo(number(payload) % 2 == 1 ? List.of(1, 2) : List.of(1)));
        assertThat(rmq.admin().deadCount("mixed")).isZero();
    }

    @Test
    void anExceptionFailsEveryDeliveryOfTheBatchEachDecidedByTheErrorHandler() {
        rmq.defineTopic("all", TopicType.FIXED_TIME, 1);
        send("all", 6);
        List<FailedMessage> seen = new CopyOnWriteArrayList<>();
        ConsumerSettings settings = settings(10).withFailures(FailurePolicy.DEFAULT.withErrorHandler(failure -> {
            seen.add(failure);
            return FailureDecision.standard();
        }));
        List<Batch> batches = new CopyOnWriteArrayList<>();
        try (LogCapture ignored = LogCapture.rmq()) {
            start(rmq, "all", settings, 1, (payloads, deliveries) -> {
                recording(batches).handle(payloads, deliveries);
                if (deliveries.get(0).attempt() == 1) {
                    throw new IllegalStateException("database down");
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> handledCount(batches) == 12);
            awaitSettled("all");
        }
        assertThat(attemptsByPayload(batches)).hasSize(6).allSatisfy((payload, seen2) ->
                assertThat(seen2).isEqualTo(List.of(1, 2)));
        assertThat(seen).hasSize(6).allSatisfy(failure -> {
            assertThat(failure.error()).hasMessage("database down");
            assertThat(failure.payload()).isEqualTo(failure.delivery().bodyAsString());
        });
    }

    @Test
    void aMessageThatKeepsFailingIsDeadAfterMaxRetriesWithTheCauseOfItsIndex() {
        rmq.defineTopic("poison", TopicType.FIXED_TIME, 1);
        rmq.producer().sendFixedTime("poison", "good-1", Instant.now());
        rmq.producer().sendFixedTime("poison", "poison", Instant.now());
        rmq.producer().sendFixedTime("poison", "good-2", Instant.now());
        List<Batch> batches = new CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.rmq()) {
            start(rmq, "poison", settings(10), 1, (payloads, deliveries) -> {
                recording(batches).handle(payloads, deliveries);
                int at = payloads.indexOf("poison");
                if (at >= 0) {
                    throw new RmqBatchFailure("one failed", Map.of(at, new IllegalArgumentException("cannot parse "
                            + payloads.get(at))));
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("poison") == 1);
            awaitSettled("poison");
            assertThat(log.messages()).anyMatch(m -> m.contains("failed for the last time"));
        }
        assertThat(rmq.admin().deadMessages("poison", 0, 10)).singleElement().satisfies(dead -> {
            assertThat(dead.bodyAsString()).isEqualTo("poison");
            assertThat(dead.attempts()).isEqualTo(4);
            assertThat(dead.lastError()).isEqualTo("java.lang.IllegalArgumentException: cannot parse poison");
        });
        Map<String, List<Integer>> attempts = attemptsByPayload(batches);
        assertThat(attempts.get("good-1")).containsExactly(1);
        assertThat(attempts.get("good-2")).containsExactly(1);
        assertThat(attempts.get("poison")).containsExactly(1, 2, 3, 4);
    }

    @Test
    void anUnreadableBodyIsDeadAtOnceAndTheOthersStillReachTheListener() {
        rmq.defineTopic("typed", TopicType.FIXED_TIME, 1);
        rmq.producer().sendFixedTime("typed", new Order(1), Instant.now());
        rmq.producer().sendFixedTime("typed", "not json", Instant.now());
        rmq.producer().sendFixedTime("typed", new Order(2), Instant.now());
        List<List<Order>> batches = new CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.rmq()) {
            ListenerContainer container = rmq.batchContainer("typed", settings(10), Order.class,
                    (BatchMessageHandler<Order>) (orders, deliveries) -> batches.add(List.copyOf(orders)),
                    new ContainerOptions("typed", 1, Duration.ofSeconds(1), Duration.ofSeconds(10), null));
            containers.add(container);
            container.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("typed") == 1);
            awaitSettled("typed");
            assertThat(log.messages()).singleElement().asString().contains("unreadable message");
        }
        assertThat(batches.stream().flatMap(List::stream).toList()).containsExactlyInAnyOrder(new Order(1),
                new Order(2));
        assertThat(rmq.admin().deadMessages("typed", 0, 10)).singleElement().satisfies(dead -> {
            assertThat(dead.attempts()).isEqualTo(1);
            assertThat(dead.lastError()).startsWith("unreadable message: cannot convert body to");
        });
    }

    @Test
    void aStopWhileABatchRunsWaitsForItKeepsItsLeasesAndLosesNothing() throws Exception {
        rmq.defineTopic("slow", TopicType.FIXED_TIME, 1);
        send("slow", 30);
        // a short lease: the running batch outlives it several times over, so only its extension keeps it
        ConsumerSettings settings = new ConsumerSettings(5, Duration.ofMillis(600),
                new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));
        List<Batch> batches = new CopyOnWriteArrayList<>();
        CountDownLatch running = new CountDownLatch(1);
        ListenerContainer container = start(rmq, "slow", settings, 1, (payloads, deliveries) -> {
            recording(batches).handle(payloads, deliveries);
            running.countDown();
            Thread.sleep(2500);
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
        container.stop();
        List<String> first = batches.get(0).payloads();
        assertThat(batches).as("nothing started after the stop").hasSize(1);
        var stats = rmq.admin().stats("slow");
        assertThat(stats.inFlight()).as("the running batch was acked, the queued ones given back").isZero();
        assertThat(stats.waiting()).isEqualTo(30 - first.size());
        assertThat(container.handedBackOnStop()).as("queued batches given back").isBetween(0, 30 - first.size());
        assertThat(container.abandonedOnStop()).isZero();

        // the rest is handled by the next start; what the first batch held is never seen again
        List<Batch> after = new CopyOnWriteArrayList<>();
        start(rmq, "slow", settings(10), 2, recording(after));
        await().atMost(Duration.ofSeconds(30)).until(() -> handledCount(after) == 30 - first.size());
        awaitSettled("slow");
        List<String> all = new ArrayList<>(first);
        after.forEach(b -> all.addAll(b.payloads()));
        assertThat(all).hasSize(30).doesNotHaveDuplicates();
        assertThat(after).allSatisfy(b -> assertThat(b.attempts()).as("given back without an attempt").containsOnly(1));
    }

    /**
     * Random outcomes (success, an exception, an RmqBatchFailure of a random subset), random handler times, several
     * handler threads, and a stop midway: every message ends handled successfully exactly once, nothing stays in
     * flight, nothing is counted outstanding after the stop.
     */
    @Test
    void randomOutcomesAndAStopMidwaySettleEveryMessageOnceAndLoseNothing() throws Exception {
        rmq.defineTopic("random", TopicType.FIXED_TIME, 8);
        send("random", 300);
        ConsumerSettings settings = new ConsumerSettings(7, Duration.ofSeconds(5),
                new RetryPolicy(100, BackoffPolicy.fixed(Duration.ofMillis(10))));
        Map<String, AtomicInteger> succeeded = new ConcurrentHashMap<>();
        BatchMessageHandler<String> handler = (payloads, deliveries) -> {
            java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
            Thread.sleep(random.nextInt(15));
            int kind = random.nextInt(4);
            if (kind == 0) {
                throw new IllegalStateException("all of them");
            }
            List<Integer> failed = new ArrayList<>();
            for (int i = 0; i < payloads.size(); i++) {
                if (kind == 1 && random.nextBoolean()) {
                    failed.add(i);
                }
                else {
                    succeeded.computeIfAbsent(payloads.get(i), p -> new AtomicInteger()).incrementAndGet();
                }
            }
            if (!failed.isEmpty()) {
                throw new RmqBatchFailure("some", null, failed.stream().mapToInt(Integer::intValue).toArray());
            }
        };
        try (LogCapture ignored = LogCapture.rmq()) {
            ListenerContainer first = start(rmq, "random", settings, 3, handler);
            await().atMost(Duration.ofSeconds(30)).until(() -> succeeded.size() >= 100);
            first.stop();
            assertThat(((io.rmq.container.internal.RmqListenerContainer) first).outstanding()).isZero();
            assertThat(first.abandonedOnStop()).isZero();
            assertThat(rmq.admin().stats("random").inFlight()).as("nothing left leased by the stop").isZero();
            start(rmq, "random", settings, 3, handler);
            await().atMost(Duration.ofSeconds(60)).until(() -> succeeded.size() == 300);
            awaitSettled("random");
        }
        assertThat(succeeded.values()).allSatisfy(count -> assertThat(count).hasValue(1));
        assertThat(rmq.admin().deadCount("random")).isZero();
    }

    /**
     * Instrumentation is per message: one rmq.process observation per message of a batch, opened in order and closed
     * innermost first (the test registry checks the scopes), the failed one with its error.
     */
    @Test
    void everyMessageOfABatchIsObservedOnItsOwn() {
        io.micrometer.observation.tck.TestObservationRegistry registry =
                io.micrometer.observation.tck.TestObservationRegistry.create();
        Rmq observed = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withInstrumentation(new io.rmq.micrometer.observation.ObservationInstrumentation(registry)));
        try (LogCapture ignored = LogCapture.rmq()) {
            observed.defineTopic("observed", TopicType.FIXED_TIME, 1);
            send("observed", 6);
            List<Batch> batches = new CopyOnWriteArrayList<>();
            List<Boolean> inScope = new CopyOnWriteArrayList<>();
            start(observed, "observed", settings(10), 1, (payloads, deliveries) -> {
                recording(batches).handle(payloads, deliveries);
                inScope.add(registry.getCurrentObservation() != null);
                if (deliveries.get(0).attempt() == 1) {
                    throw new RmqBatchFailure("first failed", new IllegalStateException("first"), 0);
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> handledCount(batches) >= 7);
            awaitSettled("observed");
            containers.forEach(ListenerContainer::stop);
            assertThat(inScope).containsOnly(true);
            io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat(registry)
                    .hasNumberOfObservationsWithNameEqualTo("rmq.process", handledCount(batches))
                    .forAllObservationsWithNameEqualTo("rmq.process", observation -> observation
                            .hasLowCardinalityKeyValue("messaging.destination.name", "observed"))
                    .hasAnObservation(observation -> observation.hasError()
                            .hasLowCardinalityKeyValue("error.type", "IllegalStateException"));
        }
        finally {
            observed.close();
        }
    }

    @Test
    void aBatchListenerCannotBeOrderly() {
        rmq.defineTopic("ordered", TopicType.FIXED_TIME, 2);
        assertThatThrownBy(() -> rmq.batchContainer("ordered", settings(10), String.class,
                (BatchMessageHandler<String>) (p, d) -> {
                }, ContainerOptions.of("orderedBatch", 1).withMode(ConsumeMode.ORDERLY)))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("batch listener 'orderedBatch' cannot be ORDERLY")
                .hasMessageContaining("one message after another");
        // nothing was registered: the topic can still be consumed CONCURRENT
        rmq.container("ordered", settings(10), String.class, (String p, Delivery d) -> {
        }, ContainerOptions.of("plain", 1));
    }

    private static long number(String payload) {
        return Long.parseLong(payload.substring(payload.indexOf('-') + 1));
    }

    private static int handledCount(List<Batch> batches) {
        return batches.stream().mapToInt(b -> b.payloads().size()).sum();
    }

    private static Map<String, List<Integer>> attemptsByPayload(List<Batch> batches) {
        Map<String, List<Integer>> attempts = new java.util.TreeMap<>();
        for (Batch batch : batches) {
            for (int i = 0; i < batch.payloads().size(); i++) {
                attempts.computeIfAbsent(batch.payloads().get(i), p -> new ArrayList<>()).add(batch.attempts().get(i));
            }
        }
        return attempts;
    }
}
