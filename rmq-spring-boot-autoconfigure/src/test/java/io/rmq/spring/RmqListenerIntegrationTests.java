package io.rmq.spring;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.rmq.Rmq;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageRef;
import io.rmq.container.ListenerContainer;
import io.rmq.spring.ListenerTestApplication.Listeners;
import io.rmq.spring.ListenerTestApplication.Price;
import io.rmq.spring.listener.RmqListenerEndpointRegistry;
import io.rmq.spring.listener.RmqListenerState;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * End to end through Spring Boot: {@code @RmqListener} methods on a real Redis, standalone and cluster (the
 * subclasses {@link RmqListenerStandaloneTest} and {@link RmqListenerClusterTest}; top-level classes, since
 * Surefire skips nested ones).
 */
@ExtendWith(RedisServersExtension.class)
// closed after each class: a cached context would outlive the Redis servers of its topology and log their loss
@DirtiesContext
@SpringBootTest(classes = ListenerTestApplication.class, properties = {"it.topics.range=it-range",
        "rmq.topics.it-fixed.type=FIXED_TIME", "rmq.topics.it-fixed.slot-amount=8",
        "rmq.topics.it-waiting.type=FIXED_TIME", "rmq.topics.it-waiting.slot-amount=4",
        "rmq.listeners.ordered.mode=ORDERLY", "rmq.coordination.ownership-timeout=2s"})
abstract class RmqListenerIntegrationTests {

    @Autowired
    RmqTemplate template;

    @Autowired
    Listeners listeners;

    @Autowired
    RmqListenerEndpointRegistry registry;

    @Autowired
    Rmq rmq;

