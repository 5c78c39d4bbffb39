package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotClaims;
import io.rmq.consumer.RmqConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The engine reports its work to {@link RmqOptions#instrumentation()}: every event arrives, from the producer, both
 * containers and the ORDERLY ownership, with the values the contract promises.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class InstrumentationTest extends EngineTestSupport {

    private final Recorder recorder = new Recorder();
    private Rmq engine;
    private ListenerContainer container;

    InstrumentationTest(RedisTopology topology) {
        super(topology);
    }

    @BeforeEach
    void openInstrumentedEngine() {
        engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix).withInstrumentation(recorder));
    }

    @AfterEach
    void closeInstrumentedEngine() {
        if (container != null) {
            container.stop();
        }
        engine.close();
    }

    @Test
    void aSendReportsItsStartItsRedisCallAndWhetherItWasAddedOrMerged() {
        engine.defineTopic("merge", TopicType.RANGE_MERGE, 4);
        engine.defineTopic("prio", TopicType.PRIORITY, 4);
        engine.producer().sendRangeMerge("merge", "same", Duration.ofSeconds(30));
        engine.producer().sendRangeMerge("merge", "same", Duration.ofSeconds(30));
        // a batch over two topics: one scope per topic, each with its own count; one duplicate merges
        engine.producer().sendBatch(List.of(OutgoingMessage.priority("prio", "a", 1),
                OutgoingMessage.priority("prio", "b", 2), OutgoingMessage.priority("prio", "a", 3),
                OutgoingMessage.rangeMerge("merge", "other", Duration.ofSeconds(30))));

        await().atMost(Duration.ofSeconds(10)).until(() -> recorder.of("finished").size() == 4);
        assertThat(recorder.of("sendStarted")).containsExactly("sendStarted merge 1", "sendStarted merge 1",
                "sendStarted prio 3", "sendStarted merge 1");
        assertThat(recorder.of("finished")).containsExactlyInAnyOrder("finished merge 1 0 null",
                "finished merge 0 1 null", "finished prio 2 1 null", "finished merge 1 0 null");
        assertThat(recorder.of("operation send")).isNotEmpty()
                .allMatch(e -> e.endsWith(" null"))
                .allMatch(e -> e.startsWith("operation send merge") || e.startsWith("operation send prio"));

        // a send refused before Redis: its scope ends with the error, no Redis operation is reported
        int operations = recorder.of("operation send").size();
        assertThatThrownBy(() -> engine.producer().sendPriority("merge", "wrong type", 1))
                .isInstanceOf(RmqInvalidArgumentException.class);
        assertThat(recorder.of("finished")).last().isEqualTo("finished merge 0 0 RmqInvalidArgumentException");
        assertThat(recorder.of("operation send")).hasSize(operations);
    }

    @Test
    void aListenerReportsPopsHandlersAndEverySettlement() throws Exception {
        engine.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        RmqConsumer settler = engine.consumer("jobs", FAST);
        Instant due = Instant.now().minusSeconds(2);
        engine.producer().sendFixedTime("jobs", "ok", due);
        engine.producer().sendFixedTime("jobs", "poison", due);
        engine.producer().sendFixedTime("jobs", "fenced", due);
        try (LogCapture log = LogCapture.rmq()) {
            container = engine.container("jobs", FAST, String.class, (String body, Delivery delivery) -> {
                switch (body) {
                    case "poison" -> throw new IllegalStateException("poison");
                    case "fenced" -> settler.ack(delivery); // settled elsewhere: this listener's ack is refused
                    default -> {
                    }
                }
            }, ContainerOptions.of("instrumented", 2));
            container.start();
            // poison: 3 retries, then dead
            await().atMost(Duration.ofSeconds(30)).until(() -> recorder.of("settled DEAD").size() == 1
                    && recorder.of("settled ACK").size() == 1 && recorder.of("settled FENCED").size() == 1);
            assertThat(log.messages()).anyMatch(m -> m.contains("moved to the dead queue"));
        }
        assertThat(recorder.of("settled RETRY")).hasSize(3);
        assertThat(recorder.of("handleStarted")).hasSize(6)
                .allMatch(e -> e.startsWith("handleStarted instrumented jobs "));
        // the first delivery of each was due 2 s before the test sent it: late by at least that, and not by minutes
        for (String body : List.of("ok", "poison", "fenced")) {
            long lateness = recorder.firstLateness(body);
            assertThat(lateness).as(body).isBetween(1_900L, 60_000L);
        }
        assertThat(recorder.of("handlerReturned")).filteredOn(e -> e.endsWith("IllegalStateException")).hasSize(4);
        assertThat(recorder.of("handlerReturned")).filteredOn(e -> e.endsWith("null")).hasSize(2);
        assertThat(recorder.of("popped instrumented jobs")).isNotEmpty();
        assertThat(recorder.popped("instrumented")).isEqualTo(6);
        assertThat(recorder.of("operation receive jobs")).isNotEmpty().allMatch(e -> e.endsWith(" null"));
        assertThat(recorder.of("operation ack jobs")).isNotEmpty();
        assertThat(recorder.of("operation nack jobs")).hasSizeGreaterThanOrEqualTo(4);
        assertThat(recorder.of("WRONG")).isEmpty();
        assertThat(recorder.of("popFailed")).isEmpty();
        assertThat(recorder.of("watchdogRepaired")).isEmpty();
    }

    @Test
    void deliveriesFetchedButNotStartedAreReportedAsHandedBackWhenTheListenerStops() throws Exception {
        engine.defineTopic("backlog", TopicType.PRIORITY, 2);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        container = engine.container("backlog", FAST, String.class, (String body, Delivery delivery) -> {
            started.countDown();
            release.await(10, TimeUnit.SECONDS);
        }, ContainerOptions.of("stopping", 1));
        container.start();
        engine.producer().sendPriority("backlog", "first", 100);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        // the only handler thread is busy: these wait in the container's queue
        for (int i = 0; i < 5; i++) {
            engine.producer().sendPriority("backlog", "m" + i, i);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> recorder.popped("stopping") == 6);
        Thread stopper = new Thread(container::stop);
        stopper.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> !recorder.of("handedBack").isEmpty());
        release.countDown();
        stopper.join(20_000);
        assertThat(recorder.of("handedBack")).containsExactly("handedBack stopping backlog 5");
        // PRIORITY topics have no due time
        assertThat(recorder.of("handleStarted")).hasSize(1).allMatch(e -> e.endsWith(" " + Long.MIN_VALUE));
        assertThat(recorder.of("settled ACK")).hasSize(1);
    }

    @Test
    void anInstrumentationThatThrowsIsLoggedAndTheMessagesAreStillHandledAndAcknowledged() {
        RmqInstrumentation broken = new RmqInstrumentation() {
            @Override
            public SendScope sendStarted(String topic, int messages) {
                return new SendScope() {
                    @Override
                    public void finished(int added, int merged, Throwable error) {
                        throw new IllegalStateException("broken finished");
                    }
                };
            }

            @Override
            public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
                return new HandleScope() {
                    @Override
                    public void handlerReturned(Throwable error) {
                        throw new IllegalStateException("broken handlerReturned");
                    }

                    @Override
                    public void settled(Outcome outcome) {
                        throw new IllegalStateException("broken settled");
                    }
                };
            }
        };
        List<String> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (LogCapture log = LogCapture.of("io.rmq.observe");
                Rmq brokenEngine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix)
                        .withInstrumentation(broken))) {
            brokenEngine.defineTopic("sturdy", TopicType.PRIORITY, 2);
            for (int i = 0; i < 5; i++) {
                brokenEngine.producer().sendPriority("sturdy", "m" + i, i);
            }
            container = brokenEngine.container("sturdy", FAST, String.class,
                    (String body, Delivery delivery) -> handled.add(body), ContainerOptions.of("sturdy", 2));
            container.start();
            // every message handled once and acknowledged: nothing stays in flight to be redelivered
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() >= 5
                    && brokenEngine.admin().stats("sturdy").inFlight() == 0
                    && brokenEngine.admin().stats("sturdy").waiting() == 0);
            container.stop();
            container = null;
            assertThat(handled).containsExactlyInAnyOrder("m0", "m1", "m2", "m3", "m4");
            assertThat(log.messages()).anyMatch(m -> m.contains("failed in finished"))
                    .anyMatch(m -> m.contains("failed in handlerReturned"))
                    .anyMatch(m -> m.contains("failed in settled"));
        }
    }

    @Test
    void anOrderlyListenerReportsItsStepsHandlersSettlementsAndTakeovers() throws Exception {
        engine.defineTopic("ordered", TopicType.FIXED_TIME, 2);
        RmqConsumer ghost = engine.consumer("ordered", FAST);
        // an instance that died holding slot 0: this listener takes it over once the ghost's ownership runs out
        assertThat(SlotClaims.claim(ghost, 0, "ghost", 0, 1000, 0).join().held()).isTrue();
        Instant due = Instant.now().minusSeconds(2);
        engine.producer().sendFixedTime("ordered", "ok-0", due);
        engine.producer().sendFixedTime("ordered", "ok-1", due);
        engine.producer().sendFixedTime("ordered", "fail-once", due);
        boolean[] failed = {false};
        try (LogCapture log = LogCapture.rmq()) {
            container = engine.container("ordered", FAST, String.class, (String body, Delivery delivery) -> {
                if (body.equals("fail-once") && !failed[0]) {
                    failed[0] = true;
                    throw new IllegalStateException("once");
                }
            }, ContainerOptions.of("orderly", 2).withMode(ConsumeMode.ORDERLY)
                    .withOwnershipTimeout(Duration.ofMillis(1000)));
            container.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> recorder.of("settled ACK").size() == 3
                    && recorder.of("settled RETRY").size() == 1);
            await().atMost(Duration.ofSeconds(10)).until(() -> !recorder.of("slotTakenOver").isEmpty());
            assertThat(log.messages()).anyMatch(m -> m.contains("retrying after its backoff"));
        }
        assertThat(recorder.of("slotTakenOver")).containsExactly("slotTakenOver orderly ordered 0");
        assertThat(recorder.of("handleStarted")).hasSize(4).allMatch(e -> e.startsWith("handleStarted orderly ordered"));
        assertThat(recorder.firstLateness("ok-0")).isBetween(1_900L, 60_000L);
        assertThat(recorder.of("handlerReturned")).filteredOn(e -> e.endsWith("IllegalStateException")).hasSize(1);
        // each delivery counted once: a step hands out again what the last one took and did not start (behind the
        // failure), and that is not counted again; the retry of the failed message is a delivery of its own
        assertThat(recorder.popped("orderly")).isEqualTo(4);
        assertThat(recorder.of("operation receive ordered")).isNotEmpty().allMatch(e -> e.endsWith(" null"));
    }

    /** Records every event as a line of text; handle scopes carry their delivery's body. */
    static final class Recorder implements RmqInstrumentation {

        final ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();
        final Map<String, Long> lateness = new java.util.concurrent.ConcurrentHashMap<>();

        List<String> of(String prefix) {
            return events.stream().filter(e -> e.startsWith(prefix)).toList();
        }

        long firstLateness(String body) {
            return lateness.get(body);
        }

        int popped(String listenerId) {
            return of("popped " + listenerId).stream().mapToInt(e -> Integer.parseInt(e.split(" ")[4])).sum();
        }

        private static String name(Throwable error) {
            return error == null ? "null" : error.getClass().getSimpleName();
        }

        @Override
        public SendScope sendStarted(String topic, int messages) {
            events.add("sendStarted " + topic + " " + messages);
            return new SendScope() {
                @Override
                public void finished(int added, int merged, Throwable error) {
                    events.add("finished " + topic + " " + added + " " + merged + " " + name(error));
                }
            };
        }

        @Override
        public void popped(String listenerId, String topic, int slot, int messages, long nanos) {
            if (messages > 0) {
                events.add("popped " + listenerId + " " + topic + " " + slot + " " + messages);
            }
            if (nanos <= 0) {
                events.add("WRONG nanos " + nanos);
            }
        }

        @Override
        public void popFailed(String listenerId, String topic, int slot, Throwable error) {
            events.add("popFailed " + listenerId + " " + topic + " " + slot + " " + name(error));
        }

        @Override
        public HandleScope handleStarted(String listenerId, Delivery delivery, long latenessMillis) {
            String body = delivery.bodyAsString();
            events.add("handleStarted " + listenerId + " " + delivery.topic() + " " + body + " " + latenessMillis);
            lateness.putIfAbsent(body, latenessMillis);
            Thread handlerThread = Thread.currentThread();
            return new HandleScope() {
                @Override
                public void handlerReturned(Throwable error) {
                    if (Thread.currentThread() != handlerThread) {
                        events.add("WRONG THREAD for handlerReturned of " + body);
                    }
                    events.add("handlerReturned " + body + " " + name(error));
                }

                @Override
                public void settled(Outcome outcome) {
                    events.add("settled " + outcome + " " + body);
                }
            };
        }

        @Override
        public void handedBack(String listenerId, String topic, int messages) {
            events.add("handedBack " + listenerId + " " + topic + " " + messages);
        }

        @Override
        public void operation(String operation, String topic, long nanos, Throwable error) {
            events.add("operation " + operation + " " + topic + " " + name(error));
        }

        @Override
        public void rateLimitWaited(String listenerId, String topic, long nanos) {
            events.add("rateLimitWaited " + listenerId + " " + topic);
        }

        @Override
        public void watchdogRepaired(String listenerId, String topic) {
            events.add("watchdogRepaired " + listenerId + " " + topic);
        }

        @Override
        public void slotTakenOver(String listenerId, String topic, int slot) {
            events.add("slotTakenOver " + listenerId + " " + topic + " " + slot);
        }
    }
}
