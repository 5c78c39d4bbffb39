package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.rmq.admin.DeadMessage;
import io.rmq.admin.DeadSearchPage;
import io.rmq.admin.MessageRef;
import io.rmq.admin.RedisFigures;
import io.rmq.admin.RetryPage;
import io.rmq.admin.RetryingMessage;
import io.rmq.admin.RmqAdmin;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.producer.OutgoingMessage;
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
 * The operator's views of failed messages (issue 33): messages waiting for a retry with their last error, the dead
 * queue searched by error text and id or body prefix, bulk requeue and delete of a selection, and the Redis figures.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class RetriesAndDeadSearchTest extends EngineTestSupport {

    RetriesAndDeadSearchTest(RedisTopology topology) {
        super(topology);
    }

    /** Retries back off an hour: they stay listed for the whole test. */
    private static final ConsumerSettings LONG_BACKOFF = new ConsumerSettings(100, Duration.ofSeconds(5),
            new RetryPolicy(5, BackoffPolicy.fixed(Duration.ofHours(1))));

    private static final ConsumerSettings NO_RETRY = new ConsumerSettings(100, Duration.ofSeconds(5),
            new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));

    /** The listed dead messages as the admin names them. */
    private static List<MessageRef> refs(List<DeadMessage> messages) {
        return messages.stream().map(DeadMessage::ref).toList();
    }

    /** Polls until {@code count} messages were handled by a handler that always throws "boom &lt;body&gt;". */
    private static void failAll(RmqConsumer consumer, int count) {
        int[] handled = {0};
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            handled[0] += consumer.pollAndHandle(String.class, (body, delivery) -> {
                throw new IllegalStateException("Boom " + body);
            });
            return handled[0] >= count;
        });
    }

    @Test
    void messagesWaitingForARetryListTheirLastErrorFailureTimeAndNextAttemptPageByPage() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        for (int i = 0; i < 25; i++) {
            rmq.producer().sendFixedTime("jobs", "job-" + i, Instant.now());
        }
        Instant before = Instant.now().minusSeconds(5);
        try (LogCapture log = LogCapture.rmq()) {
            failAll(rmq.consumer("jobs", LONG_BACKOFF), 25);
            assertThat(log.warnings()).allSatisfy(line -> assertThat(line).contains("Boom job-"));
        }

        List<RetryingMessage> all = new ArrayList<>();
        for (int offset = 0; offset < 30; offset += 7) {
            RetryPage page = rmq.admin().retries("jobs", offset, 7);
            assertThat(page.total()).isEqualTo(25);
            assertThat(page.capped()).isFalse();
            all.addAll(page.messages());
        }
        assertThat(all).hasSize(25).extracting(RetryingMessage::bodyAsString).doesNotHaveDuplicates();
        assertThat(all).allSatisfy(m -> {
            assertThat(m.lastError()).isEqualTo("java.lang.IllegalStateException: Boom " + m.bodyAsString());
            assertThat(m.attempts()).isEqualTo(1);
            assertThat(m.failedAt()).isAfter(before).isBefore(m.nextAttemptAt());
            assertThat(m.nextAttemptAt()).isAfter(Instant.now().plus(Duration.ofMinutes(30)));
            assertThat(m.id()).isNull();
        });
        // slot by slot, soonest next attempt first within a slot
        for (int i = 1; i < all.size(); i++) {
            RetryingMessage a = all.get(i - 1);
            RetryingMessage b = all.get(i);
            assertThat(a.slot()).isLessThanOrEqualTo(b.slot());
            if (a.slot() == b.slot()) {
                assertThat(a.nextAttemptAt()).isBeforeOrEqualTo(b.nextAttemptAt());
            }
        }
        assertThat(rmq.admin().stats("jobs").retrying()).as("the same messages the figures count").isEqualTo(25);
    }

    @Test
    void priorityRetriesListTheirIdAndPayload() {
        rmq.defineTopic("vip", TopicType.PRIORITY, 2);
        rmq.producer().send(OutgoingMessage.priority("vip", "{\"amount\":5}", 9).withId("pay-1"));
        try (LogCapture log = LogCapture.rmq()) {
            failAll(rmq.consumer("vip", LONG_BACKOFF), 1);
            assertThat(log.warnings()).singleElement().asString().contains("Boom");
        }
        RetryPage page = rmq.admin().retries("vip", 0, 10);
        assertThat(page.total()).isEqualTo(1);
        assertThat(page.messages()).singleElement().satisfies(m -> {
            assertThat(m.id()).isEqualTo("pay-1");
            assertThat(m.bodyAsString()).isEqualTo("{\"amount\":5}");
            assertThat(m.lastError()).isEqualTo("java.lang.IllegalStateException: Boom {\"amount\":5}");
            assertThat(m.attempts()).isEqualTo(1);
            assertThat(m.nextAttemptAt()).isAfter(Instant.now().plus(Duration.ofMinutes(30)));
        });
    }

    @Test
    void theAckOfARetriedMessageForgetsItsNotedErrorWithItsAttemptCount() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 2);
        rmq.producer().send(OutgoingMessage.fixedTime("t", "p", Instant.now()).withId("once"));
        RmqConsumer consumer = rmq.consumer("t", LONG_BACKOFF);
        try (LogCapture log = LogCapture.rmq()) {
            failAll(consumer, 1);
            assertThat(log.warnings()).hasSize(1);
        }
        SlotKeys slot = slotOfId("t", "once");
        assertThat(hlen(slot.errors())).isEqualTo(1);
        rmq.admin().reschedule(MessageRef.id("t", "once"), Instant.now().minusSeconds(1)); // its retry is due now
        List<Integer> attempts = new ArrayList<>();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            consumer.pollAndHandle(String.class, (body, delivery) -> attempts.add(delivery.attempt()));
            return !attempts.isEmpty();
        });
        assertThat(attempts).containsExactly(2);
        assertThat(exists(slot.errors())).as("errors HASH after the ack").isZero();
        assertThat(exists(slot.attempts())).isZero();
        assertThat(rmq.admin().retries("t", 0, 10).total()).isZero();
    }

    private long exists(byte[] key) {
        Long found = raw(c -> c.exists(key));
        return found;
    }

    private long hlen(byte[] key) {
        Long fields = raw(c -> c.hlen(key));
        return fields;
    }

    private SlotKeys slotOfId(String topic, String id) {
        int slot = rmq.admin().find(MessageRef.id(topic, id)).slot();
        return redis(rmq).keys().slot(topic, slot);
    }

    @Test
    void aLongReasonIsCutToFiveHundredBytesOnACharacterBoundaryAndGoesToDeadInFull() {
        rmq.defineTopic("long", TopicType.FIXED_TIME, 1);
        rmq.producer().sendFixedTime("long", "x", Instant.now());
        // "java.lang.IllegalStateException: " is 33 bytes and each é 2: byte 500 is the first half of an é
        String reason = "é".repeat(900);
        RmqConsumer consumer = rmq.consumer("long", new ConsumerSettings(100, Duration.ofSeconds(5),
                new RetryPolicy(1, BackoffPolicy.fixed(Duration.ofHours(1)))));
        try (LogCapture log = LogCapture.rmq()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> consumer.pollAndHandle(String.class, (body, d) -> {
                throw new IllegalStateException(reason);
            }) > 0);
            assertThat(log.warnings()).hasSize(1);
        }
        RetryingMessage retry = rmq.admin().retries("long", 0, 1).messages().get(0);
        assertThat(retry.lastError().getBytes(StandardCharsets.UTF_8)).hasSize(499);
        assertThat(retry.lastError()).isEqualTo("java.lang.IllegalStateException: " + "é".repeat(233));

        rmq.admin().reschedule(MessageRef.body("long", "x"), Instant.now().minusSeconds(1));
        try (LogCapture log = LogCapture.rmq()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> consumer.pollAndHandle(String.class, (body, d) -> {
                throw new IllegalStateException(reason);
            }) > 0);
            assertThat(log.warnings()).singleElement().asString().contains("moved to the dead queue");
        }
        assertThat(rmq.admin().deadMessages("long", 0, 1).get(0).lastError())
                .isEqualTo("java.lang.IllegalStateException: " + reason);
        SlotKeys slot = redis(rmq).keys().slot("long", 0);
        assertThat(exists(slot.errors())).as("dead-info holds the reason now").isZero();
    }

    @Test
    void theFailedHeadOfAnOrderlySlotListsItsLastErrorWhileHeldAndAfterItsOwnerStopped() {
        rmq.defineTopic("ledger", TopicType.FIXED_TIME, 2);
        io.rmq.container.ListenerContainer container = rmq.container("ledger", LONG_BACKOFF, String.class,
                (String body, io.rmq.consumer.Delivery d) -> {
                    throw new IllegalStateException("ledger refused " + body);
                }, io.rmq.container.ContainerOptions.of("o-ledger", 1).withMode(io.rmq.core.ConsumeMode.ORDERLY)
                        .withOwnershipTimeout(Duration.ofSeconds(3)));
        try (LogCapture log = LogCapture.rmq().expecting("ledger refused")) {
            container.start();
            rmq.producer().send(OutgoingMessage.fixedTime("ledger", "entry-1", Instant.now()).withGroup("acct-1"));
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().retries("ledger", 0, 10).total() == 1);
            assertThat(rmq.admin().retries("ledger", 0, 10).messages()).singleElement().satisfies(m -> {
                assertThat(m.bodyAsString()).isEqualTo("entry-1");
                assertThat(m.lastError()).isEqualTo("java.lang.IllegalStateException: ledger refused entry-1");
                assertThat(m.nextAttemptAt()).isAfter(Instant.now().plus(Duration.ofMinutes(30)));
            });
            container.stop();
            assertThat(log.warnings()).hasSize(1);
        }
        finally {
            container.stop();
        }
        // a graceful stop puts the head back into store and keeps its retry time: still one retry, with its error
        assertThat(rmq.admin().retries("ledger", 0, 10).messages()).singleElement()
                .satisfies(m -> assertThat(m.lastError()).contains("ledger refused entry-1"));
        assertThat(rmq.admin().stats("ledger").retrying()).isEqualTo(1);
    }

    @Test
    void aFailureRecordedByThePreviousEngineListsWithoutAnError() {
        LegacyScripts old = new LegacyScripts(client, redis(rmq).keys());
        try {
            old.defineTopic("legacy", "FIXED_TIME", 1);
            SlotKeys slot = redis(rmq).keys().slot("legacy", 0);
            old.send(slot, "score", false, Long.toString(System.currentTimeMillis() - 1000), "old-failure");
            LegacyScripts.LegacyDelivery delivery = old.pop(slot, false, 10, 30_000, 0).get(0);
            assertThat(old.nack(slot, false, delivery, "boom", "", 3_600_000)).isEqualTo(1);
        }
        finally {
            old.close();
        }
        rmq.defineTopic("legacy", TopicType.FIXED_TIME, 1);
        assertThat(rmq.admin().retries("legacy", 0, 10).messages()).singleElement().satisfies(m -> {
            assertThat(m.bodyAsString()).isEqualTo("old-failure");
            assertThat(m.attempts()).isEqualTo(1);
            assertThat(m.lastError()).isNull();
            assertThat(m.failedAt()).isNull();
            assertThat(m.nextAttemptAt()).isAfter(Instant.now().plus(Duration.ofMinutes(30)));
        });
    }

    @Test
    void badPagesAreRefusedNamingTheField() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 1);
        assertThatThrownBy(() -> rmq.admin().retries("jobs", -1, 10)).isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("offset");
        assertThatThrownBy(() -> rmq.admin().retries("jobs", 0, 0)).isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessageContaining("limit");
        assertThatThrownBy(() -> rmq.admin().searchDead("jobs", "x", null, 0, 1001))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("limit");
    }

    @Test
    void deadMessagesAreFoundByErrorTextIgnoringCaseAndByIdOrBodyPrefix() {
        rmq.defineTopic("d", TopicType.FIXED_TIME, 4);
        for (int i = 0; i < 12; i++) {
            rmq.producer().sendFixedTime("d", (i % 3 == 0 ? "order-" : "refund-") + i, Instant.now());
        }
        rmq.producer().send(OutgoingMessage.fixedTime("d", "{\"x\":1}", Instant.now()).withId("order-by-id"));
        try (LogCapture log = LogCapture.rmq()) {
            failAll(rmq.consumer("d", NO_RETRY), 13);
            assertThat(log.warnings()).hasSize(13);
        }

        DeadSearchPage byError = rmq.admin().searchDead("d", "bOOm REFUND", null, 0, 100);
        assertThat(byError.total()).isEqualTo(8);
        assertThat(byError.scanned()).isEqualTo(13);
        assertThat(byError.capped()).isFalse();
        assertThat(byError.messages()).extracting(DeadMessage::bodyAsString).allMatch(b -> b.startsWith("refund-"));

        DeadSearchPage byPrefix = rmq.admin().searchDead("d", null, "order-", 0, 100);
        assertThat(byPrefix.messages()).extracting(m -> m.id() != null ? m.id() : m.bodyAsString())
                .containsExactlyInAnyOrder("order-0", "order-3", "order-6", "order-9", "order-by-id");

        // pages of the matches: each once
        Set<String> paged = new HashSet<>();
        for (int offset = 0; offset < 8; offset += 3) {
            DeadSearchPage page = rmq.admin().searchDead("d", "refund", "", offset, 3);
            assertThat(page.total()).isEqualTo(8);
            page.messages().forEach(m -> assertThat(paged.add(m.bodyAsString())).isTrue());
        }
        assertThat(paged).hasSize(8);
        assertThat(rmq.admin().searchDead("d", "no such error", null, 0, 10).total()).isZero();
    }

    @Test
    void aSearchExaminesAtMostTenThousandDeadMessagesAndSaysSo() {
        rmq.defineTopic("big", TopicType.FIXED_TIME, 1);
        SlotKeys slot = redis(rmq).keys().slot("big", 0);
        int size = RmqAdmin.DEAD_SEARCH_EXAMINED + 50;
        java.util.Map<byte[], Double> dead = new java.util.LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            dead.put(("m-" + i).getBytes(StandardCharsets.UTF_8), (double) i);
        }
        @SuppressWarnings("unchecked")
        io.lettuce.core.ScoredValue<byte[]>[] values = dead.entrySet().stream()
                .map(e -> io.lettuce.core.ScoredValue.just(e.getValue(), e.getKey()))
                .toArray(io.lettuce.core.ScoredValue[]::new);
        raw(c -> c.zadd(slot.dead(), (Object[]) values));

        DeadSearchPage page = rmq.admin().searchDead("big", null, "m-", 0, 10);
        assertThat(page.scanned()).isEqualTo(RmqAdmin.DEAD_SEARCH_EXAMINED);
        assertThat(page.capped()).isTrue();
        assertThat(page.total()).isEqualTo(RmqAdmin.DEAD_SEARCH_EXAMINED);
        assertThat(page.messages()).hasSize(10);
    }

    @Test
    void aSelectionOfDeadMessagesIsRequeuedOrDeletedAcrossSlotsByBodyOrId() {
        rmq.defineTopic("sel", TopicType.FIXED_TIME, 8);
        for (int i = 0; i < 10; i++) {
            rmq.producer().sendFixedTime("sel", "m-" + i, Instant.now());
        }
        rmq.producer().send(OutgoingMessage.fixedTime("sel", "payload", Instant.now()).withId("with-id"));
        try (LogCapture log = LogCapture.rmq()) {
            failAll(rmq.consumer("sel", NO_RETRY), 11);
            assertThat(log.warnings()).hasSize(11);
        }
        List<DeadMessage> dead = rmq.admin().deadMessages("sel", 0, 100);
        List<DeadMessage> requeue = dead.stream().filter(m -> m.id() != null || m.bodyAsString().compareTo("m-4") < 0)
                .toList();
        assertThat(requeue).hasSize(5);
        assertThat(rmq.admin().requeueDead("sel", refs(requeue))).isEqualTo(5);
        assertThat(rmq.admin().requeueDead("sel", refs(requeue))).as("no longer dead").isZero();
        assertThat(rmq.admin().stats("sel").waiting()).isEqualTo(5);

        List<DeadMessage> delete = dead.stream().filter(m -> !requeue.contains(m)).limit(4).toList();
        assertThat(rmq.admin().deleteDead("sel", refs(delete))).isEqualTo(4);
        assertThat(rmq.admin().deadCount("sel")).isEqualTo(2);

        MessageRef otherSlot = MessageRef.stored("sel", 8, "x".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> rmq.admin().deleteDead("sel", List.of(otherSlot)))
                .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("slot").hasMessageContaining("8");
    }

    @Test
    void redisFiguresNameTheModeMemoryAndNodes() {
        rmq.defineTopic("f", TopicType.FIXED_TIME, 4);
        for (int i = 0; i < 20; i++) {
            rmq.producer().sendFixedTime("f", "m-" + i, Instant.now().plusSeconds(60));
        }
        RedisFigures figures = rmq.admin().redis();
        assertThat(figures.version()).matches("\\d+\\.\\d+.*");
        assertThat(figures.usedMemory()).isPositive();
        assertThat(figures.peakMemory()).isGreaterThanOrEqualTo(figures.usedMemory() / 2);
        assertThat(figures.clients()).isPositive();
        // the slots' stores and the topics HASH at least (other tests' keys have other prefixes)
        assertThat(figures.rmqKeys()).isBetween(2L, 5L);
        assertThat(figures.rmqKeysCapped()).isFalse();
        if (topology == RedisTopology.CLUSTER) {
            assertThat(figures.mode()).isEqualTo("cluster");
            List<RedisFigures.Node> masters = figures.nodes().stream().filter(n -> n.role().equals("master")).toList();
            assertThat(masters).hasSizeGreaterThanOrEqualTo(3).allSatisfy(n -> {
                assertThat(n.state()).isEqualTo("ok");
                assertThat(n.slots()).matches("\\d+(-\\d+)?(,\\d+(-\\d+)?)*");
                assertThat(n.address()).contains(":");
                assertThat(n.id()).hasSize(40);
            });
        }
        else {
            assertThat(figures.mode()).isEqualTo("standalone");
            assertThat(figures.nodes()).isEmpty();
        }
    }
}
