package io.rmq.engine;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.rmq.core.TopicType;
import io.rmq.instances.InstanceSettings;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the instance registry costs an idle instance, counted with {@code INFO commandstats} on a standalone server
 * (which counts the commands scripts run too): one script per heartbeat, running five commands (TIME,
 * ZREMRANGEBYSCORE, ZADD, SET, HGETALL; the ZREMRANGEBYSCORE is its first write, which lets it run over
 * maxmemory). Its own server, so other tests' commands do not count.
 */
@ParameterizedClass
@EnumSource(value = RedisTopology.class, names = "STANDALONE")
class InstancesIdleCostTest extends EngineTestSupport {

    InstancesIdleCostTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void anIdleInstanceSendsOneScriptPerHeartbeat() throws Exception {
        rmq.defineTopic("idle-fleet", TopicType.FIXED_TIME, 4);
        Duration beat = Duration.ofMillis(500);
        rmq.instances().start(new InstanceSettings("idle", beat));
        Thread.sleep(1000);
        Map<String, Long> before = commandStats();
        // 10 beats: the bound below (10 + 2) still fails an instance that runs a second script per beat (20)
        long window = 5_000;
        Thread.sleep(window);
        Map<String, Long> after = commandStats();
        Map<String, Long> diff = new HashMap<>();
        after.forEach((cmd, calls) -> {
            long d = calls - before.getOrDefault(cmd, 0L);
            if (d > 0) {
                diff.put(cmd, d);
            }
        });
        diff.remove("info"); // ours: the reads of the figures and their connection's handshake
        diff.remove("hello");
        diff.remove("client");
        long scripts = diff.getOrDefault("evalsha", 0L);
        long all = diff.values().stream().mapToLong(Long::longValue).sum();
        System.out.printf("[instances-idle-cost] heartbeat %d ms, window %d ms: %s; scripts/s %.2f, commands/s %.2f"
                + " (scripts' commands included)%n", beat.toMillis(), window, diff, scripts * 1000.0 / window,
                all * 1000.0 / window);
        // 10 beats in 5 s; a loaded machine beats less, never more
        assertThat(scripts).isBetween(1L, window / beat.toMillis() + 2);
        assertThat(all).as("the script and its five commands per beat, nothing else").isLessThanOrEqualTo(scripts * 6);
        assertThat(diff).as("no ZREM of nothing: the beat's ZREMRANGEBYSCORE is its first write")
                .doesNotContainKey("zrem");
    }

    /**
     * Ten idle CONCURRENT listeners on ten topics cost Redis what one does: their engine lists them all with one
     * heartbeat (consumers_beat.lua, every 2.5 s at the default ownership timeout: 5 commands, the listing not read
     * again while it is unchanged), where each container beat for itself before (5 commands each). The default
     * {@code maxIdle} (30 s) puts no idle check in the windows.
     */
    @Test
    void tenIdleListenersCostWhatOneDoes() throws Exception {
        long one = idleCommands(1);
        long ten = idleCommands(10);
        System.out.printf("[listeners-idle-cost] over 5 s: 1 listener %d commands, 10 listeners %d%n", one, ten);
        // a window of 5 s holds 2 or 3 beats of 2.5 s: the bound allows that edge beat, not a beat per listener (a
        // heartbeat per listener was 5 commands each: 100 in 5 s)
        assertThat(ten).as("10 listeners vs 1 (%d)", one).isLessThanOrEqualTo(Math.max(one, 10) + 5);
        assertThat(ten).as("at most 5 commands/s").isLessThanOrEqualTo(25);
    }

    /**
     * Ten idle ORDERLY listeners on ten topics cost Redis what one does: their memberships (the lease of the slots they
     * hold) are renewed by the engine's one heartbeat (every third of the ownership timeout: 5 commands per 1.67 s),
     * where each container beat for itself before (5 commands a second each: 500 in 10 s). Each also lists itself in
     * its topic's own membership key for older engines (at its start, before the window here; then the engine's
     * listings are spread over its listeners, one a minute in all).
     */
    @Test
    void tenIdleOrderlyListenersCostWhatOneDoes() throws Exception {
        long one = idleCommands(1, true);
        long ten = idleCommands(10, true);
        System.out.printf("[orderly-idle-cost] over 5 s: 1 ORDERLY listener %d commands, 10 listeners %d%n", one, ten);
        // 3 beats of 5 commands in a window of 5 s, a fourth at its edge
        assertThat(ten).as("10 ORDERLY listeners vs 1 (%d)", one).isLessThanOrEqualTo(Math.max(one, 15) + 5);
        assertThat(ten).as("at most 5 commands/s").isLessThanOrEqualTo(25);
    }