    static void redis(DynamicPropertyRegistry registry, RedisTopology topology) {
        topology.springProperties("it-" + topology.name().toLowerCase() + "-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    @Test
    void anOrderlyListenerHandlesEachAccountInOrderThroughAFailure() {
        assertThat(registry.getListenerContainer("ordered").mode()).isEqualTo(io.rmq.core.ConsumeMode.ORDERLY);
        Instant base = Instant.now().minusSeconds(60);
        try (LogCapture log = LogCapture.rmq().expecting("fails on purpose")) {
            for (int seq = 0; seq < 5; seq++) {
                for (int account = 0; account < 6; account++) {
                    template.send(io.rmq.producer.OutgoingMessage.fixedTime("it-ordered",
                            "acct-" + account + ":" + seq, base.plusMillis(seq)).withSlotBasis("acct-" + account));
                }
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> listeners.ordered.size() == 36);
            await().atMost(Duration.ofSeconds(30)).until(() -> log.warnings().size() >= 6);
            assertThat(log.warnings()).as("one line per failure caused").hasSize(6)
                    .allSatisfy(line -> assertThat(line).contains("retrying"));
        }
        assertThat(listeners.overlaps).isEmpty();
        for (int account = 0; account < 6; account++) {
            String prefix = "acct-" + account + ":";
            assertThat(listeners.ordered.stream().filter(e -> e.startsWith(prefix)).toList()).containsExactly(
                    prefix + "0#1", prefix + "1#1", prefix + "2#1", prefix + "2#2", prefix + "3#1", prefix + "4#1");
        }
    }

    @Test
    void aRateLimitedListenerHandlesNoMoreThanItsLimit() {
        for (int i = 0; i < 150; i++) {
            template.sendRangeMerge("it-limited", "m-" + i, Duration.ofMillis(1));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> listeners.limited.size() == 150);
        List<Long> times = listeners.limited.stream().sorted().toList();
        // 150 at 50/s with at most 5 in the bucket at the start: about 2.9 s
        assertThat(times.get(149) - times.get(0)).isGreaterThanOrEqualTo(2500);
    }

    @Test
    void rangeMergeReachesTheMethodOnceWithTheConvertedPayload() throws Exception {
        Price price = new Price(7, "EUR", 1999);
        int merged = 0;
        for (int i = 0; i < 20; i++) {
            // a range longer than a loaded machine takes for the 20 sends: all of them fall into the first one's
            merged += template.sendRangeMerge("it-range", price, Duration.ofSeconds(3)).merged() ? 1 : 0;
        }
        assertThat(merged).isEqualTo(19);
        assertThat(listeners.ranges.poll(30, TimeUnit.SECONDS)).isEqualTo(price);
        assertThat(listeners.ranges.poll(500, TimeUnit.MILLISECONDS)).as("merged duplicates are not delivered").isNull();
    }

    @Test
    void priorityListenerGetsGenericPayloadAndDeliveryDetails() throws Exception {
        List<Price> prices = List.of(new Price(1, "EUR", 100), new Price(2, "USD", 200));
        template.sendPriority("it-priority", prices, 42);
        RmqMessage<List<Price>> message = listeners.priorities.poll(30, TimeUnit.SECONDS);
        assertThat(message).isNotNull();
        assertThat(message.payload()).isEqualTo(prices);
        assertThat(message.payload().get(0)).isInstanceOf(Price.class);
        assertThat(message.topic()).isEqualTo("it-priority");
        assertThat(message.attempt()).isEqualTo(1);
        assertThat(message.score()).isEqualTo(42.0);
        assertThat(message.slot()).isBetween(0, 15);
    }

    @Test
    void aListenerTakesThePayloadAndTheDeliveryAsSpringMessagingHeaders() throws Exception {
        Price price = new Price(11, "EUR", 1100);
        long sentAt = System.currentTimeMillis();
        template.sendPriority("it-headers", price, 7);
        ListenerTestApplication.Listeners.HeaderValues got = listeners.headerValues.poll(30, TimeUnit.SECONDS);
        assertThat(got).isNotNull();
        assertThat(got.price()).isEqualTo(price);
        assertThat(got.topic()).isEqualTo("it-headers");
        assertThat(got.slot()).isBetween(0, 3).isEqualTo(got.delivery().slot());
        assertThat(got.attempt()).isEqualTo(1);
        assertThat(got.maxRetries()).isEqualTo(3);
        assertThat(got.score()).as("the priority").isEqualTo(7);
        // Redis's clock against this host's: generous bounds
        assertThat(got.leaseDeadline()).isEqualTo(got.delivery().leaseDeadline()).isGreaterThan(sentAt - 60_000);
        assertThat(got.listenerId()).isEqualTo("headers");
    }

    @Test
    void aListenerTakesASpringMessageWithAGenericPayloadAndTheHeaders() throws Exception {
        List<Price> prices = List.of(new Price(1, "EUR", 100), new Price(2, "USD", 200));
        template.sendFixedTime("it-spring-message", prices, Instant.now());
        org.springframework.messaging.Message<List<Price>> message = listeners.springMessages.poll(30, TimeUnit.SECONDS);
        assertThat(message).isNotNull();
        assertThat(message.getPayload()).isEqualTo(prices);
        assertThat(message.getPayload().get(0)).isInstanceOf(Price.class);
        assertThat(message.getHeaders().get(RmqHeaders.TOPIC)).isEqualTo("it-spring-message");
        assertThat(message.getHeaders().get(RmqHeaders.ATTEMPT)).isEqualTo(1);
        assertThat(new String(message.getHeaders().get(RmqHeaders.BODY, byte[].class), StandardCharsets.UTF_8))
                .isEqualTo("[{\"cents\":100,\"currency\":\"EUR\",\"itemId\":1},"
                        + "{\"cents\":200,\"currency\":\"USD\",\"itemId\":2}]");
        assertThat(message.getHeaders().getId()).as("no random id per message").isNull();
    }

    @Test
    void aPayloadThatFailsValidationIsDeadAtOnceWithTheReason() throws Exception {
        Price invalid = new Price(5, "EUR", -1);
        Price valid = new Price(6, "EUR", 1);
        try (LogCapture log = LogCapture.rmq().expecting("cents must not be negative")) {
            template.sendFixedTime("it-valid", invalid, Instant.now());
            template.sendFixedTime("it-valid", valid, Instant.now());
            assertThat(listeners.validPrices.poll(30, TimeUnit.SECONDS)).isEqualTo(valid);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> template.admin().find(MessageRef.body("it-valid", invalid)).isDead()
                    && !log.warnings().isEmpty());
            assertThat(log.warnings()).singleElement().asString().contains("will not be retried");
        }
        DeadMessage dead = template.admin().deadMessages("it-valid", 0, 10).stream()
                .filter(m -> m.bodyAsString().contains("\"cents\":-1")).findFirst().orElseThrow();
        assertThat(dead.attempts()).as("not retried").isEqualTo(1);
        assertThat(dead.lastError()).startsWith("io.rmq.consumer.RmqNonRetryableException: cannot call the listener")
                .contains("cents must not be negative");
        assertThat(listeners.validPrices).isEmpty();
    }

    @Test
    void aMessageTheMethodCannotBeCalledWithIsDeadAtOnce() {
        // JSON null reads as no Price: the method's parameter cannot be resolved, now or on any retry
        try (LogCapture log = LogCapture.rmq().expecting("cannot call the listener")) {
            template.sendFixedTime("it-valid", "null", Instant.now());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> template.admin().find(MessageRef.body("it-valid", "null")).isDead()
                    && !log.warnings().isEmpty());
            assertThat(log.warnings()).singleElement().asString().contains("will not be retried");
        }
        assertThat(template.admin().find(MessageRef.body("it-valid", "null")).deadReason())
                .startsWith("io.rmq.consumer.RmqNonRetryableException: cannot call the listener with this message");
    }

