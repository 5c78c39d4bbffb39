package io.rmq.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.OrderlyListenerContainer;
import io.rmq.coordination.zookeeper.ZooKeeperSlotCoordinator;
import io.rmq.core.TopicType;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * ORDERLY consumers coordinated through a real ZooKeeper server (Curator's in-process {@link TestingServer}), the
 * fencing still in Redis: shares on join, hand-over on leave, take-over when an instance's session expires.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ZooKeeperCoordinatorTest extends OrderlyTestSupport {

    private static TestingServer zookeeper;
    private final List<CuratorFramework> clients = new ArrayList<>();

    ZooKeeperCoordinatorTest(RedisTopology topology) {
        super(topology);
    }

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @AfterEach
    void closeClients() {
        stopContainers(); // they leave ZooKeeper through these clients
        clients.forEach(CuratorFramework::close);
    }

    /** Each instance has its own ZooKeeper session (a 3 s session timeout: how long a dead one keeps its slots). */
    private ZooKeeperSlotCoordinator coordinator() {
        CuratorFramework curator = CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), 3000, 3000,
                new RetryNTimes(3, 200));
        curator.start();
        clients.add(curator);
        return new ZooKeeperSlotCoordinator(curator, "/rmq/" + prefix);
    }

    private OrderlyListenerContainer zkOrderly(String topic, Checker checker, ZooKeeperSlotCoordinator coordinator) {
        MessageHandler<String> handler = (body, d) -> Thread.sleep(1);
        return orderly(newEngine(), topic, 4, Duration.ofSeconds(3), checker, handler, coordinator);
    }

    @Test
    void zooKeeperSharesTheSlotsHandsThemOverAndTakesThemFromAnExpiredSession() throws Exception {
        String topic = "zk-ledger";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 16);
        Checker checker = new Checker();
        ZooKeeperSlotCoordinator coordinatorA = coordinator();
        OrderlyListenerContainer a = zkOrderly(topic, checker, coordinatorA);
        await().atMost(Duration.ofSeconds(45)).until(() -> a.ownedSlots().size() == 16);
        sendLedger(topic, 32, 10, 0);
        OrderlyListenerContainer b = zkOrderly(topic, checker, coordinator());
        OrderlyListenerContainer c = zkOrderly(topic, checker, coordinator());
        await().atMost(Duration.ofSeconds(45)).until(() -> a.ownedSlots().size() + b.ownedSlots().size()
                + c.ownedSlots().size() == 16 && b.ownedSlots().size() >= 5 && c.ownedSlots().size() >= 5);
        sendLedger(topic, 32, 10, 10);
        // b leaves gracefully; c's ZooKeeper session expires (as when its JVM stalls past the session timeout)
        b.stop();
        try (LogCapture curator = LogCapture.of("org.apache.curator").expecting("Session expired")) {
            clients.get(2).getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
            sendLedger(topic, 32, 10, 20);
            await().atMost(Duration.ofSeconds(90)).until(() -> checker.done.size() == 32 * 30
                    && !curator.warnings().isEmpty());
            assertThat(curator.warnings()).as("Curator's report of the expiry caused").singleElement().asString()
                    .contains("Session expired");
        }
        checker.assertInOrder(32, 30);
        await().atMost(Duration.ofSeconds(45)).until(() -> a.ownedSlots().size() + c.ownedSlots().size() == 16);
        assertThat(rmq.admin().stats(topic).inFlight()).isZero();
    }
}
