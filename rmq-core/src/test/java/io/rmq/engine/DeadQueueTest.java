package io.rmq.engine;

import java.time.Duration;
import java.util.List;

import io.rmq.admin.DeadMessage;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.core.TopicType;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;

@ParameterizedClass
@EnumSource(RedisTopology.class)
class DeadQueueTest extends EngineTestSupport {

    DeadQueueTest(RedisTopology topology) {
        super(topology);
    }

    record Order(long id, String merchant) {
    }

    private static final ConsumerSettings NO_RETRY = new ConsumerSettings(100, Duration.ofSeconds(5),
            new RetryPolicy(0, BackoffPolicy.fixed(Duration.ZERO)));

    @Test
    void unreadableMessageGoesToDeadWithTheReasonAndConsumptionContinues() throws Exception {
        rmq.defineTopic("orders", TopicType.PRIORITY, 4);
        rmq.producer().sendPriority("orders", new Order(1, "acme"), 1);
        rmq.producer().sendPriority("orders", new Order(2, "acme"), 1);
        // A member written by a buggy client in another language: not JSON of an Order.
        var slot = redis(rmq).keys().slot("orders", 2);
        redisAdmin(rmq).rawAdd(slot, "{not json".getBytes(), 5).get();

        RmqConsumer consumer = rmq.consumer("orders", ConsumerSettings.DEFAULT);
        List<Order> handled = new java.util.ArrayList<>();
        int seen;
        try (LogCapture log = LogCapture.rmq()) {
            seen = consumer.pollAndHandle(Order.class, (order, delivery) -> handled.add(order));
            assertThat(log.warnings()).singleElement().asString().contains("orders/2", "moved to the dead queue");
        }
        assertThat(seen).isEqualTo(3);
        assertThat(handled).containsExactlyInAnyOrder(new Order(1, "acme"), new Order(2, "acme"));
        var dead = rmq.admin().deadMessages("orders", 0, 10);
        assertThat(dead).singleElement().satisfies(m -> {
            assertThat(m.bodyAsString()).isEqualTo("{not json");
            assertThat(m.slot()).isEqualTo(2);
            assertThat(m.attempts()).isEqualTo(1);
            assertThat(m.lastError()).startsWith("unreadable message: cannot convert body to " + Order.class.getName());
        });
        var stats = rmq.admin().stats("orders");
        assertThat(stats.pending()).isZero();
    }

    @Test
    void anUnreadableBodyIsQuotedNeitherInTheLogNorInTheDeadReasonUnlessBodiesMayBeLogged() {
        rmq.defineTopic("private", TopicType.PRIORITY, 1);
        var slot = redis(rmq).keys().slot("private", 0);
        redisAdmin(rmq).rawAdd(slot, "SECRET-IBAN-DE89370400440532013000".getBytes(), 5).join();
        try (LogCapture log = LogCapture.rmq()) {
            rmq.consumer("private", NO_RETRY).pollAndHandle(Order.class, (order, delivery) -> { });
            assertThat(log.messages()).singleElement().satisfies(line -> {
                assertThat(line).doesNotContain("SECRET").doesNotContain("DE89")
                        .contains("moved to the dead queue: unreadable message: cannot convert body to "
                                + Order.class.getName() + ": tools.jackson.core.exc.StreamReadException:"
                                + " Unrecognized token (details not shown: they quote the body; rmq.log-bodies"
                                + " shows them) at line 1, column ");
            });
        }
        assertThat(rmq.admin().deadMessages("private", 0, 1)).singleElement().satisfies(dead -> {
            assertThat(dead.lastError()).doesNotContain("SECRET").contains("Unrecognized token");
            assertThat(dead.bodyText()).as("the dead queue keeps the body").contains("SECRET");
        });

        // rmq.log-bodies=true: the parser's own words, body text included
        try (var verbose = io.rmq.Rmq.create(client, io.rmq.RmqOptions.DEFAULT.withKeyPrefix(prefix)
                .withLogBodyChars(200)); LogCapture log = LogCapture.rmq()) {
            redisAdmin(rmq).rawAdd(slot, "SECRET-2".getBytes(), 5).join();
            verbose.consumer("private", NO_RETRY).pollAndHandle(Order.class, (order, delivery) -> { });
            assertThat(log.messages()).singleElement().asString().contains("Unrecognized token 'SECRET");
        }
    }

    @Test
    void handlerExceptionIsRecordedAndGenericPayloadsConvert() {
        rmq.defineTopic("lists", TopicType.PRIORITY, 1);
        rmq.producer().sendPriority("lists", List.of(new Order(1, "a"), new Order(2, "b")), 1);
        RmqConsumer consumer = rmq.consumer("lists", NO_RETRY);
        java.lang.reflect.Type listOfOrders = new io.rmq.engine.TypeRef<List<Order>>() { }.type();
        List<List<Order>> got = new java.util.ArrayList<>();
        try (LogCapture log = LogCapture.rmq()) {
            consumer.pollAndHandle(listOfOrders, (List<Order> orders, Delivery d) -> {
                got.add(orders);
                throw new IllegalStateException("downstream refused " + orders.size());
            });
            assertThat(log.warnings()).singleElement().asString().contains("failed for the last time");
        }
        assertThat(got).containsExactly(List.of(new Order(1, "a"), new Order(2, "b")));
        assertThat(rmq.admin().deadMessages("lists", 0, 1).get(0).lastError())
                .isEqualTo("java.lang.IllegalStateException: downstream refused 2");
    }

