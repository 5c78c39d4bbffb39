package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisKeyCommands;
import io.lettuce.core.api.sync.RedisHashCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.internal.SlotClaims;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicConflictException;
import io.rmq.core.TopicType;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * ORDERLY as part of a topic's registered definition, and graceful stops that leave no owner key behind while the
 * next owner still goes on in order.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class OrderlyModeTest extends OrderlyTestSupport {

    OrderlyModeTest(RedisTopology topology) {
        super(topology);
    }

    private static final MessageHandler<String> NOTHING = (body, delivery) -> { };

    @Test
    void aGracefulStopLeavesNoOwnerKeyAndTheNextInstanceGoesOnInOrder() {
        String topic = "handover";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 4);
        Checker checker = new Checker();
        sendLedger(topic, 8, 30, 0);
        ListenerContainer first = orderly(newEngine(), topic, 2, Duration.ofSeconds(3), checker,
                (body, d) -> Thread.sleep(20));
        await().atMost(Duration.ofSeconds(30)).until(() -> checker.done.size() >= 20);
        first.stop();
        assertThat(checker.done).as("stopped while messages were taken and not handled").hasSizeLessThan(240);
        assertThat(ownerKeys(topic, 4)).as("slots with an owner key after a graceful stop").isEmpty();
        assertThat(rmq.admin().stats(topic).inFlight()).as("what the owner held went back to store").isZero();

        ListenerContainer second = orderly(newEngine(), topic, 2, Duration.ofSeconds(3), checker, (body, d) -> { });
        await().atMost(Duration.ofSeconds(60)).until(() -> checker.done.size() == 240);
        checker.assertInOrder(8, 30);
        second.stop();
        assertThat(ownerKeys(topic, 4)).isEmpty();
        assertThat(rmq.admin().stats(topic).pending()).isZero();
    }

    /**
     * A stop that comes while the coordination thread is claiming the slots (right after the start) must give up
     * every slot Redis granted. It used to interrupt the claim: the claim went through in Redis, the container never
     * learned of it, and the slot stayed owned until its ownership ran out (CI saw endOrdering refused for it).
     */
    @Test
    void aStopDuringTheFirstClaimsLeavesNoOwnerKey() throws InterruptedException {
        String topic = "quick";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 4);
        for (int round = 0; round < 20; round++) {
            ListenerContainer container = ordered(rmq, topic, ORDERED, NOTHING);
            Thread.sleep(round % 5); // lands at different points of the first pass
            container.stop();
            assertThat(ownerKeys(topic, 4)).as("slots still owned after stop %d", round).isEmpty();
        }
        rmq.admin().endOrdering(topic);
    }

    @Test
    void aHeadWaitingForItsRetryKeepsItsPlaceAndItsBackoffAcrossAGracefulStop() {
        String topic = "suspended";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        ConsumerSettings slowRetry = new ConsumerSettings(8, Duration.ofSeconds(5),
                new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofSeconds(3))));
        List<String> handled = new CopyOnWriteArrayList<>();
        List<Long> at = new CopyOnWriteArrayList<>();
        MessageHandler<String> handler = (String body, Delivery d) -> {
            handled.add(body + "#" + d.attempt());
            at.add(System.currentTimeMillis());
            if (body.equals("a:0") && d.attempt() == 1) {
                throw new IllegalStateException("fails on purpose: " + body);
            }
        };
        Instant base = Instant.now().minusSeconds(60);
        rmq.producer().sendFixedTime(topic, "a:0", base);
        rmq.producer().sendFixedTime(topic, "b:1", base.plusMillis(1));
        rmq.producer().sendFixedTime(topic, "c:2", base.plusMillis(2));
        try (LogCapture log = LogCapture.rmq()) {
            ListenerContainer first = ordered(newEngine(), topic, slowRetry, handler);
            await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 1);
            first.stop();
            assertThat(ownerKeys(topic, 1)).isEmpty();
            assertThat(rmq.admin().stats(topic).waiting()).as("behind the head").isEqualTo(2);
            assertThat(rmq.admin().stats(topic).retrying()).as("the head, put back, waits for its retry").isEqualTo(1);

            ListenerContainer second = ordered(newEngine(), topic, slowRetry, handler);
            await().atMost(Duration.ofSeconds(20)).until(() -> handled.size() == 4);
            second.stop();
            assertThat(log.messages()).anyMatch(m -> m.contains("fails on purpose: a:0"));
        }
        assertThat(handled).as("the head stays the head; nothing overtakes it").containsExactly("a:0#1", "a:0#2",
                "b:1#1", "c:2#1");
        assertThat(at.get(1) - at.get(0)).as("its 3 s backoff carried over to the next owner")
                .isGreaterThanOrEqualTo(2500);
    }

    @Test
    void theConsumeModeIsRegisteredWithTheTopicAndAListenerOfTheOtherModeFailsNamingBoth() {
        String topic = "ledger";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 4);
        assertThat(registered(topic)).as("a producer's definition has no mode").isEqualTo("FIXED_TIME:4");
        ListenerContainer ordered = ordered(rmq, topic, ORDERED, NOTHING);
        assertThat(registered(topic)).isEqualTo("FIXED_TIME:4:ORDERLY");
        assertThat(rmq.topics().get(topic).mode()).isEqualTo(ConsumeMode.ORDERLY);

        try (Rmq other = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
            assertThat(other.defineTopic(topic, TopicType.FIXED_TIME, 4).mode()).as("a producer agrees with any mode")
                    .isEqualTo(ConsumeMode.ORDERLY);
            assertThatThrownBy(() -> other.container(topic, FAST, String.class, NOTHING, ContainerOptions.of("c", 1)))
                    .isInstanceOf(TopicConflictException.class)
                    .hasMessage("Conflicting definitions of topic 'ledger': topic 'ledger' type=FIXED_TIME slotAmount=4"
                            + " mode=ORDERLY (registered in Redis) versus topic 'ledger' type=FIXED_TIME slotAmount=4"
                            + " mode=CONCURRENT (requested); a topic is consumed in one mode, cluster-wide: to consume"
                            + " it CONCURRENT, stop its ORDERLY listeners and call RmqAdmin.endOrdering(\"ledger\")");

            // switching: stop the ORDERLY listeners, end ordering; CONCURRENT listeners may then start anywhere
            ordered.stop();
            rmq.admin().endOrdering(topic);
            assertThat(registered(topic)).isEqualTo("FIXED_TIME:4:CONCURRENT");
            ListenerContainer concurrent = other.container(topic, FAST, String.class, NOTHING,
                    ContainerOptions.of("c", 1));
            containers.add(concurrent);
            assertThatThrownBy(() -> ordered(rmq, topic, ORDERED, NOTHING))
                    .isInstanceOf(TopicConflictException.class)
                    .hasMessageEndingWith("mode=CONCURRENT (registered in Redis) versus topic 'ledger' type=FIXED_TIME"
                            + " slotAmount=4 mode=ORDERLY (requested); a topic is consumed in one mode, cluster-wide:"
                            + " to consume it ORDERLY, stop its CONCURRENT listeners and call"
                            + " RmqAdmin.beginOrdering(\"ledger\")");
            rmq.admin().beginOrdering(topic);
            assertThat(registered(topic)).isEqualTo("FIXED_TIME:4:ORDERLY");
            ordered(rmq, topic, ORDERED, NOTHING);
        }
    }

    @Test
    void aDefinitionStoredWithoutAModeTakesTheFirstListenersMode() {
        String topic = "legacy";
        redis(c -> ((RedisHashCommands<String, String>) c).hset(prefix + ":topics", topic, "PRIORITY:2"));
        assertThat(rmq.topics().get(topic).mode()).isNull();
        ordered(rmq, topic, ORDERED, NOTHING);
        assertThat(registered(topic)).isEqualTo("PRIORITY:2:ORDERLY");
    }

    @Test
    void anEpochRedisNumberedNeitherRepeatsAfterAReleaseNorHoldsBackAZooKeeperClaim() {
        String topic = "epochs";
        rmq.defineTopic(topic, TopicType.PRIORITY, 1);
        io.rmq.consumer.internal.DefaultRmqConsumer a = (io.rmq.consumer.internal.DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        io.rmq.consumer.RmqConsumer b = newEngine().consumer(topic, ORDERED);
        long first = SlotClaims.claim(a, 0, "a", 0, 5000, 0).join().epoch();
        assertThat(a.releaseOwnership(0, "a", first).join()).isTrue();
        assertThat(ownerKeys(topic, 1)).isEmpty();
        long second = SlotClaims.claim(b, 0, "b", 0, 500, 0).join().epoch();
        assertThat(second).as("the key was deleted, the numbering goes on").isGreaterThan(first);
        assertThat(a.orderedStep(0, first, 1, List.of(), null, null, null).join().fenced())
                .as("the released epoch stays fenced").isTrue();
        // b dies; a ZooKeeper-coordinated instance (young zxids are smaller than Redis's µs numbers) takes over
        long zxid = 5L << 32;
        await().atMost(Duration.ofSeconds(5)).until(() -> SlotClaims.claim(a, 0, "a", 0, 5000, zxid).join().held());
        assertThat(SlotClaims.claim(b, 0, "b", 0, 5000, zxid - 1).join().held()).as("a stale ZooKeeper decision")
                .isFalse();
    }

    /**
     * An owner cut from Redis but not from ZooKeeper: its time ran out, a step it sent at the heal was fenced, so it
     * dropped the slot, and ZooKeeper still gives it the slot (no other instance claims it). Its claim under the same
     * decision gets the slot back, under a new epoch that fences its stale steps; another instance's claim with that
     * decision stays refused.
     */
    @Test
    void theHolderClaimsItsSlotAgainUnderTheZooKeeperDecisionItHoldsAndItsStaleStepsStayFenced() {
        String topic = "zk-again";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 1);
        io.rmq.consumer.internal.DefaultRmqConsumer a = (io.rmq.consumer.internal.DefaultRmqConsumer) newEngine().consumer(topic, ORDERED);
        io.rmq.consumer.RmqConsumer b = newEngine().consumer(topic, ORDERED);
        long zxid = 7L << 32;
        long decided = SlotClaims.claim(a, 0, "a", 0, 300, zxid).join().epoch();
        assertThat(decided).isEqualTo(zxid);
        // a is cut from Redis: no renewal; its time runs out and its next step is fenced
        await().atMost(Duration.ofSeconds(10)).until(() -> a.orderedStep(0, decided, 1, List.of(), null, null, null)
                .join().fenced());
        assertThat(SlotClaims.claim(b, 0, "b", 0, 5000, zxid).join()).as("another instance, same decision")
                .isEqualTo(new Claim(0, -1));
        Claim again = SlotClaims.claim(a, 0, "a", 0, 5000, zxid).join();
        assertThat(again.held()).as("the holder under the decision it holds").isTrue();
        assertThat(again.epoch()).isGreaterThan(decided);
        assertThat(a.orderedStep(0, decided, 1, List.of(), null, null, null).join().fenced())
                .as("its stale steps stay fenced").isTrue();
        assertThat(a.orderedStep(0, again.epoch(), 1, List.of(), null, null, null).join().fenced()).isFalse();
        // a later ZooKeeper decision still takes the slot over
        assertThat(SlotClaims.claim(b, 0, "b", 0, 5000, zxid + 1).join().held()).isTrue();
    }

    private ListenerContainer ordered(Rmq engine, String topic, ConsumerSettings settings,
            MessageHandler<String> handler) {
        ListenerContainer container = engine.container(topic, settings, String.class, handler,
                ContainerOptions.of("o-" + topic, 1).withMode(ConsumeMode.ORDERLY)
                        .withOwnershipTimeout(Duration.ofSeconds(3)));
        containers.add(container);
        container.start();
        return container;
    }

    private String registered(String topic) {
        return redis(c -> ((RedisHashCommands<String, String>) c).hget(prefix + ":topics", topic));
    }

    /** The slots of the topic that have an owner key. */
    private List<Integer> ownerKeys(String topic, int slotAmount) {
        return redis(c -> {
            List<Integer> owned = new ArrayList<>();
            for (int slot = 0; slot < slotAmount; slot++) {
                if (((RedisKeyCommands<String, String>) c).exists(prefix + ":{" + topic + ":" + slot + "}:owner") > 0) {
                    owned.add(slot);
                }
            }
            return owned;
        });
    }

    @SuppressWarnings("unchecked")
    private <T> T redis(Function<Object, T> command) {
        if (client instanceof RedisClusterClient cluster) {
            try (var connection = cluster.connect()) {
                return command.apply(connection.sync());
            }
        }
        try (var connection = ((RedisClient) client).connect()) {
            return command.apply(connection.sync());
        }
    }
}
