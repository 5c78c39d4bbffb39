package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.admin.DeadMessage;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.TopicType;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.internal.SlotRouter;
import io.rmq.engine.LegacyScripts.LegacyDelivery;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Replacing the previous release's engine on live data loses nothing: what its own scripts wrote (waiting messages,
 * trace contexts in the legacy context HASH, a delivery in flight with a duplicate waiting, a retry backing off, a
 * dead message) is consumed by this engine, with the legacy contexts as headers, and the legacy HASH goes with the
 * last copy of its messages.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class UpgradeTest extends EngineTestSupport {

    UpgradeTest(RedisTopology topology) {
        super(topology);
    }

    private static final String TOPIC = "goods";
    private static final int SLOTS = 2;
    /** Lease of the old engine's deliveries: long enough that this engine's first polls find the in-flight one held. */
    private static final long OLD_LEASE_MS = 2000;
    private static final long OLD_BACKOFF_MS = 300;

    // Contexts as the old engine stored them (TraceContexts' format: the bare traceparent, then key=value lines)
    private static final String TP_FIRST = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    private static final String TP_SECOND = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    private static final String TP_DEAD = "00-5b8aa5a2d2c872e8321cf37308d69df2-051581bf3cb55c13-01";
    private static final String STATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

    private final List<Rmq> upgraded = new ArrayList<>();
    private LegacyScripts old;

    @BeforeEach
    void oldEngine() {
        old = new LegacyScripts(client, redis(rmq).keys());
    }

    @AfterEach
    void closeEngines() {
        upgraded.forEach(Rmq::close);
        old.close();
    }

    @ParameterizedTest
    @EnumSource(TopicType.class)
    void everythingTheOldScriptsWroteIsConsumedWithItsContextAndTheLegacyHashGoesWithTheMessages(TopicType type) {
        boolean priority = type == TopicType.PRIORITY;
        old.defineTopic(TOPIC, type.name(), SLOTS);
        OldSender sender = new OldSender(type);

        sender.send("dead", TP_DEAD);
        LegacyDelivery dying = single(old.pop(slotOf("dead"), priority, 10, OLD_LEASE_MS, 60_000));
        assertThat(old.nack(slotOf("dead"), priority, dying, "java.lang.IllegalStateException: out of stock", "d", 0))
                .isEqualTo(2);

        sender.send("failing", null);
        sender.send("in-flight", TP_FIRST);
        Map<String, LegacyDelivery> popped = new LinkedHashMap<>();
        for (String body : List.of("failing", "in-flight")) {
            old.pop(slotOf(body), priority, 10, OLD_LEASE_MS, 60_000).forEach(d -> popped.put(d.body(), d));
        }
        assertThat(popped).containsOnlyKeys("failing", "in-flight");
        assertThat(old.nack(slotOf("failing"), priority, popped.get("failing"), "boom", "", OLD_BACKOFF_MS))
                .isEqualTo(1);
        LegacyDelivery inFlight = popped.get("in-flight");

        // a duplicate sent while the first copy is in flight: the old merge rules make its context the one kept
        sender.send("in-flight", TP_SECOND);
        sender.send("plain-1", null);
        sender.send("plain-2", null);
        sender.send("traced-1", TP_FIRST);
        sender.send("traced-2", TP_SECOND + "\ntracestate=" + STATE);
        assertThat(anyExists(SlotKeys::context)).as("the old engine wrote its context HASH").isTrue();
        assertThat(anyExists(SlotKeys::msg)).isFalse();

        Rmq engine = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix).withPropagateContext(true));
        upgraded.add(engine);
        engine.defineTopic(TOPIC, type, SLOTS);
        RmqConsumer consumer = engine.consumer(TOPIC, FAST);
        Map<String, List<Delivery>> seen = new LinkedHashMap<>();
        Set<String> waiting = Set.of("plain-1", "plain-2", "traced-1", "traced-2", "in-flight", "failing");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> pollAndAck(consumer, seen).containsAll(waiting));

        assertThat(seen).doesNotContainKey("dead");
        assertThat(first(seen, "plain-1").headers()).isEmpty();
        assertThat(first(seen, "plain-2").context()).isEmpty();
        assertThat(first(seen, "traced-1").context()).isEqualTo(Map.of("traceparent", TP_FIRST))
                .isEqualTo(first(seen, "traced-1").headers());
        assertThat(first(seen, "traced-2").headers()).isEqualTo(Map.of("traceparent", TP_SECOND, "tracestate", STATE));
        assertThat(first(seen, "failing").attempt()).as("the old engine's failure counts").isEqualTo(2);
        Delivery retried = first(seen, "in-flight");
        assertThat(retried.attempt()).as("its lease expired: a failed attempt").isEqualTo(2);
        assertThat(retried.leaseDeadline() - FAST.lease().toMillis())
                .as("popped by this engine only after the old delivery's lease ended")
                .isGreaterThanOrEqualTo(inFlight.leaseDeadline());
        assertThat(retried.context()).isEqualTo(Map.of("traceparent", TP_SECOND));

        List<DeadMessage> dead = engine.admin().deadMessages(TOPIC, 0, 10);
        assertThat(dead).singleElement().satisfies(message -> {
            assertThat(message.bodyAsString()).isEqualTo("dead");
            assertThat(message.attempts()).isEqualTo(1);
            assertThat(message.lastError()).isEqualTo("java.lang.IllegalStateException: out of stock");
        });
        assertThat(engine.admin().requeueDead(dead.get(0).ref())).isTrue();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> pollAndAck(consumer, seen).contains("dead"));
        assertThat(first(seen, "dead").context()).isEqualTo(Map.of("traceparent", TP_DEAD));
        assertThat(first(seen, "dead").attempt()).as("a requeue starts a fresh count").isEqualTo(1);

        // a PRIORITY retry may still come back once (its duplicate was delivered meanwhile): at least once, then gone
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
            pollAndAck(consumer, seen);
            return !anyExists(SlotKeys::store, SlotKeys::prepare, SlotKeys::retry, SlotKeys::dead);
        });
        assertThat(anyExists(SlotKeys::context)).as("the legacy HASH is forgotten with its messages").isFalse();
        assertThat(anyExists(SlotKeys::msg, SlotKeys::attempts, SlotKeys::deadInfo, SlotKeys::priority,
                SlotKeys::skipped)).as("nothing else left behind").isFalse();
        assertThat(seen.keySet()).containsExactlyInAnyOrderElementsOf(union(waiting, Set.of("dead")));
    }

    /** Sends through the old send.lua one message at a time, with the topic type's parameter and merge mode. */
    private final class OldSender {

        private final TopicType type;
        private long priority = 10;

        OldSender(TopicType type) {
            this.type = type;
        }

        void send(String body, String context) {
            String parameter = switch (type) {
                case RANGE_MERGE -> "1"; // due 1 ms after the first send
                case PRIORITY -> Long.toString(priority--);
                case FIXED_TIME -> Long.toString(System.currentTimeMillis() - 1000);
            };
            String mode = (type == TopicType.RANGE_MERGE ? "range" : "score") + (context == null ? "" : "-ctx");
            if (context == null) {
                old.send(slotOf(body), mode, type == TopicType.PRIORITY, parameter, body);
            }
            else {
                old.send(slotOf(body), mode, type == TopicType.PRIORITY, parameter, body, context);
            }
        }
    }

    /** The slot the old engine routed a body to (CRC32 of the body; unchanged). */
    private SlotKeys slotOf(String body) {
        return redis(rmq).keys().slot(TOPIC, SlotRouter.slot(body.getBytes(StandardCharsets.UTF_8), SLOTS));
    }

    /** One poll of every slot; acks what it got. Returns the bodies delivered so far. */
    private static Set<String> pollAndAck(RmqConsumer consumer, Map<String, List<Delivery>> seen) {
        List<Delivery> deliveries = consumer.poll().deliveries();
        deliveries.forEach(d -> seen.computeIfAbsent(d.bodyAsString(), b -> new ArrayList<>()).add(d));
        assertThat(consumer.ackAll(deliveries)).isEqualTo(deliveries.size());
        return seen.keySet();
    }

    private static Delivery first(Map<String, List<Delivery>> seen, String body) {
        return seen.get(body).get(0);
    }

    private static LegacyDelivery single(List<LegacyDelivery> deliveries) {
        assertThat(deliveries).hasSize(1);
        return deliveries.get(0);
    }

    @SafeVarargs
    private boolean anyExists(java.util.function.Function<SlotKeys, byte[]>... keys) {
        for (int slot = 0; slot < SLOTS; slot++) {
            SlotKeys slotKeys = redis(rmq).keys().slot(TOPIC, slot);
            for (var key : keys) {
                if (old.exists(key.apply(slotKeys))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> out = new LinkedHashSet<>(a);
        out.addAll(b);
        return out;
    }
}
