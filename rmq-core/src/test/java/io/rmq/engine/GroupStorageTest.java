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
import static org.awaitility.Awaitility.await;

/**
 * The group of a message sent to an ORDERLY topic is stored with it, as its envelope's first header
 * {@code rmq-group}, and delivered ({@link Delivery#group()}); CONCURRENT topics and topics whose mode the producer
 * does not know store none; a producer that knew a topic without a mode learns it from Redis.
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

    @Test
    void aGroupedSendToAnOrderlyTopicStoresTheGroupAsTheFirstHeader() {
        defineOrderly("o");
        rmq.producer().send(due("o", "a").withHeader("tenant", "acme").withGroup("acct-1"));
        rmq.producer().send(due("o", "plain"));

        Envelope a = storedBody("o", "a");
        assertThat(a).isNotNull();
        assertThat(a.payload()).isNull();
        assertThat(List.copyOf(a.headers().entrySet()))
                .containsExactly(Map.entry(GROUP, "acct-1"), Map.entry("tenant", "acme"));
        assertThat(storedBody("o", "plain")).as("sent without a group: nothing stored").isNull();
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

        assertThat(storedBody("o", "b1").headers()).containsExactly(Map.entry(GROUP, "g1"));
        assertThat(List.copyOf(storedBody("o", "b2").headers().entrySet()))
                .containsExactly(Map.entry(GROUP, "g2"), Map.entry("tenant", "acme"));
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
        assertThat(storedBody("late", "before")).as("no mode known yet").isNull();

        // a listener of another process registers the mode; this producer's cached definition has none
        newEngine().declareConsumeMode("late", ConsumeMode.ORDERLY);
        assertThat(rmq.topics().get("late").mode()).isNull();

        // a lookup runs at most every 10 s per topic: the first (above) found no mode, the next one finds ORDERLY
        AtomicInteger sent = new AtomicInteger();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            String body = "after-" + sent.incrementAndGet();
            rmq.producer().send(due("late", body).withGroup("acct-1"));
            Envelope stored = storedBody("late", body);
            return stored != null && "acct-1".equals(stored.headers().get(GROUP));
        });
        assertThat(rmq.topics().get("late").mode()).isEqualTo(ConsumeMode.ORDERLY);
        assertThat(sent.get()).as("sends until the lookup answered, at most every 10 s").isGreaterThan(1);
        assertThat(storedBody("late", "before")).as("what was sent before stays without a group").isNull();
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
