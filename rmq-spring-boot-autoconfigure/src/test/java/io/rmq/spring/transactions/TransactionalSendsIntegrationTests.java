package io.rmq.spring.transactions;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.rmq.admin.MessageRef;
import io.rmq.admin.MessageStatus;
import io.rmq.core.RmqInvalidArgumentException;
import io.rmq.producer.BatchResult;
import io.rmq.producer.OutgoingMessage;
import io.rmq.producer.SendResult;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.RmqSendDiscardedException;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.RmqTransactionMode;
import io.rmq.spring.transactions.TransactionTestApplication.Deliveries;
import io.rmq.spring.transactions.TransactionTestApplication.OrderEvents;
import io.rmq.spring.transactions.TransactionTestApplication.OrderPlaced;
import io.rmq.spring.transactions.TransactionTestDatabase.Transactions;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.messaging.support.MessageBuilder;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static io.rmq.spring.transactions.TransactionTestApplication.tomorrow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * RmqTemplate's sends inside Spring transactions (a real {@code DataSourceTransactionManager} on H2, {@code @Transactional}
 * methods) against a real Redis, standalone and cluster ({@link TransactionalSendsStandaloneTest},
 * {@link TransactionalSendsClusterTest}): written after the commit, dropped on rollback, per propagation. "Not in Redis"
 * is checked in Redis itself, after the transaction has returned; messages on {@code tx-parked} are due tomorrow, so
 * they wait there to be found.
 */
@ExtendWith(RedisServersExtension.class)
@DirtiesContext
@SpringBootTest(classes = TransactionTestApplication.class, properties = {
        "rmq.topics.order-timeout.type=FIXED_TIME", "rmq.topics.order-attempts.type=PRIORITY",
        "rmq.topics.shipping-labels.type=PRIORITY", "rmq.topics.tx-parked.type=FIXED_TIME",
        "rmq.topics.tx-parked.slot-amount=8", "rmq.topics.tx-priority.type=PRIORITY",
        "rmq.topics.tx-delivered.type=FIXED_TIME"})
abstract class TransactionalSendsIntegrationTests {

    @Autowired
    RmqTemplate template;

    @Autowired
    Transactions transactions;

    @Autowired
    OrderPlacement orders;

    @Autowired
    Deliveries deliveries;

    @Autowired
    OrderEvents events;

    @Autowired
    ApplicationEventPublisher publisher;

    static void redis(DynamicPropertyRegistry registry, RedisTopology topology) {
        topology.springProperties("tx-" + topology.name().toLowerCase() + "-" + UUID.randomUUID())
                .forEach((k, v) -> registry.add(k, () -> v));
    }

    private static String unique(String name) {
        return name + "-" + UUID.randomUUID();
    }

    private boolean parked(String body) {
        return template.admin().contains(MessageRef.body("tx-parked", body));
    }

    @Test
    void theDefaultModeFollowsTheTransaction() {
        assertThat(template.getTransactionMode()).isEqualTo(RmqTransactionMode.AFTER_COMMIT);
    }

    @Test
    void theDocumentationsExampleKeepsTheOrderAndItsTimeoutTogether() {
        String placed = unique("o");
        String refused = unique("o");
        transactions.stock("book", 1);

        orders.place(placed, "book");
        assertThat(transactions.orderExists(placed)).isTrue();
        assertThat(template.admin().contains(MessageRef.body("order-timeout", placed)))
                .as("written when the commit returned").isTrue();

        assertThatThrownBy(() -> orders.place(refused, "book")).hasMessage("out of stock: book");
        assertThat(transactions.orderExists(refused)).isFalse();
        assertThat(template.admin().contains(MessageRef.body("order-timeout", refused))).as("dropped with the rollback")
                .isFalse();
        assertThat(template.admin().contains(MessageRef.body("order-attempts", refused)))
                .as("written at once: immediate()").isTrue();
        assertThat(template.admin().contains(MessageRef.body("order-attempts", placed))).isTrue();
    }

