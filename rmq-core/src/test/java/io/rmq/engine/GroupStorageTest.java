package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.admin.MessageRef;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.FailurePolicy;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The group of a message sent to an ORDERLY topic is stored with it: a body's in its member (0xFE, the group's
 * length, the group, the body), an id message's as its envelope's first header {@code rmq-group}; it is delivered
 * ({@link Delivery#group()}, and first among the headers); CONCURRENT topics and topics whose mode the producer does
 * not know store none; a producer that knew a topic without a mode learns it from Redis.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class GroupStorageTest extends OrderlyTestSupport {

    GroupStorageTest(RedisTopology topology) {
        super(topology);
    }

    private static final String GROUP = Envelope.GROUP;

    private SlotKeys slot(String topic) {
        return redis(rmq).keys().slot(topic, 0);
    }

    /** The envelope stored for {@code member} in slot 0 of {@code topic}, or null. */
    private @Nullable Envelope stored(String topic, byte[] member) {
        byte[] stored = redisAdmin(rmq).storedEnvelope(slot(topic), member).join();
        return stored == null ? null : Envelope.decode(stored);
    }

    private @Nullable Envelope storedBody(String topic, String body) {
        return stored(topic, body.getBytes(StandardCharsets.UTF_8));
    }

    private long msgHashes(String topic) {
        return raw(c -> c.exists(slot(topic).msg()));
    }

    private static OutgoingMessage due(String topic, String body) {
        return OutgoingMessage.fixedTime(topic, body, Instant.now().minusSeconds(1));
    }

    private void defineOrderly(String topic) {
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        rmq.declareConsumeMode(topic, ConsumeMode.ORDERLY);
    }

    /** Whether slot 0 of {@code topic} holds {@code member} in its store. */
    private boolean waits(String topic, byte[] member) {
        return raw(c -> c.zscore(slot(topic).store(), member)) != null;
    }

    @Test
    void aGroupedBodyIsStoredWithItsGroupInItsMember() {
        // an engine that defined the topic before its mode was declared (and sent nothing there)
        io.rmq.Rmq admin = newEngine();
        admin.defineTopic("o", TopicType.FIXED_TIME, 1);
        defineOrderly("o");
        rmq.producer().send(due("o", "a").withGroup("acct-1"));
        rmq.producer().send(due("o", "h").withHeader("tenant", "acme").withGroup("acct-ü"));
        rmq.producer().send(due("o", "plain"));

        byte[] a = EnvelopeKeys.groupedMember("acct-1", "a".getBytes(StandardCharsets.UTF_8));
        assertThat(a).as("0xFE, the group's UTF-8 length, the group, the body")
                .containsExactly(0xFE - 256, 6, 'a', 'c', 'c', 't', '-', '1', 'a');
        assertThat(waits("o", a)).isTrue();
        assertThat(stored("o", a)).as("nothing beside a grouped body without headers").isNull();
        byte[] h = EnvelopeKeys.groupedMember("acct-ü", "h".getBytes(StandardCharsets.UTF_8));
        assertThat(waits("o", h)).isTrue();
        assertThat(List.copyOf(stored("o", h).headers().entrySet()))
                .as("its headers in its envelope, keyed by the member as any body's")
                .containsExactly(Map.entry("tenant", "acme"));
        assertThat(waits("o", "plain".getBytes(StandardCharsets.UTF_8))).as("sent without a group: the body").isTrue();
        assertThat(storedBody("o", "plain")).isNull();
        assertThat(EnvelopeKeys.groupOf(h)).isEqualTo("acct-ü");
        assertThat(EnvelopeKeys.bodyOf(h)).containsExactly('h');

        // the admin finds and shows them by body and group, and through a view's ref
        assertThat(rmq.admin().find(MessageRef.body("o", "h").inGroup("acct-ü")).headers())
                .containsExactly(Map.entry(GROUP, "acct-ü"), Map.entry("tenant", "acme"));
        var waiting = rmq.admin().browse("o", null, 10).messages();
        assertThat(waiting).extracting(m -> m.bodyAsString()).containsExactlyInAnyOrder("a", "h", "plain");
        var shown = waiting.stream().filter(m -> m.bodyAsString().equals("a")).findFirst().orElseThrow();
        assertThat(shown.headers()).containsExactly(Map.entry(GROUP, "acct-1"));
        // the engine that knows the topic without its mode learns it from Redis to find one by body and group
        assertThat(admin.topics().get("o").mode()).isNull();
        assertThat(admin.admin().find(MessageRef.body("o", "a").inGroup("acct-1")).waitingScore()).isNotNull();
        assertThat(admin.topics().get("o").mode()).isEqualTo(ConsumeMode.ORDERLY);
        assertThat(rmq.admin().cancel(shown.ref()).removedWaiting()).as("its ref names the grouped member").isTrue();
        assertThat(waits("o", a)).isFalse();
    }

    @Test
    void aBodyStartingWithAMemberTagIsRefusedWithNothingWritten() {
        defineOrderly("o");
        for (byte tag : new byte[] {(byte) 0xFE, (byte) 0xFF}) {
            byte[] body = {tag, 'x'};
            assertThatThrownBy(() -> rmq.producer().send(OutgoingMessage.fixedTime("o", body, Instant.now())
                    .withGroup("g"))).isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessageContaining("body").hasMessageContaining(tag == (byte) 0xFE ? "0xFE" : "0xFF")
                    .hasMessageContaining("reserved");
        }
        assertThat(rmq.admin().stats("o").waiting()).isZero();
        // with an id the body is a payload: any bytes
        rmq.producer().send(new OutgoingMessage("o", new byte[] {(byte) 0xFE, 'x'}, TopicType.FIXED_TIME,
                Instant.now().toEpochMilli(), "g", "id-1", Map.of()));
        assertThat(rmq.admin().stats("o").waiting()).isEqualTo(1);
    }

    @Test
    void anIdMessageWithAGroupStoresItsPayloadAndTheGroup() {
        defineOrderly("o");
        rmq.producer().send(due("o", "{\"amount\":5}").withId("pay-1").withGroup("acct-2"));

        Envelope stored = stored("o", EnvelopeKeys.idMember("pay-1"));
        assertThat(stored).isNotNull();
        assertThat(new String(stored.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"amount\":5}");
        assertThat(stored.headers()).containsExactly(Map.entry(GROUP, "acct-2"));
        assertThat(rmq.admin().find(MessageRef.id("o", "pay-1").inGroup("acct-2")).headers())
                .as("the admin view shows it")
                .containsExactly(Map.entry(GROUP, "acct-2"));
    }

    @Test
    void aBatchStoresTheGroupOfEachGroupedMessage() {
        defineOrderly("o");
        List<OutgoingMessage> batch = new ArrayList<>();
        batch.add(due("o", "b1").withGroup("g1"));
        batch.add(due("o", "b2").withGroup("g2").withHeader("tenant", "acme"));
        batch.add(due("o", "b3"));
        batch.add(due("o", "b4").withId("id-4").withGroup("g4"));
        assertThat(rmq.producer().sendBatch(batch).added()).isEqualTo(4);

        assertThat(waits("o", EnvelopeKeys.groupedMember("g1", "b1".getBytes(StandardCharsets.UTF_8)))).isTrue();
        byte[] b2 = EnvelopeKeys.groupedMember("g2", "b2".getBytes(StandardCharsets.UTF_8));
        assertThat(waits("o", b2)).isTrue();
        assertThat(stored("o", b2).headers()).containsExactly(Map.entry("tenant", "acme"));
        assertThat(waits("o", "b3".getBytes(StandardCharsets.UTF_8))).isTrue();
        assertThat(storedBody("o", "b3")).isNull();
        assertThat(stored("o", EnvelopeKeys.idMember("id-4")).headers()).containsExactly(Map.entry(GROUP, "g4"));
    }

    @Test
    void concurrentTopicsAndTopicsOfUnknownModeStoreNoGroup() {
        rmq.defineTopic("c", TopicType.FIXED_TIME, 1);
        rmq.declareConsumeMode("c", ConsumeMode.CONCURRENT);
        rmq.defineTopic("u", TopicType.FIXED_TIME, 1);
        rmq.producer().send(due("c", "a").withGroup("acct-1"));
        rmq.producer().sendBatch(List.of(due("c", "b").withGroup("acct-1"), due("c", "c").withGroup("acct-2")));
        rmq.producer().send(due("u", "a").withGroup("acct-1"));

        assertThat(msgHashes("c")).as("no msg hash on a CONCURRENT topic").isZero();
        assertThat(msgHashes("u")).as("no msg hash on a topic whose mode nobody declared").isZero();
        assertThat(rmq.admin().stats("c").waiting()).isEqualTo(3);
        // an id message has its envelope anyway, without the group
        rmq.producer().send(due("c", "p").withId("pay-1").withGroup("acct-1"));
        assertThat(stored("c", EnvelopeKeys.idMember("pay-1")).headers()).isEmpty();
    }

    @Test
    void aProducerThatDefinedTheTopicWithoutAModeLearnsOrderlyFromRedis() {
        rmq.defineTopic("late", TopicType.FIXED_TIME, 1);
        rmq.producer().send(due("late", "before").withGroup("acct-1"));
        assertThat(waits("late", "before".getBytes(StandardCharsets.UTF_8))).as("no mode known yet: the body").isTrue();

        // a listener of another process registers the mode; this producer's cached definition has none
        newEngine().declareConsumeMode("late", ConsumeMode.ORDERLY);
        assertThat(rmq.topics().get("late").mode()).isNull();

        // a lookup runs at most every 10 s per topic: the first (above) found no mode, the next one finds ORDERLY
        AtomicInteger sent = new AtomicInteger();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            String body = "after-" + sent.incrementAndGet();
            rmq.producer().send(due("late", body).withGroup("acct-1"));
            return waits("late", EnvelopeKeys.groupedMember("acct-1", body.getBytes(StandardCharsets.UTF_8)));
        });
        assertThat(rmq.topics().get("late").mode()).isEqualTo(ConsumeMode.ORDERLY);
        assertThat(sent.get()).as("sends until the lookup answered, at most every 10 s").isGreaterThan(1);
        assertThat(waits("late", "before".getBytes(StandardCharsets.UTF_8)))
                .as("what was sent before stays without a group").isTrue();
    }

    @Test
    void anOrderlyListenerSeesTheGroupOfEachMessage() {
        defineOrderly("o");
        rmq.producer().send(due("o", "first").withGroup("acct-7").withHeader("tenant", "acme"));
        rmq.producer().send(OutgoingMessage.fixedTime("o", "second", Instant.now()));
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        ListenerContainer container = rmq.container("o", ORDERED, String.class,
                (String body, Delivery d) -> seen.add(d), ContainerOptions.of("o-groups", 1).withMode(ConsumeMode.ORDERLY));
        containers.add(container);
        container.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> seen.size() == 2);

        Delivery first = seen.get(0);
        assertThat(first.bodyAsString()).isEqualTo("first");
        assertThat(first.group()).isEqualTo("acct-7");
        assertThat(List.copyOf(first.headers().entrySet()))
                .containsExactly(Map.entry(GROUP, "acct-7"), Map.entry("tenant", "acme"));
        assertThat(seen.get(1).group()).isNull();
        assertThat(seen.get(1).headers()).isEmpty();
        await().atMost(Duration.ofSeconds(30)).until(() -> redisAdmin(rmq).storedEnvelopes(slot("o")).join() == 0);
    }

    /**
     * The engine before grouped members stored a body's group as its envelope's first header: such messages are still
     * run in their groups (a failing head suspends its group only), delivered with their groups, and their envelopes
     * go with them.
     */
    @Test
    void groupsThePreviousEngineStoredInEnvelopesAreStillRunInTheirGroups() {
        defineOrderly("o");
        SlotKeys slot = slot("o");
        long due = System.currentTimeMillis() - 10_000;
        String[][] previous = {{"a1", "A"}, {"a2", "A"}, {"b1", "B"}};
        for (int i = 0; i < previous.length; i++) {
            byte[] body = previous[i][0].getBytes(StandardCharsets.UTF_8);
            byte[] envelope = Envelope.encode(null, Map.of(GROUP, previous[i][1]));
            long score = due + i;
            raw(c -> c.hset(slot.msg(), EnvelopeKeys.of(body), envelope));
            raw(c -> c.zadd(slot.store(), score, body));
        }
        rmq.producer().send(OutgoingMessage.fixedTime("o", "c1", Instant.ofEpochMilli(due + 5)).withGroup("C"));
        List<String> handled = new CopyOnWriteArrayList<>();
        Map<String, String> groups = new java.util.concurrent.ConcurrentHashMap<>();
        AtomicInteger a1Tries = new AtomicInteger();
        ConsumerSettings oneRetry = new ConsumerSettings(8, Duration.ofSeconds(5),
                new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofSeconds(2))), FailurePolicy.DEFAULT);
        try (LogCapture logs = LogCapture.rmq()) {
            ListenerContainer container = rmq.container("o", oneRetry, String.class, (String body, Delivery d) -> {
                if (body.equals("a1") && a1Tries.incrementAndGet() == 1) {
                    throw new IllegalStateException("a1 refused once on purpose");
                }
                groups.put(body, String.valueOf(d.group()));
                handled.add(body);
            }, ContainerOptions.of("o-previous", 4).withMode(ConsumeMode.ORDERLY));
            containers.add(container);
            container.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 4);
            assertThat(logs.messages()).anySatisfy(line -> assertThat(line).contains("a1 refused once on purpose"));
        }
        assertThat(handled.indexOf("b1")).as("group B went on while A's head waited for its retry")
                .isLessThan(handled.indexOf("a1"));
        assertThat(handled.indexOf("c1")).isLessThan(handled.indexOf("a1"));
        assertThat(handled.indexOf("a1")).as("A in order").isLessThan(handled.indexOf("a2"));
        assertThat(groups).containsExactlyInAnyOrderEntriesOf(Map.of("a1", "A", "a2", "A", "b1", "B", "c1", "C"));
        await().atMost(Duration.ofSeconds(30)).until(() -> redisAdmin(rmq).storedEnvelopes(slot).join() == 0);
    }

    @Test
    void aDeadLetterOfAGroupedOrderlyMessageKeepsItsGroup() {
        defineOrderly("ledger");
        rmq.defineTopic("ledger.dlt", TopicType.FIXED_TIME, 1);
        rmq.declareConsumeMode("ledger.dlt", ConsumeMode.ORDERLY);
        rmq.producer().send(due("ledger", "entry").withGroup("acct-9").withHeader("tenant", "acme"));
        ConsumerSettings noRetry = new ConsumerSettings(8, Duration.ofSeconds(5),
                new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)),
                FailurePolicy.DEFAULT.withDeadLetterTopic("ledger.dlt"));
        List<Delivery> recovered = new CopyOnWriteArrayList<>();
        try (LogCapture logs = LogCapture.rmq()) {
            ListenerContainer failing = rmq.container("ledger", noRetry, String.class, (String p, Delivery d) -> {
                throw new IllegalStateException("refused on purpose");
            }, ContainerOptions.of("ledger", 1).withMode(ConsumeMode.ORDERLY));
            containers.add(failing);
            failing.start();
            ListenerContainer recovery = rmq.container("ledger.dlt", ORDERED, String.class,
                    (String p, Delivery d) -> recovered.add(d),
                    ContainerOptions.of("ledger.dlt", 1).withMode(ConsumeMode.ORDERLY));
            containers.add(recovery);
            recovery.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> recovered.size() == 1);
            assertThat(logs.messages()).anySatisfy(line -> assertThat(line).contains("sent on to dead-letter topic"));
        }
        Delivery dead = recovered.get(0);
        assertThat(dead.group()).isEqualTo("acct-9");
        assertThat(dead.headers()).containsEntry("tenant", "acme").containsEntry("rmq_dlt_original_topic", "ledger");
        assertThat(dead.headers().keySet().iterator().next()).isEqualTo(GROUP);
    }
}
