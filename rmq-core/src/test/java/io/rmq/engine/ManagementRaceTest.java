package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.admin.CancelResult;
import io.rmq.admin.MessageRef;
import io.rmq.admin.RescheduleResult;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Management calls racing consumers that pop, fail and retry the same messages, with records of what each side saw:
 * a cancelled message is never handed out after the cancel returned (an in-flight one at most finishes the delivery
 * it is in), nothing is lost, and a reschedule never loses a message that is being retried.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ManagementRaceTest extends EngineTestSupport {

    ManagementRaceTest(RedisTopology topology) {
        super(topology);
    }

    /** Many retries, 10-20 ms apart: messages are mostly failing, backing off or in flight while the canceller runs. */
    private static final ConsumerSettings FLAKY = new ConsumerSettings(20, Duration.ofSeconds(5),
            new RetryPolicy(1000, new BackoffPolicy(Duration.ofMillis(20), 1.0, Duration.ofMillis(20), 0.5)));

    record Start(int attempt, long nanos) {
    }

    @RepeatedTest(2)
    void cancelRacingPopsAndRetriesNeverHandsACancelledMessageOutAgain() {
        for (TopicType type : List.of(TopicType.FIXED_TIME, TopicType.PRIORITY)) {
            String topic = "race-" + type.name().toLowerCase();
            rmq.defineTopic(topic, type, 8);
            int count = 300;
            List<String> bodies = new ArrayList<>();
            List<OutgoingMessage> batch = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String body = "m-" + i;
                bodies.add(body);
                batch.add(type == TopicType.PRIORITY ? OutgoingMessage.priority(topic, body, i % 7)
                        : OutgoingMessage.fixedTime(topic, body, Instant.now()));
            }
            rmq.producer().sendBatch(batch);

            Map<String, List<Start>> starts = new ConcurrentHashMap<>();
            Set<String> succeeded = ConcurrentHashMap.newKeySet();
            AtomicInteger handled = new AtomicInteger();
            Map<String, CancelResult> results = new ConcurrentHashMap<>();
            Map<String, Long> cancelReturned = new ConcurrentHashMap<>();
            try (LogCapture ignored = LogCapture.rmq()) {
                ListenerContainer container = rmq.container(topic, FLAKY, String.class, (String body, Delivery d) -> {
                    starts.computeIfAbsent(body, b -> new CopyOnWriteArrayList<>())
                            .add(new Start(d.attempt(), System.nanoTime()));
                    handled.incrementAndGet();
                    // each message fails 5 to 40 times: most are still retrying while the canceller runs
                    if (d.attempt() < 5 + Math.floorMod(body.hashCode(), 36)) {
                        throw new IllegalStateException("fails on purpose");
                    }
                    succeeded.add(body);
                }, ContainerOptions.of(topic, 4));
                container.start();
                try {
                    await().atMost(Duration.ofSeconds(30)).until(() -> handled.get() > 50);
                    List<String> order = new ArrayList<>(bodies);
                    Collections.shuffle(order);
                    for (String body : order) {
                        results.put(body, rmq.admin().cancel(MessageRef.body(topic, body)));
                        cancelReturned.put(body, System.nanoTime());
                    }
                    await().atMost(Duration.ofSeconds(60)).until(() -> {
                        var stats = rmq.admin().stats(topic);
                        return stats.pending() == 0;
                    });
                }
                finally {
                    container.stop();
                }
            }
            assertThat(rmq.admin().deadCount(topic)).as(topic + " dead").isZero();
            int cancelled = 0;
            int inFlight = 0;
            for (String body : bodies) {
                CancelResult result = results.get(body);
                long returned = cancelReturned.get(body);
                List<Start> after = starts.getOrDefault(body, List.of()).stream().filter(s -> s.nanos() > returned)
                        .toList();
                if (result.cancelled() && !result.inFlight()) {
                    cancelled++;
                    assertThat(after).as(topic + ": " + body + " was cancelled while waiting, yet delivered after")
                            .isEmpty();
                }
                else if (result.inFlight()) {
                    inFlight++;
                    // the delivery under way may still reach its handler (popped before the cancel); nothing later
                    assertThat(after.stream().map(Start::attempt).distinct().count())
                            .as(topic + ": " + body + " deliveries started after its cancel").isLessThanOrEqualTo(1);
                }
                else {
                    assertThat(result.found()).as(topic + ": " + body + " found nowhere").isFalse();
                    assertThat(succeeded).as(topic + ": " + body + " was not found, so it must have succeeded")
                            .contains(body);
                }
            }
            System.out.printf("[race] %s %s: of %d cancels %d removed a waiting or retrying message, %d found it in"
                    + " flight, %d found it handled already%n", topology, topic, count, cancelled, inFlight,
                    count - cancelled - inFlight);
            assertThat(cancelled + inFlight).as(topic + ": the race did cancel messages").isPositive();
            var stats = rmq.admin().stats(topic);
            assertThat(stats.pending() + stats.dead()).isZero();
        }
    }

    @RepeatedTest(2)
    void rescheduleOfAMessageBeingRetriedNeverLosesIt() {
        rmq.defineTopic("retried", TopicType.FIXED_TIME, 4);
        rmq.defineTopic("ranked", TopicType.PRIORITY, 4);
        for (String topic : List.of("retried", "ranked")) {
            boolean priority = topic.equals("ranked");
            int count = 40;
            for (int i = 0; i < count; i++) {
                if (priority) {
                    rmq.producer().sendPriority(topic, "r-" + i, 1);
                }
                else {
                    rmq.producer().sendFixedTime(topic, "r-" + i, Instant.now());
                }
            }
            Map<String, List<Integer>> attempts = new ConcurrentHashMap<>();
            Set<String> done = ConcurrentHashMap.newKeySet();
            AtomicBoolean racing = new AtomicBoolean(true);
            Map<RescheduleResult, AtomicInteger> outcomes = new ConcurrentHashMap<>();
            try (LogCapture ignored = LogCapture.rmq()) {
                ListenerContainer container = rmq.container(topic, FLAKY, String.class, (String body, Delivery d) -> {
                    attempts.computeIfAbsent(body, b -> new CopyOnWriteArrayList<>()).add(d.attempt());
                    if (d.attempt() < 6) {
                        throw new IllegalStateException("fails on purpose until attempt 6");
                    }
                    done.add(body);
                }, ContainerOptions.of(topic, 3));
                container.start();
                Thread rescheduler = new Thread(() -> {
                    while (racing.get()) {
                        String body = "r-" + ThreadLocalRandom.current().nextInt(count);
                        RescheduleResult result = priority
                                ? rmq.admin().reprioritize(MessageRef.body(topic, body),
                                        ThreadLocalRandom.current().nextInt(10))
                                : rmq.admin().reschedule(MessageRef.body(topic, body),
                                        Instant.now().plusMillis(ThreadLocalRandom.current().nextInt(-50, 30)));
                        outcomes.computeIfAbsent(result, r -> new AtomicInteger()).incrementAndGet();
                    }
                });
                rescheduler.start();
                try {
                    await().atMost(Duration.ofSeconds(90)).until(() -> done.size() == count);
                }
                finally {
                    racing.set(false);
                    container.stop();
                }
            }
            assertThat(outcomes.getOrDefault(RescheduleResult.RESCHEDULED, new AtomicInteger()).get())
                    .as(topic + ": reschedules that hit a retrying message").isPositive();
            assertThat(outcomes).doesNotContainKey(RescheduleResult.DEAD);
            attempts.forEach((body, seen) -> assertThat(seen).as(topic + ": " + body + " attempts, in order, kept"
                    + " through reschedules").startsWith(1, 2, 3, 4, 5, 6).isSorted());
            var stats = rmq.admin().stats(topic);
            assertThat(stats.pending() + stats.dead()).isZero();
        }
    }

    @RepeatedTest(2)
    void cancelRacingTheLastFailureEitherDropsTheMessageOrFindsItDead() {
        rmq.defineTopic("poison", TopicType.FIXED_TIME, 2);
        ConsumerSettings dieAtOnce = new ConsumerSettings(20, Duration.ofSeconds(5),
                new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));
        int count = 100;
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            bodies.add("p-" + i);
        }
        Map<String, CancelResult> results = new ConcurrentHashMap<>();
        try (LogCapture ignored = LogCapture.rmq()) {
            ListenerContainer container = rmq.container("poison", dieAtOnce, String.class, (String body, Delivery d) -> {
                Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                throw new IllegalStateException("poison");
            }, ContainerOptions.of("poison", 2));
            container.start();
            try {
                for (String body : bodies) {
                    rmq.producer().sendFixedTime("poison", body, Instant.now());
                    // cancel at a random moment: before the pop, during the delivery, or after its death
                    ManagementTest.sleep(ThreadLocalRandom.current().nextInt(4));
                    results.put(body, rmq.admin().cancel(MessageRef.body("poison", body)));
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    var stats = rmq.admin().stats("poison");
                    return stats.pending() == 0;
                });
            }
            finally {
                container.stop();
            }
        }
        int dead = 0;
        for (String body : bodies) {
            CancelResult result = results.get(body);
            boolean isDead = rmq.admin().find(MessageRef.body("poison", body)).isDead();
            if (result.cancelled() || result.inFlight()) {
                assertThat(isDead).as(body + " was cancelled (" + result + "), so it must not die").isFalse();
            }
            else {
                assertThat(result.dead()).as(body + ": found neither waiting nor in flight: it had died").isTrue();
                assertThat(isDead).as(body + " stays in the dead queue").isTrue();
                dead++;
            }
        }
        assertThat(rmq.admin().deadCount("poison")).isEqualTo(dead);
    }
}
