package io.rmq.test.context;

import java.time.Instant;

import io.rmq.admin.TopicStats;
import io.rmq.spring.RmqTemplate;
import io.rmq.test.context.ShopApplication.OrderListener;
import io.rmq.test.context.ShopApplication.OrderPlaced;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;

/** The same application on a 3-master Redis Cluster: {@code @RmqTest(topology = CLUSTER)}. */
@SpringBootTest(classes = ShopApplication.class)
@RmqTest(topology = RmqTest.Topology.CLUSTER, keyPrefix = "shop-cluster-test")
class RmqTestClusterTest {

    @Autowired
    RmqTemplate template;

    @Autowired
    RmqTestSupport rmqTest;

    @Autowired
    OrderListener listener;

    @Autowired
    Environment environment;

    @BeforeAll
    static void askForDockerQuietly() {
        QuietTestcontainers.detect();
    }

    @Test
    void theContextIsWiredToTheThreeMastersOfTheCluster() {
        assertThat(environment.getProperty("spring.data.redis.cluster.nodes")).isNotBlank()
                .isEqualTo(RmqTestRedis.connection(RmqTest.Topology.CLUSTER, RmqTest.Source.AUTO).springProperties()
                        .get("spring.data.redis.cluster.nodes"));
        assertThat(environment.getProperty("spring.data.redis.cluster.nodes").split(",")).hasSizeGreaterThanOrEqualTo(3);
        assertThat(environment.getProperty("rmq.key-prefix")).as("the prefix the test fixed").isEqualTo("shop-cluster-test");
    }

    @Test
    void ordersOnEverySlotAreShippedAndTheTopicDrains() {
        for (long id = 1; id <= 40; id++) {
            template.sendFixedTime("shop-orders", new OrderPlaced(id, "sku-" + id), Instant.now());
        }

        rmqTest.awaitHandled("shop-orders", new OrderPlaced(40, "sku-40"));
        TopicStats stats = rmqTest.awaitDrained("shop-orders");

        assertThat(stats.slots()).hasSize(4);
        assertThat(stats.pending()).isZero();
        assertThat(listener.shipped).hasSizeGreaterThanOrEqualTo(40);
        assertThat(rmqTest.handled("shop-orders")).extracting(RmqTestSupport.Handled::outcome)
                .containsOnly(io.rmq.observe.RmqInstrumentation.Outcome.ACK);
    }
}