    @Test
    void theDocumentationsAsyncSendCompletesAfterTheCommit() throws Exception {
        String order = unique("o");
        transactions.stock("pen", 1);
        orders.place(order, "pen");

        SendResult label = orders.ship(order).get(30, TimeUnit.SECONDS);

        assertThat(label.held()).isFalse();
        assertThat(label.topic()).isEqualTo("shipping-labels");
        assertThat(template.admin().contains(MessageRef.body("shipping-labels", order))).isTrue();
    }

    @Test
    void aSendIsWrittenOnlyOnceItsTransactionCommitsAndIsThenDelivered() throws Exception {
        String parked = unique("committed");
        String delivered = unique("delivered");
        AtomicReference<SendResult> result = new AtomicReference<>();

        transactions.required(() -> {
            transactions.insertOrder(parked);
            result.set(template.sendFixedTime("tx-parked", parked, tomorrow()));
            template.sendFixedTime("tx-delivered", delivered, Instant.now());
            template.sendFixedTime("tx-parked", MessageBuilder.withPayload("a Spring message")
                    .setHeader(RmqHeaders.ID, parked + "-message").build(), tomorrow());
            assertThat(parked(parked)).as("not in Redis before the commit").isFalse();
            assertThat(template.admin().contains(MessageRef.id("tx-parked", parked + "-message"))).isFalse();
        });

        assertThat(transactions.orderExists(parked)).isTrue();
        assertThat(parked(parked)).as("written when the commit returned").isTrue();
        assertThat(template.admin().contains(MessageRef.id("tx-parked", parked + "-message"))).isTrue();
        assertThat(result.get().held()).isTrue();
        assertThat(result.get().merged()).isFalse();
        assertThat(result.get().slot()).as("the slot it went to")
                .isEqualTo(template.admin().find(MessageRef.body("tx-parked", parked)).slot());
        assertThat(deliveries.delivered.poll(30, TimeUnit.SECONDS)).isEqualTo(delivered);
    }

    @Test
    void aRollbackDropsEverySendOfTheTransaction() {
        String id = unique("rolled-back");
        List<CompletableFuture<?>> futures = new ArrayList<>();

        assertThatThrownBy(() -> transactions.required(() -> {
            transactions.insertOrder(id);
            SendResult single = template.sendFixedTime("tx-parked", id + "-single", tomorrow());
            template.send(OutgoingMessage.fixedTime("tx-parked", "payload", tomorrow()).withId(id + "-with-id")
                    .withHeader("tenant", "acme"));
            BatchResult batch = template.sendBatch(List.of(OutgoingMessage.fixedTime("tx-parked", id + "-b1", tomorrow()),
                    OutgoingMessage.fixedTime("tx-parked", id + "-b2", tomorrow())));
            futures.add(template.sendAsync(OutgoingMessage.fixedTime("tx-parked", id + "-async", tomorrow())));
            futures.add(template.sendBatchAsync(List.of(
                    OutgoingMessage.fixedTime("tx-parked", id + "-batch-async", tomorrow()))));
            assertThat(single.held()).isTrue();
            assertThat(batch).isEqualTo(BatchResult.held(2));
            assertThat(batch.merged()).isZero();
            throw new IllegalStateException("rolled back on purpose");
        })).hasMessage("rolled back on purpose");

        assertThat(transactions.orderExists(id)).as("the database rolled back").isFalse();
        for (String body : List.of("-single", "-b1", "-b2", "-async", "-batch-async")) {
            assertThat(parked(id + body)).as(body).isFalse();
        }
        assertThat(template.admin().contains(MessageRef.id("tx-parked", id + "-with-id"))).isFalse();
        assertThat(futures.get(0)).failsWithin(0, TimeUnit.SECONDS).withThrowableThat().havingCause()
                .isInstanceOf(RmqSendDiscardedException.class)
                .withMessage("Not sent to topic 'tx-parked': the transaction rolled back");
        assertThat(futures.get(1)).failsWithin(0, TimeUnit.SECONDS).withThrowableThat().havingCause()
                .isInstanceOf(RmqSendDiscardedException.class);
    }

