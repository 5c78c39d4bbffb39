package io.rmq.spring.transactions;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import io.rmq.admin.MessageRef;
import io.rmq.producer.SendResult;
import io.rmq.spring.RmqTemplate;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;

/**
 * The application the transaction tests run: H2 with its transaction manager, the documentation's order service, a
 * listener that records deliveries, and transactional event listeners that send.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({TransactionTestDatabase.class, OrderPlacement.class})
class TransactionTestApplication {

    /** Far enough ahead that a message waits in Redis for the test to find it. */
    static Instant tomorrow() {
        return Instant.now().plus(Duration.ofDays(1));
    }

    @Bean
    Deliveries deliveries() {
        return new Deliveries();
    }

    @Bean
    OrderEvents orderEvents(RmqTemplate rmq) {
        return new OrderEvents(rmq);
    }

    /** What the listener of {@code tx-delivered} was given. */
    static class Deliveries {

        final BlockingQueue<String> delivered = new LinkedBlockingQueue<>();

        @RmqListener(topic = "tx-delivered")
        void on(String body) {
            delivered.add(body);
        }
    }

    record OrderPlaced(String id) {
    }

    /** Sends from transactional event listeners, recording what each send returned. */
    static class OrderEvents {

        private final RmqTemplate rmq;
        final BlockingQueue<SendResult> afterCommit = new LinkedBlockingQueue<>();
        final BlockingQueue<Boolean> inRedisRightAfterTheSend = new LinkedBlockingQueue<>();
        final BlockingQueue<SendResult> beforeCommit = new LinkedBlockingQueue<>();

        OrderEvents(RmqTemplate rmq) {
            this.rmq = rmq;
        }

        @TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
        public void placed(OrderPlaced event) {
            afterCommit.add(rmq.sendFixedTime("tx-parked", "after-commit:" + event.id(), tomorrow()));
            inRedisRightAfterTheSend.add(rmq.admin().contains(MessageRef.body("tx-parked",
                    "after-commit:" + event.id())));
        }

        @TransactionalEventListener(phase = TransactionPhase.BEFORE_COMMIT)
        public void placing(OrderPlaced event) {
            beforeCommit.add(rmq.sendFixedTime("tx-parked", "before-commit:" + event.id(), tomorrow()));
        }
    }
}