    @Test
    void sendToSendsTheReturnValueWithThePriorityOfRmqReplyAndNothingForNull() throws Exception {
        template.sendFixedTime("it-reply-source", "none-1", Instant.now());
        template.sendFixedTime("it-reply-source", "a", Instant.now());
        RmqMessage<String> reply = listeners.priorityReplies.poll(30, TimeUnit.SECONDS);
        assertThat(reply).isNotNull();
        assertThat(reply.payload()).isEqualTo("re:a");
        assertThat(reply.score()).as("@RmqReply(priority)").isEqualTo(5.0);
        await().atMost(Duration.ofSeconds(30)).until(() -> listeners.replySources.contains("none-1")
                && template.admin().stats("it-reply-source").pending() == 0);
        assertThat(listeners.priorityReplies.poll(300, TimeUnit.MILLISECONDS)).as("null sends nothing").isNull();
        assertThat(template.admin().stats("it-reply-priority").pending()).isZero();
    }

    @Test
    void sendToARangeMergeTopicTakesTheTimeRangeSoEqualRepliesMerge() throws Exception {
        long sentAt = System.currentTimeMillis();
        template.sendPriority("it-reply-prices", new Price(8, "EUR", 100), 1);
        template.sendPriority("it-reply-prices", new Price(8, "EUR", 200), 1);
        RmqMessage<Price> reply = listeners.rangeReplies.poll(30, TimeUnit.SECONDS);
        assertThat(reply).isNotNull();
        assertThat(reply.payload()).isEqualTo(new Price(8, "EUR", 0));
        // due 2 s after the first reply (Redis's clock against this host's: a generous margin)
        assertThat((long) reply.score()).isGreaterThan(sentAt + 1000);
        assertThat(listeners.rangeReplies.poll(1, TimeUnit.SECONDS)).as("the equal replies merged").isNull();
    }

    @Test
    void sendToSendsAReturnedOutgoingMessageAsBuilt() throws Exception {
        Instant before = Instant.now();
        template.sendPriority("it-reply-outgoing", "x", 1);
        RmqMessage<String> reply = listeners.fixedReplies.poll(30, TimeUnit.SECONDS);
        assertThat(reply).isNotNull();
        assertThat(reply.payload()).isEqualTo("out:x");
        assertThat(reply.topic()).isEqualTo("it-reply-fixed");
        assertThat((long) reply.score()).as("its own fixed time, 5 s before it was sent")
                .isLessThan(before.toEpochMilli());
    }