    /**
     * The idle checks of ten listeners (one {@code EXISTS} of their empty slots every {@code maxIdle}, here 1 s) go to
     * the standalone server as one command: the containers check on the same grid of the clock and wait a little for
     * each other, where each sent its own before (10 a second here).
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void tenListenersShareTheirIdleChecks(boolean orderly) throws Exception {
        Duration maxIdle = Duration.ofSeconds(1);
        Map<String, Long> ten = idleCommandsByName(10, orderly, maxIdle, 5, false);
        long exists = ten.getOrDefault("exists", 0L);
        System.out.printf("[idle-checks] 10 %s listeners, max-idle 1 s, over 5 s: %s%n",
                orderly ? "ORDERLY" : "CONCURRENT", ten);
        // 5 or 6 grid points in the window; a check that misses its fold under load sends its own, so twice that
        // bounds a loaded machine, and still fails one check per listener (50)
        assertThat(exists).as("EXISTS of 10 idle listeners with a 1 s max-idle, over 5 s").isBetween(1L, 14L);
    }

    /**
     * An idle instance as an application runs one: the instance registry at its default heartbeat (5 s) and 1 or 10
     * listeners at their defaults, over a window of {@code -Dlisteners-idle-seconds} (5 s unless set; BENCHMARKS.md's
     * figure is over 60 s). Ten cost what one does: an ORDERLY listener's listing for older engines in its topic's own
     * key (one {@code members.lua} call, 5 commands) comes every minute times the engine's ORDERLY listeners (at most
     * 10), so the engine lists one a minute; within a window of a minute after their start, any may list once.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void anIdleInstanceWithTenListenersCostsWhatOneDoes(boolean orderly) throws Exception {
        long seconds = Long.getLong("listeners-idle-seconds", 5);
        rmq.instances().start(new InstanceSettings("idle-instance", Duration.ofSeconds(5)));
        Map<String, Long> one = idleCommandsByName(1, orderly, Duration.ofSeconds(30), seconds, true);
        Map<String, Long> ten = idleCommandsByName(10, orderly, Duration.ofSeconds(30), seconds, true);
        long oneAll = one.values().stream().mapToLong(Long::longValue).sum();
        long tenAll = ten.values().stream().mapToLong(Long::longValue).sum();
        System.out.printf("[instance-idle-cost] %s, registry on, over %d s: 1 listener %d commands (%.2f/s) %s;"
                + " 10 listeners %d (%.2f/s) %s%n", orderly ? "ORDERLY" : "CONCURRENT", seconds, oneAll,
                oneAll / (double) seconds, one, tenAll, tenAll / (double) seconds, ten);
        // one edge beat of the roster (5 commands) and of the registry (5) either way; the listings for older
        // engines: each of the 9 more ORDERLY listeners lists once in its first minute at most (5 commands each),
        // then the engine lists one a minute
        long presence = orderly ? 9 * 5 * (seconds / 60 + 1) : 0;
        assertThat(tenAll).as("10 listeners vs 1 (%d)", oneAll).isLessThanOrEqualTo(oneAll + 10 + presence);
    }

    private long idleCommands(int listeners) throws Exception {
        return idleCommands(listeners, false);
    }

    private long idleCommands(int listeners, boolean orderly) throws Exception {
        return idleCommandsByName(listeners, orderly, Duration.ofSeconds(30), 5, false).values().stream()
                .mapToLong(Long::longValue).sum();
    }

    /**
     * Commands Redis ran over {@code seconds} while {@code listeners} idle containers of 16 slots each ran, by name;
     * none of them reads the roster's listing (unchanged since the containers started).
     */
    private Map<String, Long> idleCommandsByName(int listeners, boolean orderly, Duration maxIdle, long seconds,
            boolean registry) throws Exception {
        java.util.List<io.rmq.container.ListenerContainer> containers = new java.util.ArrayList<>();
        for (int i = 0; i < listeners; i++) {
            String topic = "idle-listeners-" + listeners + "-" + orderly + "-" + maxIdle.toMillis() + "-" + i;
            rmq.defineTopic(topic, TopicType.FIXED_TIME, 16);
            io.rmq.container.ContainerOptions options = new io.rmq.container.ContainerOptions(topic, 1, maxIdle,
                    Duration.ofSeconds(30), null);
            io.rmq.container.ListenerContainer container = orderly
                    ? rmq.container(topic, FAST, String.class, (String body, io.rmq.consumer.Delivery d) -> { },
                            options.withMode(io.rmq.core.ConsumeMode.ORDERLY), rmq.slotCoordinator())
                    : rmq.container(topic, FAST, String.class, (String body, io.rmq.consumer.Delivery d) -> { },
                            options);
            container.start();
            containers.add(container);
        }
        try {
            if (orderly) {
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() ->
                        containers.stream().allMatch(c -> c.ownedSlots().size() == 16));
            }
            Thread.sleep(2000); // the start-up poll of every slot, the first beats
            Map<String, Long> before = commandStats();
            Thread.sleep(seconds * 1000);
            Map<String, Long> after = commandStats();
            Map<String, Long> byCommand = new java.util.TreeMap<>();
            for (Map.Entry<String, Long> entry : after.entrySet()) {
                long calls = entry.getValue() - before.getOrDefault(entry.getKey(), 0L);
                if (calls > 0 && !java.util.Set.of("info", "hello", "client").contains(entry.getKey())) {
                    byCommand.put(entry.getKey(), calls);
                }
            }
            // a listing for older engines (members.lua, once a minute) reads its topic's key with ZRANGE; the
            // registry's beat reads the cluster-wide pauses with HGETALL
            assertThat(byCommand).as("%d idle listeners over %d s", listeners, seconds)
                    .doesNotContainKey("zrangebyscore");
            if (!registry) {
                assertThat(byCommand).as("%d idle listeners over %d s", listeners, seconds).doesNotContainKey("hgetall");
            }
            if (seconds < 60 || !orderly) {
                assertThat(byCommand).as("%d idle listeners over %d s", listeners, seconds).doesNotContainKey("zrange");
            }
            return byCommand;
        }
        finally {
            containers.forEach(io.rmq.container.ListenerContainer::stop);
        }
    }

    private Map<String, Long> commandStats() {
        String info = raw(c -> c.info("commandstats"));
        Map<String, Long> out = new HashMap<>();
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring(8, line.indexOf(':'));
                String calls = line.substring(line.indexOf("calls=") + 6);
                out.put(name, Long.parseLong(calls.substring(0, calls.indexOf(','))));
            }
        }
        return out;
    }
}
