package io.rmq.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.annotation.JsonCreator;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rmq.Rmq;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.MessageHandler;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.container.internal.OrderlyListenerContainer;
import io.rmq.coordination.SlotCoordinator;
import io.rmq.coordination.zookeeper.ZooKeeperSlotCoordinator;
import io.rmq.core.ConsumeMode;
import io.rmq.core.TopicType;
import io.rmq.micrometer.MicrometerInstrumentation;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import io.rmq.test.TcpProxy;
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
        return coordinator(zookeeper.getConnectString(), 3000);
    }

    private ZooKeeperSlotCoordinator coordinator(String connectString, int sessionTimeoutMillis) {
        CuratorFramework curator = CuratorFrameworkFactory.newClient(connectString, sessionTimeoutMillis, 3000,
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

    /**
     * What the container's guard is derived from: the session timeout the server granted (not a setting checked at
     * start-up), and no assurance from the moment the connection is suspended until a check succeeds again.
     */
    @Test
    void theMembershipVouchesForTheGrantedSessionAndStopsAtOnceWhenTheConnectionIsSuspended() throws Exception {
        try (TcpProxy proxy = new TcpProxy("127.0.0.1", zookeeper.getPort());
                LogCapture zookeeperLog = LogCapture.of("org.apache.zookeeper");
                LogCapture curatorLog = LogCapture.of("org.apache.curator")) {
            SlotCoordinator.Membership membership = coordinator("127.0.0.1:" + proxy.port(), 2000)
                    .join("zk-session", "m1", 4, Duration.ofSeconds(30));
            assertThat(membership.assignedSlots()).containsOnlyKeys(0, 1, 2, 3);
            assertThat(membership.assignmentTimeout()).isEqualTo(Duration.ofMillis(
                    clients.get(0).getZookeeperClient().getLastNegotiatedSessionTimeoutMs())).isEqualTo(
                    Duration.ofSeconds(2));
            assertThat(membership.assured()).isTrue();
            proxy.stall(120_000);
            await().atMost(Duration.ofSeconds(30)).until(() -> !membership.assured());
            proxy.calm();
            // reconnected (or a new session): assured again only once a check has gone through
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                membership.assignedSlots();
                return membership.assured();
            });
            membership.close();
            clients.get(0).close();
        }
    }

    /** A handler start: by which instance, on which slot, which entry of which key, when. */
    private record Start(String instance, int slot, String key, int seq, long nanos) {
    }

    private OrderlyListenerContainer recording(String topic, String instance, Duration ownership,
            ZooKeeperSlotCoordinator coordinator, Queue<Start> starts, Set<String> done,
            MessageHandler<String> inner) {
        Rmq engine = newEngine();
        ListenerContainer container = engine.container(topic, ORDERED, String.class, (String body, Delivery d) -> {
            String[] entry = body.split(":");
            starts.add(new Start(instance, d.slot(), entry[0], Integer.parseInt(entry[1]), System.nanoTime()));
            inner.handle(body, d);
            done.add(body);
        }, ContainerOptions.of("o-" + instance, 4).withMode(ConsumeMode.ORDERLY).withOwnershipTimeout(ownership),
                coordinator);
        containers.add(container);
        container.start();
        return (OrderlyListenerContainer) container;
    }

    /**
     * A 2 s ZooKeeper session (for a fast take-over) under a much longer ownership: an owner frozen past its session
     * loses its slots to another instance (whose claim follows the session and overrides the Redis ownership), so
     * once resumed it must start no handler on them, although its ownership in Redis has not run out yet. The freeze
     * is simulated in this JVM: A's handler threads stop inside a handler with the rest of their batch in hand, and
     * ZooKeeper hears nothing more from A (its connection runs through a stalled proxy).
     */
    @Test
    void anOwnerFrozenPastAShortSessionStartsNoHandlerOnTheSlotsTakenOverWhateverTheOwnership() throws Exception {
        String topic = "zk-frozen";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 16);
        Duration ownership = Duration.ofSeconds(30);
        Queue<Start> starts = new ConcurrentLinkedQueue<>();
        Set<String> done = ConcurrentHashMap.newKeySet();
        AtomicBoolean frozen = new AtomicBoolean();
        CountDownLatch thaw = new CountDownLatch(1);
        Set<Integer> caught = ConcurrentHashMap.newKeySet();
        AtomicInteger stopped = new AtomicInteger();
        try (TcpProxy zookeeperOfA = new TcpProxy("127.0.0.1", zookeeper.getPort());
                LogCapture rmqLog = LogCapture.rmq();
                LogCapture zookeeperLog = LogCapture.of("org.apache.zookeeper");
                LogCapture curatorLog = LogCapture.of("org.apache.curator")) {
            OrderlyListenerContainer a = recording(topic, "A", ownership,
                    coordinator("127.0.0.1:" + zookeeperOfA.port(), 2000), starts, done, (body, d) -> {
                        if (frozen.get()) {
                            caught.add(d.slot());
                            stopped.incrementAndGet();
                            thaw.await(120, TimeUnit.SECONDS);
                        }
                    });
            assertThat(clients.get(0).blockUntilConnected(15, TimeUnit.SECONDS)).isTrue();
            assertThat(clients.get(0).getZookeeperClient().getLastNegotiatedSessionTimeoutMs())
                    .as("the short session the server granted").isEqualTo(2000);
            await().atMost(Duration.ofSeconds(15)).until(() -> a.ownedSlots().size() == 16);
            OrderlyListenerContainer b = recording(topic, "B", ownership, coordinator(zookeeper.getConnectString(),
                    2000), starts, done, (body, d) -> {
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> a.ownedSlots().size() + b.ownedSlots().size() == 16
                    && a.ownedSlots().size() >= 6 && b.ownedSlots().size() >= 6);

            frozen.set(true);
            sendLedger(topic, 32, 20, 0);
            // every handler thread of A stops in a handler (on 1-4 slots: lanes of one slot run in parallel), then A
            // goes silent for ZooKeeper
            await().atMost(Duration.ofSeconds(30)).until(() -> stopped.get() == 4);
            zookeeperOfA.stall(120_000);
            long frozenAt = System.nanoTime();
            // A's session expires; B takes the slots over and handles, again, what A had taken
            await().atMost(Duration.ofSeconds(60)).until(() -> caught.stream().allMatch(slot -> starts.stream()
                    .anyMatch(s -> s.instance().equals("B") && s.slot() == slot && s.nanos() > frozenAt)));
            frozen.set(false);
            thaw.countDown();
            // a resumed JVM goes on at once: whatever A would start, it starts well within this
            Thread.sleep(2000);
            long observedUntil = System.nanoTime();
            zookeeperOfA.calm(); // A gets a new session and a share again, handed over by B
            await().atMost(Duration.ofSeconds(60)).until(() -> done.size() == 32 * 20);
            await().atMost(Duration.ofSeconds(30)).until(() -> !a.ownedSlots().isEmpty()
                    && a.ownedSlots().size() + b.ownedSlots().size() == 16);
            a.stop();
            b.stop();
            clients.get(0).close(); // A's session ends before its proxy does

            List<Start> byTime = starts.stream().sorted(Comparator.comparingLong(Start::nanos)).toList();
            List<String> overlaps = new ArrayList<>();
            for (int slot : caught) {
                long takenOver = byTime.stream().filter(s -> s.instance().equals("B") && s.slot() == slot
                        && s.nanos() > frozenAt).findFirst().orElseThrow().nanos();
                byTime.stream().filter(s -> s.instance().equals("A") && s.slot() == slot && s.nanos() > takenOver
                        && s.nanos() < observedUntil).forEach(s -> overlaps.add(s.key() + ":" + s.seq() + " on slot "
                        + slot + ", " + (s.nanos() - takenOver) / 1_000_000 + " ms after B took the slot over"));
            }
            // each key's entries start in their order (a repeat is the take-over handling again what A had taken)
            Map<String, List<Integer>> order = new TreeMap<>();
            byTime.forEach(s -> order.computeIfAbsent(s.key(), k -> new ArrayList<>()).add(s.seq()));
            List<String> disorder = new ArrayList<>();
            order.forEach((key, seqs) -> {
                for (int i = 1; i < seqs.size(); i++) {
                    if (seqs.get(i) < seqs.get(i - 1)) {
                        disorder.add(key + " started " + seqs);
                        break;
                    }
                }
            });
            assertThat(overlaps).as("handlers A started, once resumed, on slots B had taken over").isEmpty();
            assertThat(disorder).as("keys whose entries started out of order").isEmpty();
            assertThat(rmqLog.messages()).as("A found its slots taken over")
                    .anyMatch(m -> m.contains("lost slot") || m.contains("could not renew"));
            assertThat(rmq.admin().stats(topic).inFlight()).isZero();
        }
    }
    /** An entry whose conversion stops its handler thread while {@link #CONVERSIONS_STOP} is set. */
    record LedgerEntry(String value) {

        @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
        static LedgerEntry of(String value) throws InterruptedException {
            if (CONVERSIONS_STOP.get()) {
                STOPPED_IN_CONVERSION.incrementAndGet();
                conversionsGoOn.await(120, TimeUnit.SECONDS);
            }
            return new LedgerEntry(value);
        }
    }

    static final AtomicBoolean CONVERSIONS_STOP = new AtomicBoolean();
    static final AtomicInteger STOPPED_IN_CONVERSION = new AtomicInteger();
    static volatile CountDownLatch conversionsGoOn = new CountDownLatch(1);

    /**
     * The slot's guard is checked once more after the body is converted, right before the handler: a handler thread
     * that stood still between the lane's check and the handler (here: inside the conversion; in production a
     * preempted thread or a frozen JVM) while the owner lost its ZooKeeper connection and its guard lapsed starts no
     * handler when it goes on. What it had converted is handled once the owner holds its slots again, and the meters
     * record handler time for the handler calls only (a delivery that went back unstarted is counted cancelled).
     */
    @Test
    void aThreadStoppedWhileABodyIsConvertedStartsNoHandlerOnceTheGuardHasLapsed() throws Exception {
        String topic = "zk-converting";
        rmq.defineTopic(topic, TopicType.FIXED_TIME, 16);
        CONVERSIONS_STOP.set(false);
        STOPPED_IN_CONVERSION.set(0);
        conversionsGoOn = new CountDownLatch(1);
        Queue<Long> starts = new ConcurrentLinkedQueue<>();
        Set<String> done = ConcurrentHashMap.newKeySet();
        try (TcpProxy zookeeperOfA = new TcpProxy("127.0.0.1", zookeeper.getPort());
                LogCapture rmqLog = LogCapture.rmq();
                LogCapture zookeeperLog = LogCapture.of("org.apache.zookeeper");
                LogCapture curatorLog = LogCapture.of("org.apache.curator")) {
            ZooKeeperSlotCoordinator coordinator = coordinator("127.0.0.1:" + zookeeperOfA.port(), 2000);
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            ListenerContainer container = newEngine(o -> o.withInstrumentation(new MicrometerInstrumentation(meters)))
                    .container(topic, ORDERED, LedgerEntry.class,
                            (LedgerEntry entry, Delivery d) -> {
                                starts.add(System.nanoTime());
                                done.add(entry.value());
                            }, ContainerOptions.of("o-converting", 4).withMode(ConsumeMode.ORDERLY)
                                    .withOwnershipTimeout(Duration.ofSeconds(30)), coordinator);
            containers.add(container);
            container.start();
            OrderlyListenerContainer a = (OrderlyListenerContainer) container;
            await().atMost(Duration.ofSeconds(15)).until(() -> a.ownedSlots().size() == 16);

            CONVERSIONS_STOP.set(true);
            sendLedger(topic, 32, 5, 0, body -> "\"" + body + "\""); // JSON strings, for the creator
            // every handler thread stops in a conversion, past the lane's guard check
            await().atMost(Duration.ofSeconds(30)).until(() -> STOPPED_IN_CONVERSION.get() == 4);
            zookeeperOfA.stall(120_000);
            // the connection suspended (no assurance) and the guard time (the 2 s session) run out
            await().atMost(Duration.ofSeconds(30)).until(() -> !clients.get(0).getZookeeperClient().isConnected());
            Thread.sleep(2500);
            CONVERSIONS_STOP.set(false);
            long wentOn = System.nanoTime();
            conversionsGoOn.countDown();
            Thread.sleep(1500);
            long observedUntil = System.nanoTime();
            zookeeperOfA.calm();
            await().atMost(Duration.ofSeconds(60)).until(() -> done.size() == 32 * 5);

            assertThat(starts).as("handlers started while the owner's guard had lapsed")
                    .noneMatch(at -> at > wentOn && at < observedUntil);
            // (whether the owner logs a failed renewal or a lost slot depends on where its coordination call stood
            // when ZooKeeper went silent; the coordinator says so as soon as Curator suspends the connection)
            assertThat(rmqLog.messages()).as("the coordinator logged that the slots start no handler")
                    .anyMatch(m -> m.contains("ZooKeeper connection SUSPENDED") && m.contains("start no handler"));
            // a handler's time is recorded right after it returns: wait for the last one's, then no more than that
            await().atMost(Duration.ofSeconds(10)).until(() -> handlerTimes(meters) >= starts.size());
            assertThat(handlerTimes(meters)).as("handler time recorded only for handler calls").isEqualTo(starts.size());
            assertThat(meters.get("rmq.handled.messages").tag("rmq.outcome", "cancelled").counter().count())
                    .as("the four deliveries in conversion went back unstarted once their guard had lapsed")
                    .isGreaterThanOrEqualTo(4);
            container.stop();
            assertThat(rmq.admin().stats(topic).inFlight()).isZero();
        }
    }

    private static long handlerTimes(SimpleMeterRegistry meters) {
        return meters.find("messaging.process.duration").timers().stream().mapToLong(Timer::count).sum();
    }
}