    @Test
    void fixedTimeIsDeliveredAtItsTimeNotBeforeEvenWhenTheListenerIsIdle() throws Exception {
        Instant due = Instant.now().plusMillis(700);
        template.sendFixedTime("it-fixed", "close-order-" + due.toEpochMilli(), due);
        // The listener sleeps (max idle 30s); the send announces the new first message and wakes it for the due time.
        String got = listeners.fixed.poll(20, TimeUnit.SECONDS); // woken: sooner than the 30 s idle poll
        assertThat(got).isEqualTo("close-order-" + due.toEpochMilli());
        assertThat(listeners.fixedLateness.poll(30, TimeUnit.SECONDS)).as("lateness in ms, by the Redis clock").isGreaterThanOrEqualTo(-50L);
    }

    @Test
    void byteArrayListenerGetsTheBodyAsItIs() throws Exception {
        byte[] body = {0, 1, 2, (byte) 0xff, 'x'};
        template.sendPriority("it-bytes", body, 1);
        assertThat(listeners.bytes.poll(30, TimeUnit.SECONDS)).isEqualTo(body);
        template.sendPriority("it-bytes", "plain text", 1);
        assertThat(new String(listeners.bytes.poll(30, TimeUnit.SECONDS), StandardCharsets.UTF_8)).isEqualTo("plain text");
    }

    @Test
    void failingListenerRetriesWithBackoffThenTheMessageIsDeadWithTheError() {
        try (LogCapture log = LogCapture.rmq().expecting("cannot handle job-1")) {
            template.sendRangeMerge("it-failing", "job-1", Duration.ofMillis(1));
            await().atMost(Duration.ofSeconds(45)).until(() -> template.admin().deadCount("it-failing") == 1
                    && log.warnings().size() >= 3);
            assertThat(log.warnings()).hasSize(3).satisfies(lines -> {
                assertThat(lines.subList(0, 2)).allSatisfy(line -> assertThat(line).contains("retrying"));
                assertThat(lines.get(2)).contains("attempt 3", "failed for the last time; moved to the dead queue");
            });
        }
        assertThat(listeners.failingAttempts).containsExactly(1, 2, 3);
        long firstGap = TimeUnit.NANOSECONDS.toMillis(listeners.failingTimes.get(1) - listeners.failingTimes.get(0));
        long secondGap = TimeUnit.NANOSECONDS.toMillis(listeners.failingTimes.get(2) - listeners.failingTimes.get(1));
        assertThat(firstGap).as("first backoff 200ms").isGreaterThanOrEqualTo(190);
        assertThat(secondGap).as("second backoff 400ms").isGreaterThanOrEqualTo(390);
        DeadMessage dead = template.admin().deadMessages("it-failing", 0, 10).get(0);
        assertThat(dead.bodyAsString()).isEqualTo("job-1");
        assertThat(dead.attempts()).isEqualTo(3);
        assertThat(dead.lastError()).isEqualTo("java.lang.IllegalStateException: cannot handle job-1");
        assertThat(template.admin().stats("it-failing").pending()).isZero();
    }

