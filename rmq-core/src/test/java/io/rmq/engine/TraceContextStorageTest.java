package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.DeadMessage;
import io.rmq.admin.MessageRef;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotClaims;
import io.rmq.consumer.FailureDecision;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer.OrderedStep;
import io.rmq.observe.RmqInstrumentation;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicType;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.Envelope;
import io.rmq.redis.internal.EnvelopeKeys;
import io.rmq.redis.internal.RmqRedisLeases;
import io.rmq.test.RedisTopology;
import io.rmq.redis.internal.Popped;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;

/**
 * Trace context stored beside the message (propagation on): written by the send only when it carries one, returned
 * by pops only when asked, merged by the rules the README states, and removed with the message on every path that
 * removes the body for good — but not while a copy of the body is still in the slot.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class TraceContextStorageTest extends EngineTestSupport {

    TraceContextStorageTest(RedisTopology topology) {
        super(topology);
    }

    private static final String BODY = "{\"id\":1}";
    private static final Map<String, String> FIRST = Map.of("traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    private static final Map<String, String> SECOND = Map.of("traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate", "congo=t61rcWkgMzE,rojo=x");

    /** A context of a traceparent alone, like FIRST (stored as a compact trace record). */
    private static final Map<String, String> THIRD = Map.of("traceparent",
            "00-5bf92f3577b34da6a3ce929d0e0e4736-10f067aa0ba902b7-00");

    private static final ConsumerSettings NO_RETRY = new ConsumerSettings(100, Duration.ofSeconds(5),
            new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));

    /** An engine on the same keys whose consumers read contexts. */
    private Rmq reading;
    /** An engine on the same keys whose sends carry {@link #nextContext} (as an observation's send scope would). */
    private Rmq sending;
    private final AtomicReference<Map<String, String>> nextContext = new AtomicReference<>(Map.of());

    @BeforeEach
    void engines() {
        reading = newEngineWith(RmqOptions.DEFAULT.withKeyPrefix(prefix).withPropagateContext(true));
        RmqInstrumentation propagating = new RmqInstrumentation() {
            @Override
            public SendScope sendStarted(String topic, int messages) {
                Map<String, String> context = nextContext.get();
                return new SendScope() {
                    @Override
                    public Map<String, String> context() {
                        return context;
                    }
                };
            }
        };
        sending = newEngineWith(RmqOptions.DEFAULT.withKeyPrefix(prefix).withInstrumentation(propagating));
    }

    /** Sends with {@code context} as the send scope's context. */
    private void withContext(Map<String, String> context, Runnable send) {
        nextContext.set(context);
        try {
            send.run();
        }
        finally {
            nextContext.set(Map.of());
        }
    }

    private Rmq newEngineWith(RmqOptions options) {
        Rmq engine = Rmq.create(client, options);
        extraEngines.add(engine);
        return engine;
    }

    private final List<Rmq> extraEngines = new java.util.ArrayList<>();

    @org.junit.jupiter.api.AfterEach
    void closeExtra() {
        extraEngines.forEach(Rmq::close);
    }

    private void define(String topic, TopicType type) {
        rmq.defineTopic(topic, type, 1);
        reading.defineTopic(topic, type, 1);
        sending.defineTopic(topic, type, 1);
    }

    private SlotKeys slot(String topic) {
        return redis(rmq).keys().slot(topic, 0);
    }

    private Map<String, String> stored(String topic, String body) {
        byte[] stored = redisAdmin(rmq).storedEnvelope(slot(topic), bytes(body)).join();
        return stored == null ? Map.of() : Envelope.decode(stored).headers();
    }

    private long storedCount(String topic) {
        return redisAdmin(rmq).storedEnvelopes(slot(topic)).join();
    }

    private void sendNow(String topic, String body, Map<String, String> context) {
        withContext(context, () -> sending.producer().send(
                OutgoingMessage.fixedTime(topic, body, Instant.now().minusSeconds(1))));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Delivery only(List<Delivery> deliveries) {
        assertThat(deliveries).hasSize(1);
        return deliveries.get(0);
    }

    @Test
    void aSendWithAContextStoresItAndAReadingConsumerGetsItBackAndTheAckRemovesIt() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, SECOND);
        assertThat(stored("t", BODY)).isEqualTo(SECOND);

        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", ConsumerSettings.DEFAULT);
        Delivery delivery = only(consumer.poll().deliveries());
        assertThat(delivery.context()).isEqualTo(SECOND);
        assertThat(stored("t", BODY)).as("kept while in flight").isEqualTo(SECOND);

        assertThat(consumer.ack(delivery)).isTrue();
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void aTraceRecordIsForgottenByAnAckThatNamesItsBodysKeyAndByOneThatDoesNot() {
        // consumers read trace records themselves and name each body's envelope key in the ack; an ack that names none
        // (an older client, a delivery whose pop found no records) leaves the script to derive it: both forget the
        // record
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        sendNow("t", "{\"id\":9}", THIRD);
        long records = raw(c -> c.hlen(slot("t").trace()));
        long msgHashes = raw(c -> c.exists(slot("t").msg()));
        assertThat(records).as("two compact trace records, in the trace hash").isEqualTo(2);
        assertThat(msgHashes).as("no msg hash for contexts alone").isZero();

        RmqRedisLeases.PopResult popped = redis(rmq).leases().pop(slot("t"), false, 10, 5_000, RetryPolicy.DEFAULT)
                .join();
        assertThat(popped.messages()).hasSize(2).allSatisfy(p -> assertThat(p.envelopeKey()).isNotNull());
        assertThat(popped.messages()).extracting(p -> Envelope.decode(p.envelope()).headers())
                .containsExactlyInAnyOrder(FIRST, THIRD);

        Popped named = popped.messages().get(0);
        Popped unnamed = popped.messages().get(1);
        assertThat(redis(rmq).leases().ack(slot("t"), false, List.of(named.member()), List.of(popped.token()),
                List.of(named.envelopeKey())).join()).containsExactly(1L);
        assertThat(storedCount("t")).isOne();
        assertThat(redis(rmq).leases().ack(slot("t"), false, List.of(unnamed.member()), List.of(popped.token())).join())
                .containsExactly(1L);
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void aBodyReadWithNothingBesideItIsAckedWithoutLookUpsAndANewerSampledDuplicateKeepsItsRecord() {
        // with propagation on at a low sampling rate most bodies of a slot with trace records have none: the consumer
        // names them as such in the ack, which then looks nothing up for them
        define("t", TopicType.FIXED_TIME);
        sendNow("t", "{\"id\":9}", FIRST);
        sendNow("t", BODY, Map.of());
        RmqRedisLeases.PopResult popped = redis(rmq).leases().pop(slot("t"), false, 10, 5_000, RetryPolicy.DEFAULT)
                .join();
        Popped plain = popped.messages().stream().filter(p -> new String(p.member(), StandardCharsets.UTF_8)
                .equals(BODY)).findFirst().orElseThrow();
        Popped traced = popped.messages().stream().filter(p -> p != plain).findFirst().orElseThrow();
        assertThat(plain.envelope()).isNull();
        assertThat(plain.envelopeKey()).isEqualTo(EnvelopeKeys.NOTHING_STORED);
        assertThat(traced.envelopeKey()).isEqualTo(EnvelopeKeys.of(traced.member()));
        Map<String, Long> before = commandCalls();
        assertThat(redis(rmq).leases().ack(slot("t"), false, List.of(plain.member()), List.of(popped.token()),
                List.of(plain.envelopeKey())).join()).containsExactly(1L);
        Map<String, Long> after = commandCalls();
        for (String command : List.of("zmscore", "hdel", "hmget")) {
            assertThat(after.getOrDefault(command, 0L)).as(command + " by the ack").isEqualTo(before.getOrDefault(
                    command, 0L));
        }
        assertThat(redis(rmq).leases().ack(slot("t"), false, List.of(traced.member()), List.of(popped.token()),
                List.of(traced.envelopeKey())).join()).containsExactly(1L);
        assertThat(storedCount("t")).isZero();

        // a sampled send of the body while it is in flight stores a record beside a copy waiting in store: the ack of
        // the delivery that found nothing leaves it to that copy
        sendNow("t", "{\"id\":10}", THIRD);
        sendNow("t", BODY, Map.of());
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", ConsumerSettings.DEFAULT);
        List<Delivery> first = consumer.poll().deliveries();
        assertThat(first).hasSize(2);
        Delivery old = first.stream().filter(d -> d.bodyAsString().equals(BODY)).findFirst().orElseThrow();
        assertThat(old.context()).isEmpty();
        sendNow("t", BODY, SECOND);
        assertThat(consumer.ackAll(first)).isEqualTo(2);
        assertThat(stored("t", BODY)).as("the waiting duplicate keeps its context").isEqualTo(SECOND);
        Delivery newer = only(consumer.poll().deliveries());
        assertThat(newer.context()).isEqualTo(SECOND);
        assertThat(consumer.ack(newer)).isTrue();
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void aTraceRecordReadThatFailsCostsTheTraceLinkNeverTheDelivery() {
        // the pop has leased the messages before the consumer reads their trace records: a failed read (here the trace
        // key holds a string, so HMGET answers WRONGTYPE) must still hand the deliveries over, without their contexts
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        byte[] trace = slot("t").trace();
        raw(c -> c.del(trace));
        raw(c -> c.set(trace, bytes("not a hash")));

        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", ConsumerSettings.DEFAULT);
        Delivery delivery = only(consumer.poll().deliveries());
        assertThat(delivery.bodyAsString()).isEqualTo(BODY);
        assertThat(delivery.context()).isEmpty();

        raw(c -> c.del(trace));
        assertThat(consumer.ack(delivery)).isTrue();
    }

    @Test
    void nothingIsStoredWithoutAContextAndTheContextIsAHeaderEveryConsumerGets() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", "{\"id\":2}", Map.of());
        rmq.producer().sendBatch(List.of(OutgoingMessage.fixedTime("t", "{\"id\":3}", Instant.now())));
        assertThat(storedCount("t")).isZero();

        sendNow("t", BODY, FIRST);
        RmqConsumer notReading = rmq.consumer("t", ConsumerSettings.DEFAULT);
        List<Delivery> deliveries = notReading.poll().deliveries();
        assertThat(deliveries).hasSize(3).allSatisfy(d -> assertThat(d.context())
                .isEqualTo(d.bodyAsString().equals(BODY) ? FIRST : Map.of()).isEqualTo(d.headers()));
        assertThat(stored("t", BODY)).as("stored all the same").isEqualTo(FIRST);
        notReading.ackAll(deliveries);
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void rangeMergeKeepsTheFirstDueTimeButTakesTheLatestSendersContextAsEveryHeader() {
        define("r", TopicType.RANGE_MERGE);
        OutgoingMessage first = OutgoingMessage.rangeMerge("r", BODY, Duration.ofMillis(1000));
        withContext(FIRST, () -> sending.producer().send(first));
        withContext(SECOND, () -> sending.producer().send(first));
        assertThat(stored("r", BODY)).isEqualTo(SECOND);
        // batches (sent through the script when they carry a context) follow the same rule
        OutgoingMessage nine = OutgoingMessage.rangeMerge("r", "{\"id\":9}", Duration.ofMillis(1000));
        withContext(THIRD, () -> sending.producer().sendBatch(List.of(nine, nine)));
        withContext(FIRST, () -> sending.producer().sendBatch(List.of(nine)));
        assertThat(stored("r", "{\"id\":9}")).isEqualTo(FIRST);
        // the one exception: a send whose context is a traceparent alone (a compact trace record, written natively)
        // leaves a fuller context (with tracestate, an envelope of its own, read first) in place, as a send without
        // headers leaves a message's headers
        OutgoingMessage ten = OutgoingMessage.rangeMerge("r", "{\"id\":10}", Duration.ofMillis(1000));
        withContext(SECOND, () -> sending.producer().send(ten));
        withContext(FIRST, () -> sending.producer().send(ten));
        assertThat(stored("r", "{\"id\":10}")).isEqualTo(SECOND);
    }

    @Test
    void priorityAndFixedTimeTakeTheLatestSendersContextAsTheyTakeItsScore() {
        define("p", TopicType.PRIORITY);
        withContext(FIRST, () -> sending.producer().send(OutgoingMessage.priority("p", BODY, 1)));
        withContext(SECOND, () -> sending.producer().send(OutgoingMessage.priority("p", BODY, 2)));
        assertThat(stored("p", BODY)).isEqualTo(SECOND);
        withContext(Map.of(), () -> sending.producer().send(OutgoingMessage.priority("p", BODY, 3)));
        assertThat(stored("p", BODY)).as("a send without a context leaves the stored one").isEqualTo(SECOND);

        define("f", TopicType.FIXED_TIME);
        sendNow("f", BODY, THIRD);
        withContext(FIRST, () -> sending.producer().sendBatch(List.of(OutgoingMessage.fixedTime("f", BODY, Instant.now()))));
        assertThat(stored("f", BODY)).isEqualTo(FIRST);
        Delivery delivery = only(reading.consumer("f", ConsumerSettings.DEFAULT).poll().deliveries());
        assertThat(delivery.context()).isEqualTo(FIRST);
    }

    @Test
    void aNewerDuplicateWaitingWhileTheOldOneIsInFlightKeepsItsContextThroughTheOldOnesAck() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", ConsumerSettings.DEFAULT);
        Delivery old = only(consumer.poll().deliveries());
        assertThat(old.context()).isEqualTo(FIRST);

        sendNow("t", BODY, SECOND); // waits in store while the old delivery is in flight
        assertThat(consumer.ack(old)).isTrue();
        assertThat(stored("t", BODY)).as("the waiting duplicate keeps its context").isEqualTo(SECOND);

        Delivery newer = only(consumer.poll().deliveries());
        assertThat(newer.context()).isEqualTo(SECOND);
        assertThat(consumer.ack(newer)).isTrue();
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void retriesKeepTheContextAndDeadMessagesKeepItUntilDeletedSoARequeueStillLinks() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", new ConsumerSettings(10, Duration.ofSeconds(5),
                new RetryPolicy(1, BackoffPolicy.fixed(Duration.ZERO))));
        consumer.nack(only(consumer.poll().deliveries()), "first failure");
        assertThat(stored("t", BODY)).isEqualTo(FIRST);
        Delivery retry = only(consumer.poll().deliveries());
        assertThat(retry.attempt()).isEqualTo(2);
        assertThat(retry.context()).isEqualTo(FIRST);
        consumer.nack(retry, "second failure"); // past max retries: dead
        assertThat(rmq.admin().deadCount("t")).isOne();
        assertThat(stored("t", BODY)).as("kept in dead").isEqualTo(FIRST);

        DeadMessage dead = rmq.admin().deadMessages("t", 0, 1).get(0);
        assertThat(rmq.admin().requeueDead(dead.ref())).isTrue();
        Delivery requeued = only(consumer.poll().deliveries());
        assertThat(requeued.context()).isEqualTo(FIRST);
        consumer.deadLetter(requeued, "dead again");
        assertThat(rmq.admin().deleteDead(rmq.admin().deadMessages("t", 0, 1).get(0).ref())).isTrue();
        assertThat(storedCount("t")).isZero();

        sendNow("t", "{\"id\":5}", FIRST);
        consumer.deadLetter(only(consumer.poll().deliveries()), "dead");
        assertThat(storedCount("t")).isOne();
        assertThat(rmq.admin().purgeDead("t")).isOne();
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void aReleaseAtShutdownKeepsTheContextAndACancelledReleaseTakesItAlong() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", ConsumerSettings.DEFAULT);
        assertThat(consumer.release(consumer.poll().deliveries())).isOne();
        Delivery again = only(consumer.poll().deliveries());
        assertThat(again.context()).isEqualTo(FIRST);

        assertThat(rmq.admin().cancel(MessageRef.body("t", BODY)).inFlight()).isTrue();
        consumer.release(List.of(again)); // cancelled while in flight: dropped, not put back
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void deletingADeadCopyKeepsTheContextOfACopyThatStillWaits() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", NO_RETRY);
        consumer.deadLetter(only(consumer.poll().deliveries()), "dead");
        sendNow("t", BODY, SECOND); // the same body sent again: waits while its old copy lies in dead
        assertThat(rmq.admin().purgeDead("t")).isOne();
        assertThat(stored("t", BODY)).isEqualTo(SECOND);
        Delivery waiting = only(consumer.poll().deliveries());
        assertThat(waiting.context()).isEqualTo(SECOND);
        consumer.ack(waiting);
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void aLeaseExpiryRetriesWithTheContext() throws Exception {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        RmqConsumer shortLease = reading.consumer("t", new ConsumerSettings(10, Duration.ofMillis(100),
                new RetryPolicy(3, BackoffPolicy.fixed(Duration.ZERO))));
        only(shortLease.poll().deliveries()); // never settled
        Thread.sleep(300);
        shortLease.sweep();
        Delivery again = only(shortLease.poll().deliveries());
        assertThat(again.attempt()).isEqualTo(2);
        assertThat(again.context()).isEqualTo(FIRST);
    }

    @Test
    void cancelPurgeAndADroppedFailureRemoveTheContext() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        assertThat(rmq.admin().cancel(MessageRef.body("t", BODY)).removedWaiting()).isTrue();
        assertThat(storedCount("t")).isZero();

        sendNow("t", "{\"id\":6}", FIRST);
        sendNow("t", "{\"id\":7}", FIRST);
        assertThat(rmq.admin().purge("t")).isEqualTo(2);
        assertThat(storedCount("t")).isZero();

        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", ConsumerSettings.DEFAULT);
        sendNow("t", BODY, FIRST);
        consumer.fail(only(consumer.poll().deliveries()), "not wanted", FailureDecision.drop());
        assertThat(storedCount("t")).isZero();

        // cancelled while in flight: kept until that delivery ends, then gone with it
        sendNow("t", BODY, FIRST);
        Delivery inFlight = only(consumer.poll().deliveries());
        assertThat(rmq.admin().cancel(MessageRef.body("t", BODY)).inFlight()).isTrue();
        assertThat(stored("t", BODY)).isEqualTo(FIRST);
        consumer.nack(inFlight, "failed after the cancel");
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void priorityRetriesBackingOffKeepTheContext() {
        define("p", TopicType.PRIORITY);
        withContext(FIRST, () -> sending.producer().send(OutgoingMessage.priority("p", BODY, 5)));
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("p", new ConsumerSettings(10, Duration.ofSeconds(5),
                new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(200)))));
        consumer.nack(only(consumer.poll().deliveries()), "failure");
        assertThat(stored("p", BODY)).as("kept while the retry backs off").isEqualTo(FIRST);
        List<Delivery> retried = new java.util.ArrayList<>();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            retried.addAll(consumer.poll().deliveries());
            return !retried.isEmpty();
        });
        assertThat(only(retried).context()).isEqualTo(FIRST);
        consumer.ack(retried.get(0));
        assertThat(storedCount("p")).isZero();
    }

    @Test
    void orderlyStepsReturnTheContextAndTheAckRemovesIt() {
        define("o", TopicType.FIXED_TIME);
        sendNow("o", BODY, FIRST);
        sendNow("o", "{\"id\":2}", Map.of());
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("o", NO_RETRY);
        long epoch = SlotClaims.claim(consumer, 0, "a", 0, 10_000, 0).join().epoch();
        OrderedStep step = consumer.orderedStep(0, epoch, 10, List.of(), null, null, null).join();
        assertThat(step.deliveries()).hasSize(2);
        Delivery first = step.deliveries().stream().filter(d -> d.bodyAsString().equals(BODY)).findFirst().orElseThrow();
        assertThat(first.context()).isEqualTo(FIRST);
        assertThat(step.deliveries()).filteredOn(d -> d != first).singleElement()
                .satisfies(d -> assertThat(d.context()).isEmpty());

        consumer.orderedStep(0, epoch, 0, step.deliveries(), null, null, null).join();
        assertThat(storedCount("o")).isZero();

        // a failed head that stays held is handed out again with its context
        sendNow("o", BODY, SECOND);
        OrderedStep next = consumer.orderedStep(0, epoch, 10, List.of(), null, null, null).join();
        Delivery head = only(next.deliveries());
        OrderedStep failed = consumer.orderedStep(0, epoch, 10, List.of(), head, "failure",
                FailureDecision.retryAfter(Duration.ZERO)).join();
        assertThat(only(failed.deliveries()).context()).isEqualTo(SECOND);
        consumer.orderedStep(0, epoch, 0, failed.deliveries(), null, null, null).join();
        assertThat(storedCount("o")).isZero();
    }

    // ---------------------------------------------------------------- a send without a context

    /** The headers stored for the message of {@code id} (its envelope), or empty. */
    private Map<String, String> storedOfId(String topic, String id) {
        byte[] stored = redisAdmin(rmq).storedEnvelope(slot(topic), EnvelopeKeys.idMember(id)).join();
        return stored == null ? Map.of() : Envelope.decode(stored).headers();
    }

    private static Map<String, String> plus(Map<String, String> context, String name, String value) {
        Map<String, String> all = new java.util.HashMap<>(context);
        all.put(name, value);
        return all;
    }

    @Test
    void aSendWithoutAContextReplacesTheStoredEnvelopeOfABodyWithHeadersWholeContextIncluded() {
        define("t", TopicType.FIXED_TIME);
        withContext(SECOND, () -> sending.producer().send(OutgoingMessage.fixedTime("t", BODY,
                Instant.now().minusSeconds(1)).withHeader("tenant", "acme")));
        assertThat(stored("t", BODY)).isEqualTo(plus(SECOND, "tenant", "acme"));

        // another sender, propagation off (no instrumentation): new headers, no context; the latest envelope wins whole
        rmq.producer().send(OutgoingMessage.fixedTime("t", BODY, Instant.now().minusSeconds(1))
                .withHeader("tenant", "globex"));
        assertThat(stored("t", BODY)).as("its headers replace the stored ones, context included")
                .isEqualTo(Map.of("tenant", "globex"));
        // and in a batch (send.lua as well)
        rmq.producer().sendBatch(List.of(OutgoingMessage.fixedTime("t", BODY, Instant.now().minusSeconds(1))
                .withHeader("region", "eu")));
        assertThat(stored("t", BODY)).isEqualTo(Map.of("region", "eu"));

        Delivery delivery = only(reading.consumer("t", ConsumerSettings.DEFAULT).poll().deliveries());
        assertThat(delivery.context()).isEqualTo(Map.of("region", "eu"));
    }

    @Test
    void theLatestSendOfAnIdMessageDecidesItsContextAloneSingleOrBatch() {
        define("t", TopicType.FIXED_TIME);
        withContext(SECOND, () -> sending.producer().send(OutgoingMessage.fixedTime("t", "v1",
                Instant.now().minusSeconds(1)).withId("j").withHeader("a", "1")));
        assertThat(storedOfId("t", "j")).isEqualTo(plus(SECOND, "a", "1"));
        rmq.producer().send(OutgoingMessage.fixedTime("t", "v2", Instant.now().minusSeconds(1)).withId("j"));
        assertThat(storedOfId("t", "j")).as("no headers, no context: none stays").isEmpty();
        rmq.producer().send(OutgoingMessage.fixedTime("t", "v3", Instant.now().minusSeconds(1)).withId("j")
                .withHeader("b", "2"));
        assertThat(storedOfId("t", "j")).isEqualTo(Map.of("b", "2"));

        // a batch of id messages alone (native commands in one MULTI on standalone Redis, send.lua on a cluster)
        withContext(FIRST, () -> sending.producer().send(OutgoingMessage.fixedTime("t", "w1",
                Instant.now().minusSeconds(1)).withId("k")));
        assertThat(storedOfId("t", "k")).isEqualTo(FIRST);
        rmq.producer().sendBatch(List.of(OutgoingMessage.fixedTime("t", "w2", Instant.now().minusSeconds(1))
                .withId("k").withHeader("c", "3")));
        assertThat(storedOfId("t", "k")).isEqualTo(Map.of("c", "3"));
        withContext(THIRD, () -> sending.producer().sendBatch(List.of(OutgoingMessage.fixedTime("t", "w3",
                Instant.now().minusSeconds(1)).withId("k"))));
        assertThat(storedOfId("t", "k")).as("a context replaces the stored envelope too").isEqualTo(THIRD);

        List<Delivery> deliveries = reading.consumer("t", ConsumerSettings.DEFAULT).poll().deliveries();
        assertThat(deliveries).hasSize(2);
        assertThat(deliveries).filteredOn(d -> "j".equals(d.id())).singleElement().satisfies(d -> {
            assertThat(d.bodyAsString()).isEqualTo("v3");
            assertThat(d.context()).isEqualTo(Map.of("b", "2"));
        });
        assertThat(deliveries).filteredOn(d -> "k".equals(d.id())).singleElement().satisfies(d -> {
            assertThat(d.bodyAsString()).isEqualTo("w3");
            assertThat(d.context()).isEqualTo(THIRD);
        });
    }

    @Test
    void aSendWithHeadersButNoContextReplacesTheTraceRecordOfABody() {
        define("t", TopicType.FIXED_TIME);
        sendNow("t", BODY, FIRST);
        long records = raw(c -> c.hlen(slot("t").trace()));
        assertThat(records).as("a compact trace record").isOne();

        rmq.producer().send(OutgoingMessage.fixedTime("t", BODY, Instant.now().minusSeconds(1))
                .withHeader("tenant", "acme"));
        assertThat(stored("t", BODY)).isEqualTo(Map.of("tenant", "acme"));
        long left = raw(c -> c.hlen(slot("t").trace()));
        assertThat(left).as("the record is forgotten: the latest envelope carries no context").isZero();
        // a plain send (no envelope) leaves everything as it is
        rmq.producer().send(OutgoingMessage.fixedTime("t", BODY, Instant.now().minusSeconds(1)));
        assertThat(stored("t", BODY)).isEqualTo(Map.of("tenant", "acme"));

        DefaultRmqConsumer consumer = (DefaultRmqConsumer) reading.consumer("t", ConsumerSettings.DEFAULT);
        Delivery delivery = only(consumer.poll().deliveries());
        assertThat(delivery.context()).isEqualTo(Map.of("tenant", "acme"));
        assertThat(consumer.ack(delivery)).isTrue();
        assertThat(storedCount("t")).isZero();
    }

    @Test
    void twoSendsOfOneIdInOneBatchLeaveTheSecondsEnvelope() {
        define("t", TopicType.FIXED_TIME);
        withContext(SECOND, () -> sending.producer().send(OutgoingMessage.fixedTime("t", "v0",
                Instant.now().minusSeconds(1)).withId("m")));
        BatchResult result = rmq.producer().sendBatch(List.of(
                OutgoingMessage.fixedTime("t", "v1", Instant.now().minusSeconds(1)).withId("m").withHeader("a", "1"),
                OutgoingMessage.fixedTime("t", "v2", Instant.now().minusSeconds(1)).withId("m").withHeader("a", "2")));
        assertThat(result.added()).as("both merged into the waiting one").isZero();
        assertThat(storedOfId("t", "m")).isEqualTo(Map.of("a", "2"));
        Delivery delivery = only(reading.consumer("t", ConsumerSettings.DEFAULT).poll().deliveries());
        assertThat(delivery.bodyAsString()).isEqualTo("v2");
    }

    @Test
    void aContextOfTextHeadersAloneIsStoredAndALaterEnvelopeWithoutOneReplacesIt() {
        define("t", TopicType.FIXED_TIME);
        Map<String, String> b3 = Map.of("b3", "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1",
                "baggage", "user=alice");
        withContext(b3, () -> sending.producer().send(OutgoingMessage.fixedTime("t", "v1",
                Instant.now().minusSeconds(1)).withId("z")));
        assertThat(storedOfId("t", "z")).isEqualTo(b3);
        // a user header whose value holds "b3" and "trace" is not a context, and the envelope it is in replaces the
        // stored one whole
        rmq.producer().send(OutgoingMessage.fixedTime("t", "v2", Instant.now().minusSeconds(1)).withId("z")
                .withHeader("color", "ab3-traced"));
        assertThat(storedOfId("t", "z")).isEqualTo(Map.of("color", "ab3-traced"));
        // a header named like a context entry is the sender's own context
        rmq.producer().send(OutgoingMessage.fixedTime("t", "v3", Instant.now().minusSeconds(1)).withId("z")
                .withHeader("X-B3-TraceId", "463ac35c9f6413ad"));
        assertThat(storedOfId("t", "z")).isEqualTo(Map.of("X-B3-TraceId", "463ac35c9f6413ad"));
    }
}