    @Test
    void anAsyncSendsFutureCompletesWhenItsWriteAfterTheCommitDoes() throws Exception {
        String body = unique("async");
        AtomicReference<CompletableFuture<SendResult>> single = new AtomicReference<>();
        AtomicReference<CompletableFuture<BatchResult>> batch = new AtomicReference<>();

        transactions.required(() -> {
            single.set(template.sendAsync(OutgoingMessage.fixedTime("tx-parked", body, tomorrow())));
            batch.set(template.sendBatchAsync(List.of(OutgoingMessage.fixedTime("tx-parked", body + "-1", tomorrow()),
                    OutgoingMessage.fixedTime("tx-parked", body + "-2", tomorrow()))));
            assertThat(single.get()).as("not before the commit").isNotDone();
            assertThat(batch.get()).isNotDone();
        });

        SendResult sent = single.get().get(30, TimeUnit.SECONDS);
        assertThat(sent.held()).isFalse();
        assertThat(sent.merged()).isFalse();
        assertThat(batch.get().get(30, TimeUnit.SECONDS)).isEqualTo(new BatchResult(2, 2));
        assertThat(parked(body)).isTrue();
        assertThat(parked(body + "-2")).isTrue();
    }

    @Test
    void theSendsOfATransactionAreWrittenInCallOrderAndWithTheBodyAsItWasWhenSent() {
        String id = unique("ordered");
        List<String> lines = new ArrayList<>(List.of("first line"));

        transactions.required(() -> {
            template.send(OutgoingMessage.fixedTime("tx-parked", "v1", tomorrow()).withId(id));
            template.sendAsync(OutgoingMessage.fixedTime("tx-parked", "v2", tomorrow()).withId(id));
            template.sendBatch(List.of(OutgoingMessage.fixedTime("tx-parked", "v3", tomorrow()).withId(id)));
            template.sendBatchAsync(List.of(OutgoingMessage.fixedTime("tx-parked", "v4", tomorrow()).withId(id)));
            template.send(OutgoingMessage.fixedTime("tx-parked", "v5", tomorrow()).withId(id));
            for (int priority = 1; priority <= 10; priority++) {
                template.sendPriority("tx-priority", id, priority);
            }
            template.send(OutgoingMessage.fixedTime("tx-parked", lines, tomorrow()).withId(id + "-lines"));
            lines.add("added after the send");
        });

        MessageStatus merged = template.admin().find(MessageRef.id("tx-parked", id));
        assertThat(new String(merged.body(), StandardCharsets.UTF_8)).as("the latest send's payload").isEqualTo("v5");
        assertThat(template.admin().find(MessageRef.body("tx-priority", id)).waitingScore()).as("the latest priority")
                .isEqualTo(10.0);
        assertThat(new String(template.admin().find(MessageRef.id("tx-parked", id + "-lines")).body(),
                StandardCharsets.UTF_8))
                .isEqualTo("[\"first line\"]");
    }

    @Test
    void badInputIsRefusedWhenTheSendIsMadeAndNothingOfItIsHeld() {
        String ok = unique("ok");
        String partOfABadBatch = unique("in-a-bad-batch");

        transactions.required(() -> {
            assertThatThrownBy(() -> template.sendFixedTime("tx-no-such-topic", "x", tomorrow()))
                    .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("tx-no-such-topic");
            assertThatThrownBy(() -> template.sendPriority("tx-parked", "x", 1))
                    .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("FIXED_TIME");
            assertThatThrownBy(() -> template.sendAsync(OutgoingMessage.fixedTime("tx-parked", "x", tomorrow())
                    .withId("i".repeat(300)))).isInstanceOf(RmqInvalidArgumentException.class)
                    .hasMessageContaining("rmq.max-id-size");
            assertThatThrownBy(() -> template.sendBatch(List.of(
                    OutgoingMessage.fixedTime("tx-parked", partOfABadBatch, tomorrow()),
                    OutgoingMessage.fixedTime("tx-parked", new byte[0], tomorrow()))))
                    .isInstanceOf(RmqInvalidArgumentException.class).hasMessageContaining("must not be empty");
            template.sendFixedTime("tx-parked", ok, tomorrow());
        });

        assertThat(parked(ok)).isTrue();
        assertThat(parked(partOfABadBatch)).as("a batch is held whole or not at all").isFalse();
    }