    @Test
    void noRetryForSendsInvalidInputToTheDeadQueueAtOnceAndRetriesTheRest() {
        try (LogCapture log = LogCapture.rmq().expecting("not a valid order", "downstream unavailable")) {
            template.sendFixedTime("it-validating", "invalid-1", Instant.now());
            template.sendFixedTime("it-validating", "valid-1", Instant.now());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> template.admin().find(MessageRef.body("it-validating", "invalid-1")).isDead()
                    && listeners.validating.stream().anyMatch(m -> m.payload().equals("valid-1") && m.attempt() >= 2)
                    && log.warnings().stream().anyMatch(line -> line.contains("will not be retried")));
            assertThat(listeners.validating).filteredOn(m -> m.payload().equals("invalid-1")).singleElement()
                    .satisfies(m -> {
                        assertThat(m.attempt()).isEqualTo(1);
                        assertThat(m.maxRetries()).isEqualTo(5);
                        assertThat(m.lastAttempt()).isFalse();
                    });
            assertThat(template.admin().find(MessageRef.body("it-validating", "invalid-1")).deadReason())
                    .isEqualTo("java.lang.IllegalArgumentException: not a valid order: invalid-1");
            assertThat(template.admin().contains(MessageRef.body("it-validating", "valid-1"))).as("still being retried")
                    .isTrue();
            assertThat(ListenerTestApplication.defaultHandlerSaw).anySatisfy(f -> {
                assertThat(f.topic()).isEqualTo("it-validating");
                assertThat(f.retryable()).isFalse();
            });
            template.admin().cancel(MessageRef.body("it-validating", "valid-1"));
            assertThat(log.warnings()).filteredOn(line -> line.contains("will not be retried")).singleElement()
                    .asString().contains("not a valid order: invalid-1");
            assertThat(log.warnings()).filteredOn(line -> !line.contains("will not be retried"))
                    .allSatisfy(line -> assertThat(line).contains("downstream unavailable"));
        }
    }

    @Test
    void aNamedErrorHandlerDropsOrRetriesAfterItsOwnDelay() {
        try (LogCapture log = LogCapture.rmq().expecting("first attempt fails")) {
            template.sendFixedTime("it-decided", "drop-1", Instant.now());
            template.sendFixedTime("it-decided", "later-1", Instant.now());
            await().atMost(Duration.ofSeconds(30)).until(() -> listeners.handledAfterDecision.contains("later-1#2"));
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> !template.admin().find(MessageRef.body("it-decided", "drop-1")).exists()
                    && log.warnings().size() >= 2);
            assertThat(log.warnings()).hasSize(2).anySatisfy(line -> assertThat(line).contains("was dropped"))
                    .anySatisfy(line -> assertThat(line).contains("retry after"));
        }
        assertThat(listeners.handledAfterDecision).containsExactly("later-1#2");
        assertThat(template.admin().deadCount("it-decided")).isZero();
        assertThat(ListenerTestApplication.defaultHandlerSaw).noneSatisfy(f ->
                assertThat(f.topic()).isEqualTo("it-decided"));
    }

    @Test
    void deadMessagesReachTheDeadLetterTopicListener() throws Exception {
        try (LogCapture log = LogCapture.rmq().expecting("cannot handle poison-1")) {
            template.sendPriority("it-dlt-source", "poison-1", 3);
            assertThat(listeners.deadLetters.poll(30, TimeUnit.SECONDS)).isEqualTo("poison-1");
            assertThat(log.warnings()).singleElement().asString().contains("failed for the last time");
        }
        // sent on first, then deleted from the dead queue: the dead-letter listener may be quicker than the delete
        await().atMost(Duration.ofSeconds(15)).until(() -> template.admin().deadCount("it-dlt-source") == 0);
    }

    @Test
    void theTemplateFindsCancelsReschedulesBrowsesAndPurgesWaitingMessages() {
        // it-waiting is defined in properties and has no listener: messages stay where the test puts them
        Instant later = Instant.now().plus(Duration.ofHours(1));
        template.sendFixedTime("it-waiting", "timeout-of-order-1", later);
        template.sendFixedTime("it-waiting", "timeout-of-order-2", later.plusSeconds(1));
        template.sendFixedTime("it-waiting", "timeout-of-order-3", later.plusSeconds(2));
        assertThat(template.admin().find(MessageRef.body("it-waiting", "timeout-of-order-1")).waitingScore())
                .isEqualTo((double) later.toEpochMilli());
        assertThat(template.admin().browse("it-waiting", null, 10).messages()).extracting(m -> m.bodyAsString())
                .containsExactly("timeout-of-order-1", "timeout-of-order-2", "timeout-of-order-3");

        assertThat(template.admin().cancel(MessageRef.body("it-waiting", "timeout-of-order-1")).cancelled()).isTrue();
        assertThat(template.admin().contains(MessageRef.body("it-waiting", "timeout-of-order-1"))).isFalse();

        Instant sooner = Instant.now().plus(Duration.ofMinutes(1));
        assertThat(template.admin().reschedule(MessageRef.body("it-waiting", "timeout-of-order-3"), sooner))
                .isEqualTo(io.rmq.admin.RescheduleResult.RESCHEDULED);
        assertThat(template.admin().browse("it-waiting", null, 10).messages()).extracting(m -> m.bodyAsString())
                .containsExactly("timeout-of-order-3", "timeout-of-order-2");
        assertThat(template.admin().purge("it-waiting")).isEqualTo(2);
        assertThat(template.admin().stats("it-waiting").waiting()).isZero();
    }

    @Test
    void registryFindsStartsAndStopsContainersById() throws Exception {
        assertThat(registry.getListenerContainerIds()).contains("manual", "listeners.onRange", "listeners.onPriority",
                "listeners.onFixed", "listeners.onBytes", "listeners.onFailing");
        ListenerContainer manual = registry.getListenerContainer("manual");
        assertThat(manual.isRunning()).as("autoStartup=false").isFalse();
        assertThat(registry.getListenerContainer("listeners.onRange").isRunning()).isTrue();
        template.sendPriority("it-manual", "hello", 1);
        assertThat(listeners.manual.poll(300, TimeUnit.MILLISECONDS)).isNull();
        manual.start();
        try {
            assertThat(listeners.manual.poll(30, TimeUnit.SECONDS)).isEqualTo("hello");
        }
        finally {
            manual.stop();
        }
        assertThat(manual.isRunning()).isFalse();
        template.sendPriority("it-manual", "after stop", 1);
        assertThat(listeners.manual.poll(300, TimeUnit.MILLISECONDS)).isNull();
        assertThat(template.admin().stats("it-manual").waiting()).isEqualTo(1);
    }

    @Test
    void registryPausesAndResumesAListenerByIdAndReportsItsState() throws Exception {
        String id = "listeners.onPriority";
        assertThat(registry.getListenerState(id).status()).isEqualTo(RmqListenerState.Status.RUNNING);
        assertThat(registry.getListenerState(id).concurrency()).isEqualTo(2);
        assertThat(registry.getListenerState("manual").status()).isEqualTo(RmqListenerState.Status.STOPPED);
        assertThat(registry.getListenerState("manual").autoStartup()).isFalse();
        assertThat(registry.getListenerState("ordered").mode()).isEqualTo(io.rmq.core.ConsumeMode.ORDERLY);
        assertThat(registry.getListenerStates()).extracting(RmqListenerState::id).contains(id, "manual", "ordered");
        registry.pause(id);
        registry.pause(id);
        try {
            assertThat(registry.getListenerState(id).status()).isEqualTo(RmqListenerState.Status.PAUSED);
            listeners.priorities.clear();
            template.sendPriority("it-priority", List.of(new Price(999, "XPS", 1)), 5);
            Thread.sleep(1500);
            assertThat(listeners.priorities).as("handled while paused").isEmpty();
            assertThat(template.admin().stats("it-priority").waiting()).isEqualTo(1);
        }
        finally {
            registry.resume(id);
            registry.resume(id);
        }
        assertThat(registry.getListenerState(id).status()).isEqualTo(RmqListenerState.Status.RUNNING);
        RmqMessage<List<Price>> handled = listeners.priorities.poll(30, TimeUnit.SECONDS);
        assertThat(handled).isNotNull();
        assertThat(handled.payload()).extracting(Price::itemId).containsExactly(999L);
        assertThat(registry.getListenerState(id).stallsRepaired()).isZero();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> registry.pause("nope"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'nope'").hasMessageContaining(id);
    }

    @Test
    void listenerAttributesAndPlaceholdersWereApplied() {
        ListenerContainer priority = registry.getListenerContainer("listeners.onPriority");
        assertThat(priority.topic()).isEqualTo("it-priority");
        assertThat(registry.getListenerContainer("listeners.onRange").topic()).isEqualTo("it-range");
        assertThat(rmq.topics().get("it-range").slotAmount()).isEqualTo(4);
        assertThat(rmq.topics().get("it-fixed").slotAmount()).isEqualTo(8);
    }
}