    @Test
    void deadQueueCanBeCountedPagedRequeuedDeletedAndPurged() {
        rmq.defineTopic("jobs", TopicType.FIXED_TIME, 8);
        RmqConsumer consumer = rmq.consumer("jobs", NO_RETRY);
        for (int i = 0; i < 30; i++) {
            rmq.producer().sendFixedTime("jobs", "job-" + i, java.time.Instant.now().plusMillis(10));
        }
        sleep(30);
        int handled = 0;
        try (LogCapture log = LogCapture.rmq()) {
            while (handled < 30) {
                handled += consumer.pollAndHandle(String.class, (s, d) -> {
                    throw new RuntimeException("no " + s);
                });
            }
            assertThat(log.warnings()).hasSize(30).allSatisfy(line -> assertThat(line).contains("jobs/")
                    .contains("failed for the last time; moved to the dead queue"));
        }
        assertThat(rmq.admin().deadCount("jobs")).isEqualTo(30);

        List<DeadMessage> all = new java.util.ArrayList<>();
        for (int offset = 0; offset < 40; offset += 7) {
            all.addAll(rmq.admin().deadMessages("jobs", offset, 7));
        }
        assertThat(all).hasSize(30);
        assertThat(all).extracting(DeadMessage::bodyAsString).doesNotHaveDuplicates();
        assertThat(all).allSatisfy(m -> {
            assertThat(m.lastError()).isEqualTo("java.lang.RuntimeException: no " + m.bodyAsString());
            assertThat(m.diedAt()).isBefore(java.time.Instant.now().plusSeconds(5));
            assertThat(m.priority()).isNull();
        });

        // requeue one: delivered again with a fresh attempt count
        DeadMessage one = all.get(0);
        assertThat(rmq.admin().requeueDead(one.ref())).isTrue();
        assertThat(rmq.admin().requeueDead(one.ref())).isFalse();
        Delivery again = consumer.poll().deliveries().get(0);
        assertThat(again.body()).isEqualTo(one.body());
        assertThat(again.attempt()).isEqualTo(1);
        assertThat(consumer.ack(again)).isTrue();

        // delete one
        assertThat(rmq.admin().deleteDead(all.get(1).ref())).isTrue();
        assertThat(rmq.admin().deadCount("jobs")).isEqualTo(28);

        // requeue all, then fail them again, then purge
        assertThat(rmq.admin().requeueAllDead("jobs")).isEqualTo(28);
        assertThat(rmq.admin().stats("jobs").waiting()).isEqualTo(28);
        handled = 0;
        try (LogCapture log = LogCapture.rmq()) {
            while (handled < 28) {
                handled += consumer.pollAndHandle(String.class, (s, d) -> {
                    throw new RuntimeException("still no");
                });
            }
            assertThat(log.warnings()).hasSize(28)
                    .allSatisfy(line -> assertThat(line).contains("failed for the last time; moved to the dead queue"));
        }
        assertThat(rmq.admin().deadCount("jobs")).isEqualTo(28);
        assertThat(rmq.admin().purgeDead("jobs")).isEqualTo(28);
        var stats = rmq.admin().stats("jobs");
        assertThat(stats.pending() + stats.dead()).isZero();
        assertThat(stats.slots()).hasSize(8);
    }

    @Test
    void requeuedPriorityMessageGetsItsPriorityBack() {
        rmq.defineTopic("pr", TopicType.PRIORITY, 1);
        RmqConsumer consumer = rmq.consumer("pr", NO_RETRY);
        rmq.producer().sendPriority("pr", "vip", 50);
        try (LogCapture log = LogCapture.rmq()) {
            consumer.pollAndHandle(String.class, (s, d) -> {
                throw new RuntimeException("x");
            });
            assertThat(log.warnings()).singleElement().asString().contains("failed for the last time");
        }
        rmq.producer().sendPriority("pr", "normal", 10);
        assertThat(rmq.admin().requeueAllDead("pr")).isEqualTo(1);
        Delivery first = consumer.poll().deliveries().get(0);
        assertThat(first.bodyAsString()).isEqualTo("vip");
        assertThat(first.score()).isEqualTo(50.0);
    }

    @Test
    void aDeadBodySentAgainStartsWithAFreshAttemptCount() {
        rmq.defineTopic("pr", TopicType.PRIORITY, 1);
        RmqConsumer consumer = rmq.consumer("pr", new ConsumerSettings(10, Duration.ofSeconds(5),
                new RetryPolicy(1, BackoffPolicy.fixed(Duration.ZERO))));
        rmq.producer().sendPriority("pr", "x", 1);
        try (LogCapture log = LogCapture.rmq()) {
            for (int i = 0; i < 2; i++) {
                consumer.pollAndHandle(String.class, (s, d) -> {
                    throw new RuntimeException("x");
                });
            }
            assertThat(log.warnings()).hasSize(2);
            assertThat(log.warnings().get(0)).contains("retrying after its backoff");
            assertThat(log.warnings().get(1)).contains("failed for the last time");
        }
        assertThat(rmq.admin().deadCount("pr")).isEqualTo(1);
        rmq.producer().sendPriority("pr", "x", 1);
        assertThat(consumer.poll().deliveries().get(0).attempt()).isEqualTo(1);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
