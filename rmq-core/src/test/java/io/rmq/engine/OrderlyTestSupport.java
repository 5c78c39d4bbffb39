package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import java.util.concurrent.atomic.AtomicInteger;

import io.rmq.Rmq;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer.OrderedStep;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RateLimit;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.producer.OutgoingMessage;
import io.rmq.redis.internal.RmqRedisOrderly.Claim;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Shared by the ORDERLY tests: containers stopped after each test, and a checker of overlap and per-key order. */
abstract class OrderlyTestSupport extends EngineTestSupport {

    static final ConsumerSettings ORDERED = new ConsumerSettings(8, Duration.ofSeconds(5),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(100))));

    final List<ListenerContainer> containers = new CopyOnWriteArrayList<>();

    OrderlyTestSupport(RedisTopology topology) {
        super(topology);
    }

    @AfterEach
    void stopContainers() {
        containers.forEach(ListenerContainer::stop);
    }

    /**
     * Records handler starts and ends per lane (a group; a slot's messages stored without one share its common lane)
     * and the order in which each key's entries were handled.
     */
    static final class Checker {

        final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        final Map<String, List<Integer>> order = new ConcurrentHashMap<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        final Set<String> done = ConcurrentHashMap.newKeySet();

        private static String lane(Delivery delivery) {
            return delivery.group() != null ? "group " + delivery.group() : "slot " + delivery.slot();
        }

        void start(Delivery delivery) {
            if (running.computeIfAbsent(lane(delivery), s -> new AtomicInteger()).incrementAndGet() != 1) {
                violations.add("two handlers at once in " + lane(delivery) + " at " + delivery.bodyAsString());
            }
        }

        void end(Delivery delivery) {
            running.get(lane(delivery)).decrementAndGet();
        }

        void handled(String body, boolean succeeded) {
            String[] parts = body.split(":");
            order.computeIfAbsent(parts[0], k -> Collections.synchronizedList(new ArrayList<>()))
                    .add(Integer.parseInt(parts[1]));
            if (succeeded) {
                done.add(body);
            }
        }

        /** Each key's entries were handled in sequence: a repeat (a retry) only right after itself. */
        void assertInOrder(int keys, int perKey) {
            assertThat(violations).isEmpty();
            assertThat(order).hasSize(keys);
            order.forEach((key, seqs) -> {
                List<Integer> copy = List.copyOf(seqs);
                for (int i = 1; i < copy.size(); i++) {
                    assertThat(copy.get(i) - copy.get(i - 1)).as("%s handled %s", key, copy).isBetween(0, 1);
                }
                assertThat(copy.get(copy.size() - 1)).as(key).isEqualTo(perKey - 1);
            });
        }
    }

    OrderlyListenerContainer orderly(Rmq engine, String topic, int concurrency, Duration ownership,
            Checker checker, MessageHandler<String> inner) {
        return orderly(engine, topic, concurrency, ownership, checker, inner, engine.slotCoordinator());
    }

    OrderlyListenerContainer orderly(Rmq engine, String topic, int concurrency, Duration ownership, Checker checker,
            MessageHandler<String> inner, SlotCoordinator coordinator) {
        ListenerContainer container = engine.container(topic, ORDERED, String.class, (String body, Delivery d) -> {
            checker.start(d);
            boolean ok = false;
            try {
                inner.handle(body, d);
                ok = true;
            }
            finally {
                checker.handled(body, ok);
                checker.end(d);
            }
        }, ContainerOptions.of("o-" + topic, concurrency).withMode(ConsumeMode.ORDERLY)
                .withOwnershipTimeout(ownership), coordinator);
        containers.add(container);
        container.start();
        return (OrderlyListenerContainer) container;
    }

    /** {@code keys} accounts with {@code perKey} entries each, sent in sequence with the account as group. */
    void sendLedger(String topic, int keys, int perKey, int from) {
        sendLedger(topic, keys, perKey, from, UnaryOperator.identity());
    }

    /** As {@link #sendLedger(String, int, int, int)}, each body ({@code acct-<k>:<seq>}) written by {@code body}. */
    void sendLedger(String topic, int keys, int perKey, int from, UnaryOperator<String> body) {
        Instant base = Instant.now().minusSeconds(3600);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int seq = from; seq < from + perKey; seq++) {
            for (int k = 0; k < keys; k++) {
                batch.add(OutgoingMessage.fixedTime(topic, body.apply("acct-" + k + ":" + seq), base.plusMillis(seq))
                        .withGroup("acct-" + k));
            }
        }
        rmq.producer().sendBatch(batch);
    }

}