    @Test
    void aRequiresNewTransactionWritesItsOwnSendsWhenItCommits() {
        String outer = unique("outer");
        String inner = unique("inner");

        transactions.required(() -> {
            template.sendFixedTime("tx-parked", outer, tomorrow());
            transactions.requiresNew(() -> template.sendFixedTime("tx-parked", inner, tomorrow()));
            assertThat(parked(inner)).as("the inner transaction committed").isTrue();
            assertThat(parked(outer)).as("the outer one has not").isFalse();
        });

        assertThat(parked(outer)).isTrue();
    }

    @Test
    void aRequiresNewRollbackDropsOnlyItsOwnSendsAndAnOuterRollbackKeepsWhatItCommitted() {
        String outer = unique("outer");
        String innerRolledBack = unique("inner-rolled-back");
        String outerRolledBack = unique("outer-rolled-back");
        String innerCommitted = unique("inner-committed");

        transactions.required(() -> {
            template.sendFixedTime("tx-parked", outer, tomorrow());
            assertThatThrownBy(() -> transactions.requiresNew(() -> {
                template.sendFixedTime("tx-parked", innerRolledBack, tomorrow());
                throw new IllegalStateException("inner rolled back on purpose");
            })).hasMessage("inner rolled back on purpose");
        });
        assertThatThrownBy(() -> transactions.required(() -> {
            template.sendFixedTime("tx-parked", outerRolledBack, tomorrow());
            transactions.requiresNew(() -> template.sendFixedTime("tx-parked", innerCommitted, tomorrow()));
            throw new IllegalStateException("outer rolled back on purpose");
        })).hasMessage("outer rolled back on purpose");

        assertThat(parked(outer)).isTrue();
        assertThat(parked(innerRolledBack)).isFalse();
        assertThat(parked(outerRolledBack)).isFalse();
        assertThat(parked(innerCommitted)).isTrue();
    }

    @Test
    void aNestedTransactionsSendsFollowTheOuterCommitAndARollbackToItsSavepointDropsThem() {
        String before = unique("before-savepoint");
        String rolledBack = unique("nested-rolled-back");
        String nestedCommitted = unique("nested-committed");

        transactions.required(() -> {
            template.sendFixedTime("tx-parked", before, tomorrow());
            assertThatThrownBy(() -> transactions.nested(() -> {
                transactions.insertOrder(rolledBack);
                template.sendFixedTime("tx-parked", rolledBack, tomorrow());
                throw new IllegalStateException("nested rolled back on purpose");
            })).hasMessage("nested rolled back on purpose");
            transactions.nested(() -> template.sendFixedTime("tx-parked", nestedCommitted, tomorrow()));
            assertThat(parked(nestedCommitted)).as("a savepoint released is no commit").isFalse();
        });

        assertThat(transactions.orderExists(rolledBack)).as("the savepoint rolled back").isFalse();
        assertThat(parked(before)).isTrue();
        assertThat(parked(rolledBack)).isFalse();
        assertThat(parked(nestedCommitted)).isTrue();
    }

    @Test
    void aRollbackToASavepointSetBeforeTheFirstSendDropsEverySendAfterIt() {
        String rolledBack = unique("nested-first");
        String after = unique("after-savepoint");

        transactions.required(() -> {
            assertThatThrownBy(() -> transactions.nested(() -> {
                template.sendFixedTime("tx-parked", rolledBack, tomorrow());
                throw new IllegalStateException("nested rolled back on purpose");
            })).hasMessage("nested rolled back on purpose");
            template.sendFixedTime("tx-parked", after, tomorrow());
        });

        assertThat(parked(rolledBack)).isFalse();
        assertThat(parked(after)).isTrue();
    }

