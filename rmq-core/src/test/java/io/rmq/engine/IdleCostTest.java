package io.rmq.engine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.codec.ByteArrayCodec;
import io.rmq.consumer.Delivery;
import io.rmq.container.ContainerOptions;
import io.rmq.container.internal.RmqListenerContainer;
import io.rmq.container.internal.ListenerContainers;
import io.rmq.core.internal.RmqKeys.SlotKeys;
import io.rmq.core.TopicType;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.wakeUps;

/**
 * What an idle listener costs Redis, counted with {@code MONITOR} (which shows the commands scripts run too), so the
 * figure does not depend on the machine's load; and that its periodic check still finds what no announcement told it
 * about. (That an announced message wakes an idle listener at once: {@code ContainerTest}.)
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class IdleCostTest extends EngineTestSupport {

    private static final int SLOTS = 16;

    /** How long the idle ORDERLY listener's commands are counted: 10 heartbeats (every 1 s). */
    private static final int WINDOW_SECONDS = 10;

    /**
     * How long the idle CONCURRENT listener's commands are counted, with a {@code maxIdle} of 2 s: 3+ idle checks and
     * 2+ heartbeats (every 2.5 s). The bound scales with the checks the window holds, so it still fails a check that
     * costs a command per slot on a standalone server, a script, or a busy poll.
     */
    private static final int IDLE_WINDOW_SECONDS = 6;

    IdleCostTest(RedisTopology topology) {
        super(topology);
    }

    /**
     * Every {@code maxIdle} an idle listener checks which slots hold anything with plain {@code EXISTS} and pops only
     * those: one command per check on a standalone server whose slots are empty, one per slot on a cluster, no
     * script. At the default {@code maxIdle} of 30 s that is 0.03 commands/s standalone and 0.53 on a cluster, for
     * 16 slots (a pop script per slot, as before, was 9 commands per slot: 4.8 commands/s). Besides, the engine's
     * heartbeat among the consumers (the shares of the slots), one for all its containers: one script every half of the
     * ownership timeout (default 5 s: 0.4 scripts/s, each {@code TIME}, {@code ZREMRANGEBYSCORE}, {@code ZADD} and
     * {@code ZSCORE}: the listing is read again only when its version changed).
     */
    @Test
    void anIdleListenerChecksItsSlotsWithPlainExistsOnlyAndStillFindsUnannouncedWork() throws Exception {
        Assumptions.assumeFalse(topology.springProperties().containsKey("spring.data.redis.password"),
                "MONITOR is read over a plain socket here");
        rmq.defineTopic("idle", TopicType.FIXED_TIME, SLOTS);
        Duration maxIdle = Duration.ofSeconds(2);
        Map<String, Integer> handled = new ConcurrentHashMap<>();
        RmqListenerContainer container = ListenerContainers.concurrent(rmq.consumer("idle", FAST), wakeUps(rmq),
                String.class, (String body, Delivery d) -> handled.put(body, d.attempt()),
                new ContainerOptions("idle-cost", 4, maxIdle, Duration.ofSeconds(5), null));
        container.start();
        try {
            Thread.sleep(1000); // the start-up poll of every slot
            List<String> seen = monitor(Duration.ofSeconds(IDLE_WINDOW_SECONDS), () -> { });
            List<String> all = seen.stream().filter(line -> line.contains(prefix + ":")).toList();
            List<String> beats = all.stream().filter(line -> line.contains("{rmq-consumers}")).toList();
            List<String> ours = all.stream().filter(line -> !line.contains("{rmq-consumers}")).toList();
            // the engine's heartbeat every 2.5 s (half the default ownership timeout), 4 commands on its keys (the
            // script, ZREMRANGEBYSCORE, ZADD, ZSCORE; the listing unchanged); a loaded machine beats less
            assertThat(beats).as("heartbeats of the idle listener over %d s: %s", IDLE_WINDOW_SECONDS, beats)
                    .hasSizeLessThanOrEqualTo((IDLE_WINDOW_SECONDS * 1000 / 2_500 + 1) * 4)
                    .noneMatch(line -> line.contains("\"HGETALL\"") || line.contains("\"ZRANGE\"")
                            || line.contains("\"ZRANGEBYSCORE\""))
                    .filteredOn(line -> line.contains("\"EVALSHA\"")).isNotEmpty();
            assertThat(ours).as("no script runs while the listener is idle").noneMatch(
                    line -> line.contains("\"EVALSHA\"") || line.contains("\"EVAL\"") || line.contains(" lua]"));
            assertThat(ours).as("the idle check ran").anyMatch(line -> line.contains("\"EXISTS\""));
            long checks = IDLE_WINDOW_SECONDS / maxIdle.toSeconds() + 1; // a loaded machine makes fewer, never more
            long perCheck = topology == RedisTopology.STANDALONE ? 1 : SLOTS;
            assertThat(ours).as("commands of the idle listener over %d s: %s", IDLE_WINDOW_SECONDS, ours)
                    .hasSizeLessThanOrEqualTo((int) (checks * perCheck));
            assertThat(container.stallsRepaired()).isZero();

            // what no announcement tells about is found by the next check: a message written without a PUBLISH (a
            // writer that does not announce), and the expired lease of a consumer that died
            SlotKeys[] slots = redis(rmq).keys().slots(rmq.topics().get("idle"));
            long now = System.currentTimeMillis();
            zadd(slots[3].store(), now - 10, "unannounced");
            zadd(slots[5].prepare(), now - 1000, "orphaned");
            await().atMost(Duration.ofSeconds(60)).until(() -> handled.containsKey("unannounced")
                    && handled.containsKey("orphaned"));
            assertThat(handled).containsEntry("unannounced", 1).containsEntry("orphaned", 2);
            assertThat(container.stallsRepaired()).isZero();
        }
        finally {
            container.stop();
        }
    }

    /**
     * An idle ORDERLY listener at the default ownership timeout (5 s) that owns all 16 slots of its topic costs at most
     * 5 commands/s: its engine's heartbeat (every third of the timeout), which is also the lease of every slot it
     * holds; no per-slot renewal. (Counted with MONITOR: the scripts' calls, and the commands they run.)
     */
    @Test
    void anIdleOrderlyListenerCostsAtMostFiveCommandsPerSecond() throws Exception {
        Assumptions.assumeFalse(topology.springProperties().containsKey("spring.data.redis.password"),
                "MONITOR is read over a plain socket here");
        rmq.defineTopic("oidle", TopicType.FIXED_TIME, SLOTS);
        io.rmq.container.ListenerContainer container = rmq.container("oidle", FAST, String.class,
                (String body, Delivery d) -> { }, ContainerOptions.of("oidle", 4)
                        .withMode(io.rmq.core.ConsumeMode.ORDERLY), rmq.slotCoordinator());
        container.start();
        try {
            io.rmq.container.internal.OrderlyListenerContainer orderly = (io.rmq.container.internal.OrderlyListenerContainer) container;
            await().atMost(Duration.ofSeconds(30)).until(() -> orderly.ownedSlots().size() == SLOTS);
            Thread.sleep(1000); // the first step of every slot
            int seconds = WINDOW_SECONDS;
            List<String> seen = monitor(Duration.ofSeconds(seconds), () -> { });
            // the listener's commands: those on its keys, and those its scripts run (TIME has no key)
            List<String> ours = seen.stream().filter(line -> line.contains(prefix + ":") || line.contains(" lua]"))
                    .toList();
            Map<String, Long> byCommand = new java.util.TreeMap<>();
            for (String line : ours) {
                String[] words = line.split("\"", 3);
                byCommand.merge(words.length > 1 ? words[1].toUpperCase() : line, 1L, Long::sum);
            }
            org.slf4j.LoggerFactory.getLogger(IdleCostTest.class).info("idle ORDERLY listener ({}), {} s: {}"
                    + " commands ({}/s): {}", topology, seconds, ours.size(), ours.size() / (double) seconds,
                    byCommand);
            assertThat(ours).as("the heartbeat ran").anyMatch(line -> line.contains("{rmq-consumers}"));
            // the engine's heartbeat (consumers_beat.lua, 5 commands, no read of the unchanged listing) every third of
            // the ownership timeout (5 s): 3.0 commands/s, where the ORDERLY listener's own beat was 5 (5 commands a
            // second). The bound is the old 5 commands/s with the beat at the window's edge (room for the idle check's
            // EXISTS per slot on a cluster): a beat per pass again (6 a second: 60-66) fails it
            assertThat(ours).as("commands of the idle ORDERLY listener over %d s: %s", seconds, byCommand)
                    .hasSizeLessThanOrEqualTo(5 * (seconds + 1))
                    .noneMatch(line -> line.contains("\"HGETALL\"") || line.contains("\"ZRANGE\"")
                            || line.contains("\"ZRANGEBYSCORE\""));
            assertThat(orderly.ownedSlots()).hasSize(SLOTS);
            assertThat(orderly.stallsRepaired()).isZero();
        }
        finally {
            container.stop();
        }
    }

    /**
     * An idle ORDERLY listener checks its idle slots every {@code maxIdle} with plain {@code EXISTS} (one command on a
     * standalone server whose slots are empty, one per slot on a cluster) and runs no step script on them; a message
     * that no announcement told about (written without a PUBLISH) is found by the next check and handled.
     */
    @Test
    void anIdleOrderlyListenerChecksItsSlotsWithPlainExistsAndStillFindsUnannouncedWork() throws Exception {
        Assumptions.assumeFalse(topology.springProperties().containsKey("spring.data.redis.password"),
                "MONITOR is read over a plain socket here");
        rmq.defineTopic("oquiet", TopicType.FIXED_TIME, SLOTS);
        Duration maxIdle = Duration.ofSeconds(2);
        java.util.Set<String> handled = ConcurrentHashMap.newKeySet();
        io.rmq.container.ListenerContainer container = rmq.container("oquiet", FAST, String.class,
                (String body, Delivery d) -> handled.add(body), new ContainerOptions("oquiet", 4, maxIdle,
                        Duration.ofSeconds(5), null).withMode(io.rmq.core.ConsumeMode.ORDERLY),
                rmq.slotCoordinator());
        container.start();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> container.ownedSlots().size() == SLOTS);
            Thread.sleep(1000); // the first step of every slot
            List<String> seen = monitor(Duration.ofSeconds(IDLE_WINDOW_SECONDS), () -> { });
            List<String> ours = seen.stream().filter(line -> line.contains(prefix + ":")
                    && !line.contains("{rmq-consumers}") && !line.contains(":members")).toList();
            assertThat(ours).as("no step script while the slots are idle: %s", ours).noneMatch(
                    line -> line.contains("\"EVALSHA\"") || line.contains("\"EVAL\"") || line.contains(" lua]"));
            assertThat(ours).as("the idle check ran").anyMatch(line -> line.contains("\"EXISTS\""));
            long checks = IDLE_WINDOW_SECONDS / maxIdle.toSeconds() + 1; // a loaded machine makes fewer, never more
            long perCheck = topology == RedisTopology.STANDALONE ? 1 : SLOTS;
            assertThat(ours).as("commands of the idle check over %d s: %s", IDLE_WINDOW_SECONDS, ours)
                    .hasSizeLessThanOrEqualTo((int) (checks * perCheck));

            SlotKeys[] slots = redis(rmq).keys().slots(rmq.topics().get("oquiet"));
            zadd(slots[3].store(), System.currentTimeMillis() - 10, "unannounced");
            await().atMost(Duration.ofSeconds(60)).until(() -> handled.contains("unannounced"));
            assertThat(container.stallsRepaired()).isZero();
        }
        finally {
            container.stop();
        }
    }

    /**
     * A single send without a trace context is one command, a call of the small send_one.lua (not send.lua): its
     * {@code ZADD} (NX for RANGE_MERGE) and, when the message is the slot's first, the {@code PUBLISH} that wakes
     * sleeping listeners run inside it, and the listeners handle the message long before their {@code maxIdle} of 5
     * minutes.
     */
    @Test
    void aSingleSendIsOneSmallScriptAndWakesAnIdleListener() throws Exception {
        Assumptions.assumeFalse(topology.springProperties().containsKey("spring.data.redis.password"),
                "MONITOR is read over a plain socket here");
        for (TopicType type : TopicType.values()) {
            String topic = "one-" + type.name().toLowerCase().replace('_', '-');
            rmq.defineTopic(topic, type, 1);
            java.util.concurrent.BlockingQueue<String> handled = new java.util.concurrent.LinkedBlockingQueue<>();
            RmqListenerContainer container = ListenerContainers.concurrent(rmq.consumer(topic, FAST), wakeUps(rmq),
                    String.class, (String body, Delivery d) -> handled.add(body),
                    new ContainerOptions("one-" + type, 1, Duration.ofMinutes(5), Duration.ofSeconds(5), null));
            container.start();
            try {
                send(topic, type, "first");
                assertThat(handled.poll(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("first");
                List<String> seen = monitor(Duration.ofSeconds(1), () -> send(topic, type, "second"));
                List<String> ours = seen.stream().filter(line -> line.contains(prefix + ":")).toList();
                // what the client sent for the send (a command a script runs shows as "[0 lua]"; the woken
                // listener's pop and ack are scripts of their own, which name the slot's prepare key)
                List<String> sent = ours.stream().filter(line -> line.contains("\"second\"") && !line.contains(" lua]")
                        && !line.contains(":prepare\"")).toList();
                assertThat(sent).as("%s: %s", type, ours).singleElement().satisfies(line -> assertThat(line)
                        .contains("\"EVALSHA\"").doesNotContain("\"range\"").doesNotContain("\"score\""));
                assertThat(ours).as("%s: %s", type, ours)
                        .anyMatch(line -> line.contains("\"ZADD\"") && line.contains("\"second\"")
                                && line.contains(" lua]"))
                        .anyMatch(line -> line.contains("\"PUBLISH\"") && line.contains(" lua]"));
                assertThat(handled.poll(30, java.util.concurrent.TimeUnit.SECONDS)).as("woken: %s", type)
                        .isEqualTo("second");
            }
            finally {
                container.stop();
            }
        }
    }

    /**
     * A lone send into a slot whose previous lone send found messages ahead of it (a backlog) is the native
     * {@code ZADD} and its wake-up check written together, no script (cheaper for Redis when nothing is to be
     * announced); when that check finds the message first it is announced by a plain {@code PUBLISH}, and the slot's
     * next lone send is the script again.
     */
    @Test
    void aLoneSendIntoABackloggedSlotIsTwoNativeCommandsAndTheScriptAgainAfterItAnnounced() throws Exception {
        Assumptions.assumeFalse(topology.springProperties().containsKey("spring.data.redis.password"),
                "MONITOR is read over a plain socket here");
        rmq.defineTopic("backlog", TopicType.FIXED_TIME, 1);
        long now = System.currentTimeMillis();
        java.util.function.BiConsumer<String, Long> at = (body, offset) -> rmq.producer().sendFixedTime("backlog",
                body, java.time.Instant.ofEpochMilli(now + offset));
        at.accept("a", 3_600_000L); // the slot's first: the script, announced
        at.accept("b", 7_200_000L); // the script, not first: the slot is backlogged

        List<String> later = sentFor("c", monitor(Duration.ofSeconds(1), () -> at.accept("c", 10_800_000L)));
        assertThat(later).as("a later message into a backlog: %s", later)
                .anyMatch(line -> line.contains("\"ZADD\"")).anyMatch(line -> line.contains("\"ZRANK\""))
                .noneMatch(line -> line.contains("\"EVALSHA\"") || line.contains("\"PUBLISH\""));

        List<String> seen = monitor(Duration.ofSeconds(1), () -> at.accept("d", 1_800_000L));
        assertThat(sentFor("d", seen)).as("a new first message: %s", seen)
                .anyMatch(line -> line.contains("\"ZADD\"")).anyMatch(line -> line.contains("\"ZRANK\""))
                .noneMatch(line -> line.contains("\"EVALSHA\""));
        assertThat(seen).as("announced by a plain PUBLISH with its due time: %s", seen).anyMatch(line -> line
                .contains("\"PUBLISH\"") && !line.contains(" lua]") && line.contains("|" + (now + 1_800_000L)));

        List<String> after = sentFor("e", monitor(Duration.ofSeconds(1), () -> at.accept("e", 14_400_000L)));
        assertThat(after).as("after an announcement, the script again: %s", after).singleElement()
                .satisfies(line -> assertThat(line).contains("\"EVALSHA\""));
    }

    /** The commands the client sent for {@code body} (not those a script ran). */
    private List<String> sentFor(String body, List<String> seen) {
        return seen.stream().filter(line -> line.contains(prefix + ":") && line.contains("\"" + body + "\"")
                && !line.contains(" lua]")).toList();
    }

    private void send(String topic, TopicType type, String body) {
        switch (type) {
            case RANGE_MERGE -> rmq.producer().sendRangeMerge(topic, body, Duration.ofMillis(1));
            case PRIORITY -> rmq.producer().sendPriority(topic, body, 5);
            case FIXED_TIME -> rmq.producer().sendFixedTime(topic, body, java.time.Instant.now());
        }
    }

    private void zadd(byte[] key, long score, String member) {
        byte[] value = member.getBytes(StandardCharsets.UTF_8);
        if (client instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
            try (var connection = cluster.connect(ByteArrayCodec.INSTANCE)) {
                connection.sync().zadd(key, score, value);
            }
            return;
        }
        try (var connection = ((io.lettuce.core.RedisClient) client).connect(ByteArrayCodec.INSTANCE)) {
            connection.sync().zadd(key, score, value);
        }
    }

    /**
     * Every command the server(s) ran during {@code window}, as {@code MONITOR} prints them, but those on the history's
     * keys (HistoryTest measures those).
     */
    private List<String> monitor(Duration window, Runnable during) throws Exception {
        List<RedisEndpoint> nodes = topology == RedisTopology.STANDALONE ? List.of(TestRedisServers.standalone())
                : TestRedisServers.clusterNodes();
        List<String> lines = new CopyOnWriteArrayList<>();
        List<Socket> sockets = new ArrayList<>();
        List<Thread> readers = new ArrayList<>();
        try {
            for (RedisEndpoint node : nodes) {
                Socket socket = new Socket(node.host(), node.port());
                sockets.add(socket);
                OutputStream out = socket.getOutputStream();
                out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                        StandardCharsets.UTF_8));
                assertThat(in.readLine()).isEqualTo("+OK");
                Thread reader = new Thread(() -> {
                    try {
                        for (String line; (line = in.readLine()) != null; ) {
                            lines.add(line);
                        }
                    }
                    catch (IOException closed) {
                        // the window ended
                    }
                }, "monitor-" + node.port());
                reader.setDaemon(true);
                reader.start();
                readers.add(reader);
            }
            during.run();
            Thread.sleep(window.toMillis());
        }
        finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
        for (Thread reader : readers) {
            reader.join(5000);
        }
        // the engine's history write (every 10 s, after something was counted) is not what these tests measure
        lines.removeIf(line -> line.contains("{rmq-history}"));
        return List.copyOf(lines);
    }
}
