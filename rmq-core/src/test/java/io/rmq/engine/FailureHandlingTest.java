package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import io.rmq.admin.MessageRef;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailedMessage;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.FailurePolicy;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.RmqNonRetryableException;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Non-retryable errors, error handlers, dead-letter topics, and what failure logs show. */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class FailureHandlingTest extends EngineTestSupport {

    FailureHandlingTest(RedisTopology topology) {
        super(topology);
    }

    record Payment(long orderId, long cents) {
    }

    /** Five retries, 20 ms apart. */
    private static final ConsumerSettings RETRYING = new ConsumerSettings(50, Duration.ofSeconds(5),
            new RetryPolicy(5, BackoffPolicy.fixed(Duration.ofMillis(20))));

    private final List<ListenerContainer> containers = new CopyOnWriteArrayList<>();

    @AfterEach
    void stopContainers() {
        containers.forEach(ListenerContainer::stop);
    }

    @Test
    void aNonRetryableExceptionSendsTheMessageToTheDeadQueueAtOnceWithItsReason() {
        rmq.defineTopic("payments", TopicType.FIXED_TIME, 4);
        rmq.producer().sendFixedTime("payments", new Payment(1, -5), Instant.now());
        RmqConsumer consumer = rmq.consumer("payments", RETRYING);
        try (LogCapture log = LogCapture.rmq()) {
            consumer.pollAndHandle(Payment.class, (payment, d) -> {
                // wrapped, as frameworks do: found in the cause chain
                throw new IllegalStateException("charging failed",
                        new RmqNonRetryableException("amount must be positive: " + payment.cents()));
            });
            assertThat(log.messages()).singleElement().asString()
                    .contains("will not be retried").contains("amount must be positive: -5");
        }
        var dead = rmq.admin().deadMessages("payments", 0, 10);
        assertThat(dead).singleElement().satisfies(m -> {
            assertThat(m.attempts()).isEqualTo(1);
            assertThat(m.lastError()).isEqualTo("java.lang.IllegalStateException: charging failed; caused by"
                    + " io.rmq.consumer.RmqNonRetryableException: amount must be positive: -5");
        });
    }

    @Test
    void noRetryForNamesExceptionTypesThatAreNotRetried() {
        rmq.defineTopic("payments", TopicType.FIXED_TIME, 4);
        rmq.producer().sendFixedTime("payments", new Payment(1, 0), Instant.now());
        rmq.producer().sendFixedTime("payments", new Payment(2, 100), Instant.now());
        RmqConsumer consumer = rmq.consumer("payments", RETRYING.withFailures(
                FailurePolicy.DEFAULT.withNoRetryFor(List.of(IllegalArgumentException.class))));
        try (LogCapture log = LogCapture.rmq()) {
            consumer.pollAndHandle(Payment.class, (payment, d) -> {
                if (payment.cents() == 0) {
                    throw new NumberFormatException("zero"); // a subtype of IllegalArgumentException
                }
                throw new IllegalStateException("gateway down");
            });
            assertThat(log.messages()).hasSize(2);
        }
        assertThat(rmq.admin().deadMessages("payments", 0, 10)).singleElement()
                .satisfies(m -> assertThat(m.lastError()).isEqualTo("java.lang.NumberFormatException: zero"));
        assertThat(rmq.admin().find(MessageRef.body("payments", new Payment(2, 100))).isRetrying()).isTrue();
    }

    @Test
    void anErrorHandlerDecidesRetryAfterDeadOrDropAndSeesTheAttempt() {
        rmq.defineTopic("payments", TopicType.FIXED_TIME, 4);
        List<FailedMessage> seen = new CopyOnWriteArrayList<>();
        RmqConsumer consumer = rmq.consumer("payments", RETRYING.withFailures(FailurePolicy.DEFAULT
                .withNoRetryFor(List.of(IllegalArgumentException.class))
                .withErrorHandler(failure -> {
                    seen.add(failure);
                    Payment payment = (Payment) failure.payload();
                    if (payment.orderId() == 1) {
                        return failure.attempt() == 1 ? FailureDecision.retryAfter(Duration.ofMinutes(10))
                                : FailureDecision.dead();
                    }
                    if (payment.orderId() == 2) {
                        return FailureDecision.drop();
                    }
                    return FailureDecision.standard();
                })));
        rmq.producer().sendFixedTime("payments", new Payment(1, 1), Instant.now());
        rmq.producer().sendFixedTime("payments", new Payment(2, 1), Instant.now());
        rmq.producer().sendFixedTime("payments", new Payment(3, 1), Instant.now());
        try (LogCapture ignored = LogCapture.rmq()) {
            consumer.pollAndHandle(Payment.class, (payment, d) -> {
                throw payment.orderId() == 3 ? new IllegalArgumentException("bad") : new IllegalStateException("down");
            });
        }
        assertThat(seen).hasSize(3).allSatisfy(f -> {
            assertThat(f.attempt()).isEqualTo(1);
            assertThat(f.maxRetries()).isEqualTo(5);
            assertThat(f.lastAttempt()).isFalse();
            assertThat(f.topic()).isEqualTo("payments");
        });
        assertThat(seen).filteredOn(f -> ((Payment) f.payload()).orderId() == 3).singleElement()
                .satisfies(f -> assertThat(f.retryable()).isFalse());

        Instant retryAt = rmq.admin().find(MessageRef.body("payments", new Payment(1, 1))).retryAt();
        assertThat(retryAt).isBetween(Instant.now().plus(Duration.ofMinutes(9)), Instant.now().plus(Duration.ofMinutes(11)));
        assertThat(rmq.admin().find(MessageRef.body("payments", new Payment(2, 1))).exists()).as("dropped").isFalse();
        assertThat(rmq.admin().find(MessageRef.body("payments", new Payment(3, 1))).isDead())
                .as("standard: not retryable").isTrue();

        rmq.admin().reschedule(MessageRef.body("payments", new Payment(1, 1)), Instant.now());
        try (LogCapture ignored = LogCapture.rmq()) {
            consumer.pollAndHandle(Payment.class, (payment, d) -> {
                throw new IllegalStateException("still down");
            });
        }
        assertThat(rmq.admin().find(MessageRef.body("payments", new Payment(1, 1))).isDead()).isTrue();
        assertThat(rmq.admin().deadCount("payments")).isEqualTo(2);
    }

    @Test
    void retryAfterGoesOnPastMaxRetriesAndAFailingErrorHandlerFallsBackToTheStandardDecision() {
        rmq.defineTopic("jobs", TopicType.PRIORITY, 2);
        rmq.producer().sendPriority("jobs", "stubborn", 1);
        rmq.producer().sendPriority("jobs", "unlucky", 1);
        ConsumerSettings noRetries = new ConsumerSettings(50, Duration.ofSeconds(5),
                new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));
        RmqConsumer consumer = rmq.consumer("jobs", noRetries.withFailures(FailurePolicy.DEFAULT.withErrorHandler(
                failure -> {
                    if (failure.delivery().bodyAsString().equals("unlucky")) {
                        throw new IllegalStateException("error handler bug");
                    }
                    return FailureDecision.retryAfter(Duration.ZERO);
                })));
        AtomicInteger attempts = new AtomicInteger();
        try (LogCapture log = LogCapture.rmq()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.pollAndHandle(String.class, (body, d) -> {
                    if (body.equals("stubborn") && attempts.incrementAndGet() < 4) {
                        throw new IllegalStateException("not yet");
                    }
                    if (body.equals("unlucky")) {
                        throw new IllegalStateException("fails");
                    }
                });
                return attempts.get() >= 4;
            });
            assertThat(log.events()).anySatisfy(e -> {
                assertThat(e.getLevel()).isEqualTo(Level.ERROR);
                assertThat(e.getFormattedMessage()).contains("The error handler of topic 'jobs' failed");
            });
        }
        assertThat(rmq.admin().find(MessageRef.body("jobs", "stubborn")).exists()).isFalse();
        assertThat(rmq.admin().find(MessageRef.body("jobs", "unlucky")).isDead()).isTrue();
    }

    @Test
    void deadMessagesMoveToTheDeadLetterTopicWhereAListenerCanHandleThem() {
        rmq.defineTopic("payments", TopicType.PRIORITY, 4);
        rmq.producer().sendPriority("payments", new Payment(9, 1), 7);
        ConsumerSettings oneRetry = new ConsumerSettings(50, Duration.ofSeconds(5),
                new RetryPolicy(1, BackoffPolicy.fixed(Duration.ZERO)),
                FailurePolicy.DEFAULT.withDeadLetterTopic("payments.dlt"));
        List<Payment> recovered = new CopyOnWriteArrayList<>();
        try (LogCapture ignored = LogCapture.rmq()) {
            ListenerContainer failing = rmq.container("payments", oneRetry, Payment.class, (Payment p, Delivery d) -> {
                throw new IllegalStateException("gateway down");
            }, ContainerOptions.of("payments", 1));
            containers.add(failing);
            failing.start();
            ListenerContainer recovery = rmq.container("payments.dlt", FAST, Payment.class,
                    (Payment p, Delivery d) -> recovered.add(p), ContainerOptions.of("payments.dlt", 1));
            containers.add(recovery);
            recovery.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> recovered.size() == 1);
        }
        assertThat(recovered).containsExactly(new Payment(9, 1));
        assertThat(rmq.topics().get("payments.dlt").type()).as("defined when missing").isEqualTo(TopicType.FIXED_TIME);
        assertThat(rmq.admin().deadCount("payments")).as("left the dead queue once sent").isZero();
        await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().stats("payments.dlt").inFlight() == 0);
    }

    @Test
    void orderedListenersApplyTheSameDecisionsAndTheSlotMovesOn() {
        rmq.defineTopic("ledger", TopicType.FIXED_TIME, 1);
        long now = Instant.now().toEpochMilli();
        for (int i = 0; i < 4; i++) {
            rmq.producer().sendFixedTime("ledger", "entry-" + i, Instant.ofEpochMilli(now - 10 + i));
        }
        ConsumerSettings settings = RETRYING.withFailures(FailurePolicy.DEFAULT.withErrorHandler(failure ->
                failure.delivery().bodyAsString().equals("entry-1") ? FailureDecision.drop()
                        : FailureDecision.standard()));
        List<String> handled = new CopyOnWriteArrayList<>();
        try (LogCapture ignored = LogCapture.rmq()) {
            ListenerContainer ordered = rmq.container("ledger", settings, String.class, (String body, Delivery d) -> {
                handled.add(body);
                if (body.equals("entry-0")) {
                    throw new RmqNonRetryableException("invalid entry");
                }
                if (body.equals("entry-1")) {
                    throw new IllegalStateException("drop me");
                }
            }, ContainerOptions.of("ledger", 1).withMode(ConsumeMode.ORDERLY));
            containers.add(ordered);
            ordered.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() >= 4);
        }
        assertThat(handled).containsExactly("entry-0", "entry-1", "entry-2", "entry-3");
        assertThat(rmq.admin().find(MessageRef.body("ledger", "entry-0")).isDead()).isTrue();
        assertThat(rmq.admin().find(MessageRef.body("ledger", "entry-1")).exists()).isFalse();
        assertThat(rmq.admin().deadCount("ledger")).isEqualTo(1);
    }

    @Test
    void failureLogsShowNoBodyUnlessTheEngineIsToldTo() {
        rmq.defineTopic("people", TopicType.FIXED_TIME, 1);
        String personal = "{\"name\":\"Ada Lovelace\",\"iban\":\"GB33BUKB20201555555555\"}";
        rmq.producer().sendFixedTime("people", personal, Instant.now());
        RmqConsumer consumer = rmq.consumer("people", RETRYING);
        try (LogCapture log = LogCapture.rmq()) {
            consumer.pollAndHandle(String.class, (body, d) -> {
                throw new IllegalStateException("down");
            });
            assertThat(log.messages()).singleElement().asString()
                    .doesNotContain("Ada").contains("body " + personal.length() + " bytes");
        }

        try (var verbose = io.rmq.Rmq.create(client, io.rmq.RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withLogBodyChars(12)); LogCapture log = LogCapture.rmq()) {
            verbose.defineTopic("people", TopicType.FIXED_TIME, 1);
            RmqConsumer verboseConsumer = verbose.consumer("people", RETRYING);
            await().atMost(Duration.ofSeconds(30)).until(() -> verboseConsumer.pollAndHandle(String.class,
                    (body, d) -> {
                        throw new IllegalStateException("down");
                    }) == 1);
            assertThat(log.messages()).singleElement().asString().contains("body {\"name\":\"Ada...]");
        }
    }
}
