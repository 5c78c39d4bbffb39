package io.rmq.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.RmqListenerContainer;
import io.rmq.container.internal.ListenerContainers;
import io.rmq.core.internal.SlotRouter;
import io.rmq.core.TopicType;
import io.rmq.test.LogCapture;
import io.rmq.test.PrivateCluster;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static io.rmq.internal.RmqInternals.wakeUps;

/**
 * A cluster master that stops answering (SIGSTOP) while messages are due on every slot must hold back only the slots
 * it serves: the other masters' messages reach the handlers while it is still frozen, long before a pop sent to it
 * could time out. Runs on a cluster of its own ({@link PrivateCluster}), since it freezes one of its nodes.
 */
class FrozenClusterMasterTest {

    private static final String PREFIX = "frozen";
    private static final String TOPIC = "t";
    private static final int SLOTS = 16;
    private static final int PER_SLOT = 5;

    @Test
    void aFrozenMasterHoldsBackOnlyItsOwnSlotsDeliveries() throws Exception {
        try (PrivateCluster cluster = PrivateCluster.start(3, 0, Duration.ofSeconds(60))) {
            RedisClusterClient client = cluster.newClient();
            Rmq rmq = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(PREFIX));
            Map<String, Long> handledAt = new ConcurrentHashMap<>();
            RmqListenerContainer container = null;
            boolean frozen = false;
            try (LogCapture logs = LogCapture.rmq()) {
                rmq.defineTopic(TOPIC, TopicType.RANGE_MERGE, SLOTS);
                Set<Integer> frozenSlots = new java.util.HashSet<>();
                for (int slot = 0; slot < SLOTS; slot++) {
                    if (cluster.masterOf(SlotHash.getSlot(PREFIX + ":{" + TOPIC + ":" + slot + "}:store")) == 0) {
                        frozenSlots.add(slot);
                    }
                }
                assertThat(frozenSlots).as("slots on the master to freeze").isNotEmpty().hasSizeLessThan(SLOTS);
                List<String> healthy = new ArrayList<>();
                List<String> held = new ArrayList<>();
                int[] perSlot = new int[SLOTS];
                for (int i = 0; healthy.size() + held.size() < SLOTS * PER_SLOT; i++) {
                    String body = "m-" + i;
                    int slot = SlotRouter.slot(body.getBytes(StandardCharsets.UTF_8), SLOTS);
                    if (perSlot[slot] < PER_SLOT) {
                        perSlot[slot]++;
                        (frozenSlots.contains(slot) ? held : healthy).add(body);
                    }
                }
                // the defaults a user gets (command timeout 10 s, lease 30 s), but a full poll every 2 s, so that the
                // test does not depend on the wake-up subscription's node
                ContainerOptions options = new ContainerOptions("frozen", 4, Duration.ofSeconds(2),
                        Duration.ofSeconds(5), null);
                long commandTimeout = options.commandTimeout().toMillis();
                RmqListenerContainer started = ListenerContainers.concurrent(
                        rmq.consumer(TOPIC, ConsumerSettings.DEFAULT), wakeUps(rmq), String.class,
                        (String body, Delivery d) -> handledAt.putIfAbsent(body, System.currentTimeMillis()), options);
                container = started;
                started.start();
                for (String body : healthy) {
                    rmq.producer().sendRangeMerge(TOPIC, body, Duration.ofMillis(1500));
                }
                for (String body : held) {
                    rmq.producer().sendRangeMerge(TOPIC, body, Duration.ofMillis(1500));
                }
                Thread.sleep(200); // the wake-up announcements reach the container
                cluster.freezeMaster(0);
                frozen = true;
                long frozenAt = System.currentTimeMillis();

                // every healthy message is handled while the master is frozen, well before a pop sent to it times out
                await().atMost(Duration.ofMillis(1500 + commandTimeout - 2000)).pollInterval(Duration.ofMillis(50))
                        .until(() -> handledAt.keySet().containsAll(healthy));
                long healthyDoneAfter = healthy.stream().mapToLong(handledAt::get).max().orElseThrow() - frozenAt;
                assertThat(healthyDoneAfter).as("ms from the freeze to the last healthy message handled")
                        .isLessThan(1500 + commandTimeout - 2000);
                assertThat(held).as("messages of the frozen master's slots, handled while it was frozen")
                        .noneMatch(handledAt::containsKey);

                // read the clock before the thaw: the master answers the pops held for it at once, and a handler may
                // run before this thread gets back
                long thawedAt = System.currentTimeMillis();
                cluster.thawMaster(0);
                frozen = false;
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                        .until(() -> handledAt.keySet().containsAll(held));
                assertThat(held.stream().mapToLong(handledAt::get).min().orElseThrow())
                        .as("the frozen master's messages are handled after it thawed").isGreaterThanOrEqualTo(thawedAt);
                await().atMost(Duration.ofSeconds(30)).until(() -> started.outstanding() == 0
                        && rmq.admin().stats(TOPIC).pending() == 0);
                assertThat(started.stallsRepaired()).as("stalls the watchdog had to repair").isZero();
                assertThat(logs.messages().stream().filter(m -> m.contains("watchdog") || m.contains("stalled"))
                        .collect(Collectors.toList())).isEmpty();
            }
            finally {
                if (frozen) {
                    cluster.thawMaster(0);
                }
                if (container != null) {
                    container.stop();
                }
                rmq.close();
                client.shutdown();
            }
        }
    }
}
