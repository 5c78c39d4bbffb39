package io.rmq.readme;

// docs/testing.md's "Testing your application" example, as a user of the Quick start writes it. It runs in an execution
// of its own (rmq-samples' pom), with the Quick start's application.yml as the application's configuration.
// tag::testing-example[]
import java.time.Duration;
import java.time.Instant;

import io.rmq.admin.MessageRef;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.context.RmqTest;
import io.rmq.test.context.RmqTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest
@RmqTest                                   // or @RmqTest(topology = RmqTest.Topology.CLUSTER): three masters
class ShopTest {

    @Autowired Checkout checkout;
    @Autowired RmqTemplate rmq;
    @Autowired RmqTestSupport rmqTest;

    @AfterEach
    void purge() {
        rmqTest.purge("order-timeout");   // the test methods share the context's Redis keys
    }

    @Test
    void anOrderPastItsDeadlineIsClosed() {
        // tag::testing-await[]
        checkout.placed("7", Instant.now());

        rmqTest.awaitHandled("order-timeout", new OrderRef("7")); // the listener returned, the ack reached Redis
        rmqTest.awaitDrained("order-timeout");      // nothing waiting, in flight or backing off
        // end::testing-await[]
    }

    @Test
    void anOrderWaitsForItsDeadline() {
        checkout.placed("8", Instant.now().plus(Duration.ofHours(1)));

        MessageRef timeout = MessageRef.body("order-timeout", new OrderRef("8"));
        assertThat(rmq.admin().find(timeout).isWaiting()).isTrue(); // due in an hour
    }
}
// end::testing-example[]
