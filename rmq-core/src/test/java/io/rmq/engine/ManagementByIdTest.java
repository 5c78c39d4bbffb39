package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.rmq.admin.CancelResult;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.admin.RescheduleResult;
import io.rmq.admin.WaitingMessage;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.NackOutcome;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.SlotRouter;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Managing messages by the id they were sent with (find, contains, cancel, reschedule, reprioritize), and the admin
 * views (browse, find, dead page) showing id, payload and headers.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ManagementByIdTest extends EngineTestSupport {

    ManagementByIdTest(RedisTopology topology) {
        super(topology);
    }

    record Price(String product, long cents) {
    }

    private static final ConsumerSettings NO_RETRY = new ConsumerSettings(100, Duration.ofSeconds(5),
            new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));

    private static final Instant LATER = Instant.now().plus(Duration.ofHours(1));

    private static final int SLOTS = 8;

    /** A message of the topic's type, due in an hour (PRIORITY: priority 1). */
    private OutgoingMessage later(String topic, Object body) {
        return switch (rmq.topics().get(topic).type()) {
            case RANGE_MERGE -> OutgoingMessage.rangeMerge(topic, body, Duration.ofHours(1));
            case PRIORITY -> OutgoingMessage.priority(topic, body, 1);
            case FIXED_TIME -> OutgoingMessage.fixedTime(topic, body, LATER);
        };
    }

    /** A message due now (PRIORITY: priority 1). */
    private OutgoingMessage now(String topic, Object body) {
        return rmq.topics().get(topic).type() == TopicType.PRIORITY ? OutgoingMessage.priority(topic, body, 1)
                : OutgoingMessage.fixedTime(topic, body, Instant.now().minusSeconds(1));
    }

    /** Envelopes stored in all slots of the topic (HLEN of each slot's msg HASH). */
    private long envelopes(String topic) {
        long total = 0;
        for (int slot = 0; slot < rmq.topics().get(topic).slotAmount(); slot++) {
            total += redisAdmin(rmq).storedEnvelopes(redis(rmq).keys().slot(topic, slot)).join();
        }
        return total;
    }

    private static int slotOf(String key, int slots) {
        return SlotRouter.slot(key.getBytes(StandardCharsets.UTF_8), slots);
    }

    private static Delivery only(List<Delivery> deliveries) {
        assertThat(deliveries).hasSize(1);
        return deliveries.get(0);
    }

    @Test
    void findContainsAndCancelByIdOnEveryTopicType() {
        for (TopicType type : TopicType.values()) {
            String topic = "prices-" + type.name().toLowerCase(java.util.Locale.ROOT);
            rmq.defineTopic(topic, type, SLOTS);
            rmq.producer().send(later(topic, new Price("p-42", 100)).withId("product-42").withHeader("tenant", "a"));
            rmq.producer().send(later(topic, new Price("p-42", 120)).withId("product-42").withHeader("tenant", "b"));
            rmq.producer().send(later(topic, new Price("p-7", 5)).withId("product-7"));

            MessageStatus found = rmq.admin().find(MessageRef.id(topic, "product-42"));
            assertThat(found.isWaiting()).as(topic).isTrue();
            assertThat(found.id()).isEqualTo("product-42");
            assertThat(found.slot()).as("routed by the id, as a send routes it").isEqualTo(slotOf("product-42", SLOTS));
            assertThat(found.bodyAsString()).as("the latest send's payload").isEqualTo("{\"cents\":120,\"product\":\"p-42\"}");
            assertThat(found.headers()).containsExactly(Map.entry("tenant", "b"));
            assertThat(rmq.admin().contains(MessageRef.id(topic, "product-42"))).isTrue();
            assertThat(rmq.admin().find(MessageRef.body(topic, new Price("p-42", 120))).exists())
                    .as("the payload is not its identity")
                    .isFalse();
            assertThat(rmq.admin().stats(topic).waiting()).isEqualTo(2);

            CancelResult cancelled = rmq.admin().cancel(MessageRef.id(topic, "product-42"));
            assertThat(cancelled).isEqualTo(new CancelResult(true, false, false, false));
            assertThat(rmq.admin().contains(MessageRef.id(topic, "product-42"))).isFalse();
            MessageStatus gone = rmq.admin().find(MessageRef.id(topic, "product-42"));
            assertThat(gone.exists()).isFalse();
            assertThat(gone.id()).isEqualTo("product-42");
            assertThat(gone.body()).as("no payload stored any more").isEmpty();
            assertThat(gone.headers()).isEmpty();
            assertThat(rmq.admin().cancel(MessageRef.id(topic, "product-42")).found()).isFalse();
            assertThat(envelopes(topic)).as("only product-7's envelope is left").isEqualTo(1);
            assertThat(rmq.admin().contains(MessageRef.id(topic, "product-7"))).isTrue();
        }
    }

    @Test
    void anIdSentWithAGroupIsFoundWithTheSameGroup() {
        rmq.defineTopic("ledger", TopicType.FIXED_TIME, 16);
        String id = "entry-1";
        String group = "account-1";
        for (int i = 2; slotOf(group, 16) == slotOf(id, 16); i++) {
            group = "account-" + i; // a group that routes elsewhere than the id itself
        }
        rmq.producer().send(OutgoingMessage.fixedTime("ledger", "debit 10", LATER).withId(id).withGroup(group));

        assertThat(rmq.admin().find(MessageRef.id("ledger", id)).exists()).as("looked for in the id's own slot")
                .isFalse();
        MessageStatus found = rmq.admin().find(MessageRef.id("ledger", id).inGroup(group));
        assertThat(found.isWaiting()).isTrue();
        assertThat(found.slot()).isEqualTo(slotOf(group, 16));
        assertThat(found.bodyAsString()).isEqualTo("debit 10");
        assertThat(rmq.admin().contains(MessageRef.id("ledger", id).inGroup(group))).isTrue();
        assertThat(rmq.admin().reschedule(MessageRef.id("ledger", id).inGroup(group), LATER.plusSeconds(60)))
                .isEqualTo(RescheduleResult.RESCHEDULED);
        assertThat(rmq.admin().find(MessageRef.id("ledger", id).inGroup(group)).waitingScore())
                .isEqualTo((double) LATER.plusSeconds(60).toEpochMilli());
        assertThat(rmq.admin().cancel(MessageRef.id("ledger", id).inGroup(group)).cancelled()).isTrue();
        assertThat(rmq.admin().stats("ledger").waiting()).isZero();
        assertThat(envelopes("ledger")).isZero();
    }

    @Test
    void rescheduleByIdGivesAWaitingMessageANewTimeAndItIsDeliveredWithItsPayloadAndHeaders() {
        for (TopicType type : List.of(TopicType.RANGE_MERGE, TopicType.FIXED_TIME)) {
            String topic = "digest-" + type.name().toLowerCase(java.util.Locale.ROOT);
            rmq.defineTopic(topic, type, 4);
            rmq.producer().send(later(topic, "newest state").withId("user-1").withHeader("kind", "digest"));
            RmqConsumer consumer = rmq.consumer(topic, FAST);
            assertThat(consumer.poll().deliveries()).isEmpty();

            assertThat(rmq.admin().reschedule(MessageRef.id(topic, "user-1"), Instant.now().minusSeconds(5)))
                    .as(topic).isEqualTo(RescheduleResult.RESCHEDULED);
            Delivery delivery = only(consumer.poll().deliveries());
            assertThat(delivery.id()).isEqualTo("user-1");
            assertThat(delivery.bodyAsString()).isEqualTo("newest state");
            assertThat(delivery.headers()).containsExactly(Map.entry("kind", "digest"));
            assertThat(rmq.admin().reschedule(MessageRef.id(topic, "user-1"), LATER))
                    .isEqualTo(RescheduleResult.IN_FLIGHT);
            assertThat(rmq.admin().find(MessageRef.id(topic, "user-1")).inFlight()).isTrue();
            consumer.ack(delivery);
            assertThat(rmq.admin().reschedule(MessageRef.id(topic, "user-1"), LATER))
                    .isEqualTo(RescheduleResult.NOT_FOUND);
            assertThat(envelopes(topic)).isZero();
        }
    }

    @Test
    void reprioritizeByIdReordersAWaitingPriorityMessage() {
        rmq.defineTopic("render", TopicType.PRIORITY, 4);
        rmq.producer().send(OutgoingMessage.priority("render", "small job", 1).withId("small"));
        rmq.producer().send(OutgoingMessage.priority("render", "big job", 5).withId("big"));
        assertThat(rmq.admin().reprioritize(MessageRef.id("render", "small"), 10))
                .isEqualTo(RescheduleResult.RESCHEDULED);
        assertThat(rmq.admin().find(MessageRef.id("render", "small")).waitingScore()).isEqualTo(10.0);
        assertThat(rmq.admin().browse("render", null, 10).messages()).extracting(WaitingMessage::id)
                .containsExactly("small", "big");
        RmqConsumer consumer = rmq.consumer("render", FAST.withBatchSize(1));
        Delivery first = consumer.poll().deliveries().get(0);
        assertThat(first.id()).isEqualTo("small");
        assertThat(first.bodyAsString()).isEqualTo("small job");
        assertThat(first.score()).isEqualTo(10);
    }

    @Test
    void byIdMethodsRejectBadInputNamingTheRule() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 2);
        rmq.defineTopic("ranked", TopicType.PRIORITY, 2);
        assertThatThrownBy(() -> rmq.admin().find(MessageRef.id("timed", "")))
                .isInstanceOf(RmqInvalidArgumentException.class)
                .hasMessage("Invalid id '': must not be empty (topic 'timed')");
        assertThatThrownBy(() -> rmq.admin().cancel(MessageRef.id("timed", null)))
                .hasMessage("Invalid id 'null': must not be null (topic 'timed')");
        assertThatThrownBy(() -> rmq.admin().contains(MessageRef.id("timed", "x").inGroup("")))
                .hasMessage("Invalid group '': must be null or non-empty (topic 'timed')");
        assertThatThrownBy(() -> rmq.admin().reprioritize(MessageRef.id("timed", "x"), 3))
                .hasMessageContaining("orders by time: use reschedule(message, dueAt)");
        assertThatThrownBy(() -> rmq.admin().reschedule(MessageRef.id("ranked", "x"), Instant.now()))
                .hasMessageContaining("orders by priority: use reprioritize(message, priority)");
        assertThatThrownBy(() -> rmq.admin().reschedule(MessageRef.id("timed", "x"), null))
                .hasMessage("Invalid dueAt 'null': must not be null");
        assertThatThrownBy(() -> rmq.admin().reprioritize(MessageRef.id("ranked", "x"), Long.MAX_VALUE))
                .hasMessageContaining("Invalid priority");
        assertThatThrownBy(() -> rmq.admin().cancel(MessageRef.id("no-such-topic", "x")))
                .hasMessageContaining("Invalid topic 'no-such-topic': is not defined");
    }

    @Test
    void browseShowsIdPayloadAndHeadersAndAMessageWithHeadersButNoIdShowsItsHeaders() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 4);
        rmq.producer().send(OutgoingMessage.fixedTime("timed", "price 120", LATER).withId("product-42")
                .withHeader("tenant", "acme").withHeader("schema", "2"));
        rmq.producer().send(OutgoingMessage.fixedTime("timed", "plain with headers", LATER.plusMillis(1))
                .withHeader("tenant", "globex"));
        rmq.producer().send(OutgoingMessage.fixedTime("timed", "plain", LATER.plusMillis(2)));

        List<WaitingMessage> page = rmq.admin().browse("timed", null, 10).messages();
        assertThat(page).extracting(WaitingMessage::id).containsExactly("product-42", null, null);
        assertThat(page).extracting(WaitingMessage::bodyAsString)
                .containsExactly("price 120", "plain with headers", "plain");
        assertThat(page.get(0).headers()).containsExactly(Map.entry("tenant", "acme"), Map.entry("schema", "2"));
        assertThat(page.get(1).headers()).containsExactly(Map.entry("tenant", "globex"));
        assertThat(page.get(2).headers()).isEmpty();
        assertThat(page.get(0).slot()).isEqualTo(slotOf("product-42", 4));

        MessageStatus byBody = rmq.admin().find(MessageRef.body("timed", "plain with headers"));
        assertThat(byBody.id()).isNull();
        assertThat(byBody.bodyAsString()).isEqualTo("plain with headers");
        assertThat(byBody.headers()).containsExactly(Map.entry("tenant", "globex"));
        assertThat(rmq.admin().find(MessageRef.body("timed", "plain")).headers()).isEmpty();
    }

    @Test
    void aDeadIdMessageShowsItsIdPayloadAndHeadersAndIsRequeuedWithThem() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        rmq.producer().send(now("jobs", "job payload").withId("job-9").withHeader("tenant", "acme"));
        rmq.producer().send(now("jobs", "body job").withHeader("tenant", "globex"));
        RmqConsumer consumer = rmq.consumer("jobs", NO_RETRY);
        List<Delivery> deliveries = consumer.poll().deliveries();
        assertThat(deliveries).hasSize(2);
        for (Delivery d : deliveries) {
            assertThat(consumer.nack(d, "bad input")).isEqualTo(NackOutcome.DEAD);
        }

        List<DeadMessage> dead = rmq.admin().deadMessages("jobs", 0, 10);
        assertThat(dead).hasSize(2);
        DeadMessage byId = dead.stream().filter(m -> m.id() != null).findFirst().orElseThrow();
        assertThat(byId.id()).isEqualTo("job-9");
        assertThat(byId.bodyAsString()).isEqualTo("job payload");
        assertThat(byId.headers()).containsExactly(Map.entry("tenant", "acme"));
        assertThat(byId.lastError()).isEqualTo("bad input");
        DeadMessage byBody = dead.stream().filter(m -> m.id() == null).findFirst().orElseThrow();
        assertThat(byBody.bodyAsString()).isEqualTo("body job");
        assertThat(byBody.headers()).as("headers without an id").containsExactly(Map.entry("tenant", "globex"));

        MessageStatus status = rmq.admin().find(MessageRef.id("jobs", "job-9"));
        assertThat(status.isDead()).isTrue();
        assertThat(status.deadReason()).isEqualTo("bad input");
        assertThat(status.bodyAsString()).isEqualTo("job payload");
        assertThat(status.headers()).containsExactly(Map.entry("tenant", "acme"));
        assertThat(rmq.admin().cancel(MessageRef.id("jobs", "job-9")))
                .isEqualTo(new CancelResult(false, false, false, true));

        assertThat(rmq.admin().requeueDead(byId.ref())).isTrue();
        Delivery again = only(consumer.poll().deliveries());
        assertThat(again.id()).isEqualTo("job-9");
        assertThat(again.bodyAsString()).isEqualTo("job payload");
        assertThat(again.headers()).containsExactly(Map.entry("tenant", "acme"));
        assertThat(again.attempt()).isEqualTo(1);
        assertThat(consumer.ack(again)).isTrue();
        assertThat(envelopes("jobs")).as("the body message's envelope stays while it is dead").isEqualTo(1);

        assertThat(rmq.admin().deleteDead(byBody.ref())).isTrue();
        assertThat(rmq.admin().deadCount("jobs")).isZero();
        assertThat(envelopes("jobs")).isZero();
    }

    @Test
    void anInFlightIdMessageCancelledAndSentAgainIsDeliveredWithTheNewestPayload() {
        rmq.defineTopic("orders", TopicType.FIXED_TIME, 4);
        rmq.producer().send(now("orders", "v1").withId("order-1").withHeader("rev", "1"));
        RmqConsumer consumer = rmq.consumer("orders", FAST);
        Delivery first = only(consumer.poll().deliveries());
        assertThat(first.bodyAsString()).isEqualTo("v1");

        assertThat(rmq.admin().cancel(MessageRef.id("orders", "order-1")))
                .isEqualTo(new CancelResult(false, false, true, false));
        assertThat(rmq.admin().find(MessageRef.id("orders", "order-1")).cancelled()).isTrue();
        rmq.producer().send(now("orders", "v2").withId("order-1").withHeader("rev", "2"));
        MessageStatus both = rmq.admin().find(MessageRef.id("orders", "order-1"));
        assertThat(both.inFlight()).isTrue();
        assertThat(both.isWaiting()).isTrue();
        assertThat(both.bodyAsString()).isEqualTo("v2");

        // the cancelled delivery fails: dropped, not retried; the new send stays and keeps its envelope
        assertThat(consumer.nack(first, "failed on purpose")).isEqualTo(NackOutcome.DROPPED);
        Delivery second = only(consumer.poll().deliveries());
        assertThat(second.id()).isEqualTo("order-1");
        assertThat(second.bodyAsString()).isEqualTo("v2");
        assertThat(second.headers()).containsExactly(Map.entry("rev", "2"));
        assertThat(second.attempt()).isEqualTo(1);
        assertThat(consumer.ack(second)).isTrue();
        assertThat(rmq.admin().find(MessageRef.id("orders", "order-1")).exists()).isFalse();
        assertThat(envelopes("orders")).isZero();
    }

    @Test
    void purgeAndDeadDeletionRemoveTheEnvelopes() {
        rmq.defineTopic("timed", TopicType.FIXED_TIME, 4);
        rmq.defineTopic("ranked", TopicType.PRIORITY, 4);
        for (int i = 0; i < 10; i++) {
            rmq.producer().send(later("timed", "payload " + i).withId("id-" + i).withHeader("n", "" + i));
            rmq.producer().send(later("ranked", "body " + i).withHeader("n", "" + i));
        }
        assertThat(envelopes("timed")).isEqualTo(10);
        assertThat(envelopes("ranked")).isEqualTo(10);
        assertThat(rmq.admin().purge("timed")).isEqualTo(10);
        assertThat(rmq.admin().purge("ranked")).isEqualTo(10);
        assertThat(envelopes("timed")).isZero();
        assertThat(envelopes("ranked")).isZero();

        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 4);
        for (int i = 0; i < 6; i++) {
            rmq.producer().send(now("jobs", "payload " + i).withId("job-" + i).withHeader("n", "" + i));
        }
        RmqConsumer consumer = rmq.consumer("jobs", NO_RETRY);
        for (Delivery d : consumer.poll().deliveries()) {
            assertThat(consumer.nack(d, "bad input")).isEqualTo(NackOutcome.DEAD);
        }
        assertThat(rmq.admin().deadCount("jobs")).isEqualTo(6);
        assertThat(envelopes("jobs")).as("dead messages keep their envelopes").isEqualTo(6);
        DeadMessage one = rmq.admin().deadMessages("jobs", 0, 1).get(0);
        assertThat(rmq.admin().deleteDead(one.ref())).isTrue();
        assertThat(envelopes("jobs")).isEqualTo(5);
        assertThat(rmq.admin().find(MessageRef.id("jobs", one.id())).exists()).isFalse();
        assertThat(rmq.admin().purgeDead("jobs")).isEqualTo(5);
        assertThat(envelopes("jobs")).isZero();
    }
}
