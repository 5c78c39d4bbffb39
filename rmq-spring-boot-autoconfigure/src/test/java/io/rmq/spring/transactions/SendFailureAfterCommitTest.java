package io.rmq.spring.transactions;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import ch.qos.logback.classic.Level;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.admin.MessageRef;
import io.rmq.autoconfigure.RmqAutoConfiguration;
import io.rmq.core.RmqUnavailableException;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.spring.RmqSendDiscardedException;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.transactions.TransactionTestDatabase.Transactions;
import io.rmq.test.LateRedisServer;
import io.rmq.test.LogCapture;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static io.rmq.spring.transactions.TransactionTestApplication.tomorrow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A send held until its transaction committed whose write then fails for real: the Redis of a private server stops
 * inside the transaction, after the sends were checked and held, and the commit goes ahead (the database is another
 * system). The failure reaches the {@code RmqSendFailureHandler}: by default one ERROR line per message with topic and
 * id, never the payload or header values.
 */
class SendFailureAfterCommitTest {

    private static final String LINE = "RMQ could not send a message held until its transaction committed";

    private static ApplicationContextRunner runner(int port) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        JacksonAutoConfiguration.class, RmqAutoConfiguration.class))
                .withUserConfiguration(TransactionTestDatabase.class)
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
                        "rmq.key-prefix=tx-fail-" + UUID.randomUUID(), "rmq.topics.tx-parked.type=FIXED_TIME",
                        "rmq.startup.fail-fast=true");
    }

    /** Stops Redis and waits until RMQ's client knows (a read fails at once), so the writes fail rather than queue. */
    private static void stop(LateRedisServer redis, RmqTemplate template) throws InterruptedException {
        redis.close();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            try {
                template.admin().contains(MessageRef.body("tx-parked", "probe"));
                return false;
            }
            catch (RmqUnavailableException ex) {
                return true;
            }
        });
    }

    @Test
    void aWriteThatFailsAfterTheCommitIsLoggedWithTopicAndIdAndFailsItsFuture() throws Exception {
        int port = LateRedisServer.freePort();
        LateRedisServer redis = LateRedisServer.startOn(port);
        try (LogCapture log = LogCapture.of("io.rmq", "io.lettuce")) {
            runner(port).run(context -> {
                RmqTemplate template = context.getBean(RmqTemplate.class);
                Transactions transactions = context.getBean(Transactions.class);
                AtomicReference<SendResult> held = new AtomicReference<>();
                AtomicReference<CompletableFuture<SendResult>> future = new AtomicReference<>();

                transactions.required(() -> {
                    transactions.insertOrder("order-1");
                    held.set(template.send(OutgoingMessage.fixedTime("tx-parked", "secret payload", tomorrow())
                            .withId("timeout:order-1").withHeader("card", "secret header value")));
                    future.set(template.sendAsync(OutgoingMessage.fixedTime("tx-parked", "secret body", tomorrow())));
                    try {
                        stop(redis, template);
                    }
                    catch (InterruptedException ex) {
                        throw new IllegalStateException(ex);
                    }
                });

                assertThat(transactions.orderExists("order-1")).as("the transaction committed").isTrue();
                assertThat(held.get().held()).isTrue();
                assertThat(future.get()).failsWithin(30, TimeUnit.SECONDS).withThrowableThat().havingCause()
                        .isInstanceOf(RmqUnavailableException.class)
                        .isNotInstanceOf(RmqSendDiscardedException.class);
                List<String> lines = log.events().stream().filter(e -> e.getLevel() == Level.ERROR)
                        .map(e -> e.getFormattedMessage()).filter(m -> m.startsWith(LINE)).toList();
                assertThat(lines).hasSize(2);
                assertThat(lines).anySatisfy(line -> assertThat(line)
                        .contains("(topic 'tx-parked', id 'timeout:order-1')").contains("RmqUnavailableException"));
                assertThat(lines).anySatisfy(line -> assertThat(line)
                        .contains("(topic 'tx-parked', no id, a 11-byte body)"));
                assertThat(lines).noneSatisfy(line -> assertThat(line).contains("secret"));
            });
        }
    }

    @Test
    void theApplicationsFailureHandlerReplacesTheDefaultAndIsToldOfEachMessage() throws Exception {
        int port = LateRedisServer.freePort();
        LateRedisServer redis = LateRedisServer.startOn(port);
        try (LogCapture log = LogCapture.of("io.rmq", "io.lettuce")) {
            runner(port).withUserConfiguration(OrderPlacementFailures.class)
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .run(context -> {
                        RmqTemplate template = context.getBean(RmqTemplate.class);
                        Transactions transactions = context.getBean(Transactions.class);

                        transactions.required(() -> {
                            template.sendBatch(List.of(
                                    OutgoingMessage.fixedTime("tx-parked", "a", tomorrow()).withId("label:1"),
                                    OutgoingMessage.fixedTime("tx-parked", "b", tomorrow()).withId("label:2")));
                            try {
                                stop(redis, template);
                            }
                            catch (InterruptedException ex) {
                                throw new IllegalStateException(ex);
                            }
                        });

                        // the commit waited for the batch's write, and the handler ran before the write's future ended
                        assertThat(context.getBean(MeterRegistry.class).counter("orders.lost.sends", "topic",
                                "tx-parked").count()).isEqualTo(2.0);
                        assertThat(log.messages()).filteredOn(m -> m.startsWith(LINE)).hasSize(2)
                                .anySatisfy(m -> assertThat(m).contains("id 'label:1'"))
                                .anySatisfy(m -> assertThat(m).contains("id 'label:2'"));
                    });
        }
    }
    @Test
    void aHeldSendThatAFullRedisRefusesAfterTheCommitIsReportedAsRedisFull() throws Exception {
        int port = LateRedisServer.freePort();
        try (LateRedisServer redis = LateRedisServer.startOn(port);
                LogCapture log = LogCapture.of("io.rmq").expecting(LINE)) {
            runner(port).run(context -> {
                RmqTemplate template = context.getBean(RmqTemplate.class);
                Transactions transactions = context.getBean(Transactions.class);
                AtomicReference<CompletableFuture<SendResult>> single = new AtomicReference<>();
                AtomicReference<CompletableFuture<io.rmq.producer.BatchResult>> batch = new AtomicReference<>();
                io.lettuce.core.RedisClient admin = io.lettuce.core.RedisClient.create("redis://127.0.0.1:" + port);
                try (var connection = admin.connect()) {
                    transactions.required(() -> {
                        transactions.insertOrder("order-full");
                        single.set(template.sendAsync(OutgoingMessage.fixedTime("tx-parked", "one", tomorrow())));
                        batch.set(template.sendBatchAsync(List.of(
                                OutgoingMessage.fixedTime("tx-parked", "b1", tomorrow()).withId("full:1"),
                                OutgoingMessage.fixedTime("tx-parked", "b2", tomorrow()).withId("full:2"))));
                        connection.sync().configSet("maxmemory", "1"); // full before the commit writes them
                    });
                    assertThat(transactions.orderExists("order-full")).isTrue();
                    assertThat(single.get()).failsWithin(30, TimeUnit.SECONDS).withThrowableThat().havingCause()
                            .isInstanceOf(io.rmq.core.RmqRedisFullException.class)
                            .withMessageContaining("the message was NOT stored");
                    assertThat(batch.get()).failsWithin(30, TimeUnit.SECONDS).withThrowableThat().havingCause()
                            .isInstanceOf(io.rmq.core.RmqRedisFullException.class)
                            .withMessageContaining("none of its 2 messages was stored");
                    connection.sync().configSet("maxmemory", "0");
                    assertThat(template.admin().stats("tx-parked").waiting()).isZero();
                }
                finally {
                    admin.shutdown();
                }
                assertThat(log.messages()).hasSize(3).allMatch(line -> line.contains("RmqRedisFullException: Redis is"
                        + " full"));
            });
        }
    }
}