    @Test
    void withoutAnActualTransactionSendsAreWrittenAtOnce() {
        String suspended = unique("not-supported");
        String supports = unique("supports");
        String held = unique("held");

        assertThatThrownBy(() -> transactions.required(() -> {
            template.sendFixedTime("tx-parked", held, tomorrow());
            transactions.notSupported(() -> {
                assertThat(template.sendFixedTime("tx-parked", suspended, tomorrow()).held()).isFalse();
                assertThat(parked(suspended)).isTrue();
            });
            throw new IllegalStateException("rolled back on purpose");
        })).hasMessage("rolled back on purpose");
        transactions.supports(() -> assertThat(template.sendFixedTime("tx-parked", supports, tomorrow()).held())
                .isFalse());

        assertThat(parked(suspended)).as("sent outside the transaction").isTrue();
        assertThat(parked(held)).isFalse();
        assertThat(parked(supports)).isTrue();
    }

    @Test
    void immediateWritesAtOnceInsideATransactionAndARollbackKeepsIt() {
        String body = unique("immediate");

        assertThatThrownBy(() -> transactions.required(() -> {
            SendResult result = template.immediate().sendFixedTime("tx-parked", body, tomorrow());
            assertThat(result.held()).isFalse();
            assertThat(parked(body)).isTrue();
            throw new IllegalStateException("rolled back on purpose");
        })).hasMessage("rolled back on purpose");

        assertThat(parked(body)).isTrue();
        assertThat(template.immediate().getTransactionMode()).isEqualTo(RmqTransactionMode.IMMEDIATE);
        assertThat(template.immediate().immediate()).isSameAs(template.immediate());
    }

    @Test
    void aTransactionalEventListenerAfterCommitSendsAtOnceAndOneBeforeCommitIsHeld() throws Exception {
        String order = unique("event");

        transactions.required(() -> {
            transactions.insertOrder(order);
            publisher.publishEvent(new OrderPlaced(order));
        });

        SendResult afterCommit = events.afterCommit.poll(10, TimeUnit.SECONDS);
        assertThat(afterCommit).isNotNull();
        assertThat(afterCommit.held()).as("nothing would write it later").isFalse();
        assertThat(events.inRedisRightAfterTheSend.poll(10, TimeUnit.SECONDS)).isTrue();
        SendResult beforeCommit = events.beforeCommit.poll(10, TimeUnit.SECONDS);
        assertThat(beforeCommit).isNotNull();
        assertThat(beforeCommit.held()).isTrue();
        assertThat(parked("before-commit:" + order)).isTrue();
        assertThat(parked("after-commit:" + order)).isTrue();
    }

    @Test
    void aSendFromAnotherSynchronizationsAfterCommitIsWritten() {
        String first = unique("registered-first");
        String held = unique("held");
        String second = unique("registered-second");

        // registered before any send: its afterCommit runs before RMQ's synchronization exists
        transactions.required(() -> TransactionSynchronizationManager.registerSynchronization(
                afterCommit(() -> template.sendFixedTime("tx-parked", first, tomorrow()))));
        // registered after a held send: its afterCommit runs once the held sends are written
        transactions.required(() -> {
            template.sendFixedTime("tx-parked", held, tomorrow());
            TransactionSynchronizationManager.registerSynchronization(
                    afterCommit(() -> template.sendFixedTime("tx-parked", second, tomorrow())));
        });

        assertThat(parked(first)).isTrue();
        assertThat(parked(held)).isTrue();
        assertThat(parked(second)).isTrue();
    }

    private static TransactionSynchronization afterCommit(Runnable action) {
        return new TransactionSynchronization() {
            @Override
            public void afterCommit() {
                action.run();
            }
        };
    }
}
