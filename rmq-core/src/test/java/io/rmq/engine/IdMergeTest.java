package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailurePolicy;
import io.rmq.consumer.RmqConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Messages sent with an id: the id is the identity, so sends of one id merge whatever their payloads, by the timing
 * rule of the topic type, and the payload and headers delivered are the latest send's — on every topic type, for a
 * send while the id waits, while it is in flight, after its in-flight copy failed, and in batches. The envelope (what
 * an id message carries besides its member) lives exactly as long as a copy of the member does.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class IdMergeTest extends EngineTestSupport {

    private static final ConsumerSettings RETRY_AT_ONCE = new ConsumerSettings(50, Duration.ofSeconds(5),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ZERO)));

    private final List<ListenerContainer> containers = new ArrayList<>();

    IdMergeTest(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void stopContainers() {
        containers.forEach(ListenerContainer::stop);
    }

    /** A message of {@code type} due now (RANGE_MERGE: after {@code rangeMillis}), with {@code id} and header v. */
    private static OutgoingMessage message(TopicType type, String topic, String id, String payload, String v,
            long rangeMillis) {
        OutgoingMessage message = switch (type) {
            case FIXED_TIME -> OutgoingMessage.fixedTime(topic, payload, Instant.now().minusSeconds(1));
            case PRIORITY -> OutgoingMessage.priority(topic, payload, Long.parseLong(v));
            case RANGE_MERGE -> OutgoingMessage.rangeMerge(topic, payload, Duration.ofMillis(rangeMillis));
        };
        return message.withId(id).withHeader("v", v);
    }

    private static OutgoingMessage message(TopicType type, String topic, String id, String payload, String v) {
        return message(type, topic, id, payload, v, 1);
    }

    private SlotKeys slotOf(String topic, int slot) {
        return redis(rmq).keys().slot(topic, slot);
    }

    private long envelopes(String topic) {
        long total = 0;
        for (int slot = 0; slot < rmq.topics().get(topic).slotAmount(); slot++) {
            total += redisAdmin(rmq).storedEnvelopes(slotOf(topic, slot)).join();
        }
        return total;
    }

    private double storeScore(String topic, String id) {
        Double score = raw(commands -> commands.zscore(slotOf(topic, 0).store(), EnvelopeKeys.idMember(id)));
        assertThat(score).as("waiting in store").isNotNull();
        return score;
    }

    /** The next delivery, waiting for it to be due; exactly one. */
    private static Delivery pollOne(RmqConsumer consumer) {
        List<Delivery> got = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            got.addAll(consumer.poll().deliveries());
            return !got.isEmpty();
        });
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    @ParameterizedTest
    @EnumSource(TopicType.class)
    void sendsOfOneIdMergeAndTheLatestPayloadAndHeadersAreDelivered(TopicType type) {
        rmq.defineTopic("orders", type, 4);
        List<SendResult> results = new ArrayList<>();
        for (int v = 1; v <= 3; v++) {
            results.add(rmq.producer().send(message(type, "orders", "order-42", "{\"price\":" + v + "}",
                    Integer.toString(v), 300)));
        }
        assertThat(results).extracting(SendResult::merged).containsExactly(false, true, true);
        assertThat(results).extracting(SendResult::slot).as("an id routes its sends to one slot").containsOnly(
                results.get(0).slot());

        RmqConsumer consumer = rmq.consumer("orders", ConsumerSettings.DEFAULT);
        Delivery delivery = pollOne(consumer);
        assertThat(delivery.id()).isEqualTo("order-42");
        assertThat(delivery.bodyAsString()).isEqualTo("{\"price\":3}");
        assertThat(delivery.headers()).isEqualTo(Map.of("v", "3"));
        assertThat(delivery.member()).isEqualTo(EnvelopeKeys.idMember("order-42"));
        if (type == TopicType.PRIORITY) {
            assertThat(delivery.score()).as("PRIORITY takes the latest priority").isEqualTo(3.0);
        }
        assertThat(envelopes("orders")).as("kept while in flight").isOne();
        assertThat(consumer.ack(delivery)).isTrue();
        assertThat(consumer.poll().deliveries()).isEmpty();
        assertThat(envelopes("orders")).as("forgotten with the last copy").isZero();
    }

    @Test
    void rangeMergeKeepsTheFirstDueTimeAndFixedTimeTakesTheLatest() {
        rmq.defineTopic("r", TopicType.RANGE_MERGE, 1);
        rmq.producer().send(message(TopicType.RANGE_MERGE, "r", "k", "a", "1", 60_000));
        rmq.producer().send(message(TopicType.RANGE_MERGE, "r", "k", "b", "2", 1));
        double due = storeScore("r", "k");
        assertThat(due).as("the first send's due time, a minute out").isGreaterThan(System.currentTimeMillis() + 30_000);

        rmq.defineTopic("f", TopicType.FIXED_TIME, 1);
        Instant later = Instant.now().plusSeconds(3600);
        rmq.producer().send(OutgoingMessage.fixedTime("f", "a", Instant.now().minusSeconds(1)).withId("k"));
        rmq.producer().send(OutgoingMessage.fixedTime("f", "b", later).withId("k"));
        assertThat(storeScore("f", "k")).isEqualTo((double) later.toEpochMilli());
    }

    @ParameterizedTest
    @EnumSource(TopicType.class)
    void aSendWhileTheIdIsInFlightIsDeliveredAfterwardsWithTheNewestPayload(TopicType type) {
        rmq.defineTopic("orders", type, 1);
        rmq.producer().send(message(type, "orders", "order-7", "v1", "1"));
        RmqConsumer consumer = rmq.consumer("orders", ConsumerSettings.DEFAULT);
        Delivery first = pollOne(consumer);
        assertThat(first.bodyAsString()).isEqualTo("v1");

        SendResult again = rmq.producer().send(message(type, "orders", "order-7", "v2", "2"));
        assertThat(again.merged()).as("a copy of its own beside the one in flight").isFalse();
        assertThat(first.bodyAsString()).as("the delivery in flight keeps the payload it was popped with")
                .isEqualTo("v1");
        assertThat(consumer.poll().deliveries()).as("held back while the first copy is in flight").isEmpty();
        assertThat(consumer.ack(first)).isTrue();
        assertThat(envelopes("orders")).as("the waiting copy keeps the envelope").isOne();

        Delivery second = pollOne(consumer);
        assertThat(second.bodyAsString()).isEqualTo("v2");
        assertThat(second.headers()).containsEntry("v", "2");
        assertThat(consumer.ack(second)).isTrue();
        assertThat(envelopes("orders")).isZero();
    }

    @ParameterizedTest
    @EnumSource(TopicType.class)
    void whenTheCopyInFlightFailsEveryLaterDeliveryHasTheNewestPayload(TopicType type) {
        rmq.defineTopic("orders", type, 1);
        rmq.producer().send(message(type, "orders", "order-9", "v1", "1"));
        RmqConsumer consumer = rmq.consumer("orders", RETRY_AT_ONCE);
        Delivery first = pollOne(consumer);
        rmq.producer().send(message(type, "orders", "order-9", "v2", "2"));
        consumer.nack(first, "failed on purpose");

        // time types: the retry merges into the waiting copy (one delivery); PRIORITY: the waiting copy now, the retry
        // after its backoff (at least once), both with the newest payload
        List<Delivery> later = new ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            List<Delivery> got = consumer.poll().deliveries();
            later.addAll(got);
            consumer.ackAll(got);
            return !later.isEmpty() && envelopes("orders") == 0;
        });
        assertThat(later).allSatisfy(d -> {
            assertThat(d.bodyAsString()).isEqualTo("v2");
            assertThat(d.headers()).containsEntry("v", "2");
        });
        assertThat(later.size()).isBetween(1, 2);
    }

    @Test
    void anIdAndAnEqualBodyAreTwoMessages() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 1);
        Instant now = Instant.now().minusSeconds(1);
        assertThat(rmq.producer().send(OutgoingMessage.fixedTime("t", "order-42", now)).merged()).isFalse();
        assertThat(rmq.producer().send(OutgoingMessage.fixedTime("t", "payload", now).withId("order-42")).merged())
                .isFalse();
        List<Delivery> both = rmq.consumer("t", ConsumerSettings.DEFAULT).poll().deliveries();
        assertThat(both).extracting(Delivery::id).containsExactlyInAnyOrder(null, "order-42");
        assertThat(both).extracting(Delivery::bodyAsString).containsExactlyInAnyOrder("order-42", "payload");
    }

    @Test
    void anIdRoutesLikeAGroupOfTheSameNameAndAGroupOverridesTheId() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 16);
        Instant now = Instant.now();
        for (int i = 0; i < 20; i++) {
            SendResult byId = rmq.producer().send(OutgoingMessage.fixedTime("t", "p" + i, now).withId("key-" + i));
            SendResult byGroup = rmq.producer().send(OutgoingMessage.fixedTime("t", "q" + i, now).withGroup("key-" + i));
            SendResult both = rmq.producer().send(OutgoingMessage.fixedTime("t", "r" + i, now).withId("other-" + i)
                    .withGroup("key-" + i));
            assertThat(byId.slot()).isEqualTo(byGroup.slot()).isEqualTo(both.slot());
        }
    }

    @Test
    void batchesWithIdsMergeInOrderAndPlainMessagesBesideThemStayPlain() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 2);
        Instant now = Instant.now().minusSeconds(1);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int v = 1; v <= 3; v++) {
            for (int id = 0; id < 5; id++) {
                batch.add(OutgoingMessage.fixedTime("t", "id" + id + "-v" + v, now).withId("id-" + id)
                        .withHeader("v", Integer.toString(v)));
            }
        }
        batch.add(OutgoingMessage.fixedTime("t", "plain", now));
        assertThat(rmq.producer().sendBatch(batch).added()).isEqualTo(6);
        List<Delivery> got = rmq.consumer("t", ConsumerSettings.DEFAULT).poll().deliveries();
        assertThat(got).hasSize(6);
        for (Delivery d : got) {
            if (d.id() == null) {
                assertThat(d.bodyAsString()).isEqualTo("plain");
                assertThat(d.headers()).isEmpty();
            }
            else {
                assertThat(d.bodyAsString()).isEqualTo(d.id().replace("id-", "id") + "-v3");
                assertThat(d.headers()).isEqualTo(Map.of("v", "3"));
            }
        }
    }

    @Test
    void aBodyWithHeadersButNoIdMergesByBodyAndKeepsTheLatestHeaders() {
        rmq.defineTopic("t", TopicType.PRIORITY, 1);
        rmq.producer().send(OutgoingMessage.priority("t", "{\"sku\":1}", 1).withHeader("tenant", "acme"));
        rmq.producer().send(OutgoingMessage.priority("t", "{\"sku\":1}", 2).withHeader("tenant", "globex"));
        // a plain send of the same body merges too and, paying no lookup, leaves the headers stored
        rmq.producer().send(OutgoingMessage.priority("t", "{\"sku\":1}", 3));
        Delivery d = pollOne(rmq.consumer("t", ConsumerSettings.DEFAULT));
        assertThat(d.id()).isNull();
        assertThat(d.bodyAsString()).isEqualTo("{\"sku\":1}");
        assertThat(d.headers()).isEqualTo(Map.of("tenant", "globex"));
        assertThat(d.score()).isEqualTo(3.0);
    }

    @Test
    void orderlyStepsDeliverIdsWithTheirPayloadAndHeadersInOrder() {
        rmq.defineTopic("ledger", TopicType.FIXED_TIME, 1);
        long now = System.currentTimeMillis();
        for (int i = 0; i < 3; i++) {
            rmq.producer().send(OutgoingMessage.fixedTime("ledger", "entry-" + i, Instant.ofEpochMilli(now - 100 + i))
                    .withId("e" + i).withHeader("n", Integer.toString(i)));
        }
        // e1 again with a newer payload: merges (FIXED_TIME takes its time; it keeps its place before e2)
        rmq.producer().send(OutgoingMessage.fixedTime("ledger", "entry-1-b", Instant.ofEpochMilli(now - 99))
                .withId("e1").withHeader("n", "1b"));
        List<String> handled = new CopyOnWriteArrayList<>();
        ListenerContainer ordered = rmq.container("ledger", FAST, String.class, (String body, Delivery d) ->
                handled.add(d.id() + "=" + body + "/" + d.headers().get("n")),
                ContainerOptions.of("ledger", 1).withMode(io.rmq.core.ConsumeMode.ORDERLY));
        containers.add(ordered);
        ordered.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 3);
        assertThat(handled).containsExactly("e0=entry-0/0", "e1=entry-1-b/1b", "e2=entry-2/2");
        await().atMost(Duration.ofSeconds(30)).until(() -> envelopes("ledger") == 0);
    }

    @Test
    void aDeadIdMessageGoesToTheDeadLetterTopicWithItsIdHeadersAndStory() {
        rmq.defineTopic("payments", TopicType.FIXED_TIME, 2);
        rmq.producer().send(OutgoingMessage.fixedTime("payments", "{\"amount\":5}", Instant.now()).withId("pay-1")
                .withHeader("tenant", "acme"));
        ConsumerSettings oneRetry = new ConsumerSettings(50, Duration.ofSeconds(5),
                new RetryPolicy(1, BackoffPolicy.fixed(Duration.ZERO)),
                FailurePolicy.DEFAULT.withDeadLetterTopic("payments.dlt"));
        List<Delivery> recovered = new CopyOnWriteArrayList<>();
        try (LogCapture logs = LogCapture.rmq()) {
            ListenerContainer failing = rmq.container("payments", oneRetry, String.class, (String p, Delivery d) -> {
                throw new IllegalStateException("gateway down", new java.io.IOException("connection reset"));
            }, ContainerOptions.of("payments", 1));
            containers.add(failing);
            failing.start();
            ListenerContainer recovery = rmq.container("payments.dlt", FAST, String.class,
                    (String p, Delivery d) -> recovered.add(d), ContainerOptions.of("payments.dlt", 1));
            containers.add(recovery);
            recovery.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> recovered.size() == 1);
            assertThat(logs.messages()).anySatisfy(line -> assertThat(line).contains("sent on to dead-letter topic"));
        }
        Delivery dead = recovered.get(0);
        assertThat(dead.id()).isEqualTo("pay-1");
        assertThat(dead.bodyAsString()).isEqualTo("{\"amount\":5}");
        assertThat(dead.headers()).containsEntry("tenant", "acme")
                .containsEntry("rmq_dlt_original_topic", "payments")
                .containsEntry("rmq_dlt_exception", "java.io.IOException")
                .containsEntry("rmq_dlt_attempts", "2")
                .containsKeys("rmq_dlt_original_slot", "rmq_dlt_failed_at");
        assertThat(dead.headers().get("rmq_dlt_exception_message")).contains("gateway down");
        assertThat(Long.parseLong(dead.headers().get("rmq_dlt_failed_at")))
                .isCloseTo(System.currentTimeMillis(), org.assertj.core.data.Offset.offset(60_000L));
        assertThat(rmq.admin().deadCount("payments")).isZero();
        await().atMost(Duration.ofSeconds(30)).until(() -> envelopes("payments") == 0);
    }

    @Test
    void anIdMessageWhoseEnvelopeIsGoneEndsAsUnreadableWithAReasonNotAWrongPayload() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 1);
        rmq.producer().send(OutgoingMessage.fixedTime("t", "x", Instant.now().minusSeconds(1)).withId("lost"));
        // an operator deleted the slot's msg HASH by hand
        assertThat(redisAdmin(rmq).storedEnvelopes(slotOf("t", 0)).join()).isOne();
        raw(commands -> commands.del(slotOf("t", 0).msg()));
        List<String> seen = new CopyOnWriteArrayList<>();
        try (LogCapture logs = LogCapture.rmq()) {
            ListenerContainer c = rmq.container("t", FAST, String.class, (String body, Delivery d) -> seen.add(body),
                    ContainerOptions.of("t", 1));
            containers.add(c);
            c.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> rmq.admin().deadCount("t") == 1);
            assertThat(logs.messages()).anySatisfy(line -> assertThat(line).contains("has no stored payload"));
        }
        assertThat(seen).isEmpty();
        assertThat(new String(EnvelopeKeys.idMember("lost"), StandardCharsets.UTF_8)).endsWith("lost");
    }

    @Test
    void orphanedEnvelopesGoWhenTheSlotEmptiesUnlessDeadMessagesOwnThem() {
        rmq.defineTopic("t", TopicType.FIXED_TIME, 1);
        SlotKeys slot = slotOf("t", 0);
        byte[][] orphan = EnvelopeKeys.traceRecord("gone".getBytes(StandardCharsets.UTF_8),
                io.rmq.redis.internal.Envelope.encode(null,
                        Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")));
        // a native trace record whose ZADD a failover lost
        raw(commands -> commands.hset(slot.msg(), orphan[0], orphan[1]));
        rmq.producer().send(OutgoingMessage.fixedTime("t", "x", Instant.now().minusSeconds(1)).withId("dies"));
        RmqConsumer consumer = rmq.consumer("t", ConsumerSettings.DEFAULT);
        consumer.deadLetter(pollOne(consumer), "dead on purpose");
        assertThat(consumer.poll().deliveries()).isEmpty();
        assertThat(envelopes("t")).as("a dead message keeps the slot's envelopes").isEqualTo(2);

        assertThat(rmq.admin().deleteDead(rmq.admin().deadMessages("t", 0, 1).get(0).ref())).isTrue();
        assertThat(consumer.poll().deliveries()).isEmpty();
        assertThat(envelopes("t")).as("the empty slot's pop removed the orphan").isZero();
    }
}
