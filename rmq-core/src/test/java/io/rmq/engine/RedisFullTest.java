package io.rmq.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.rmq.admin.MessageRef;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.PollResult;
import io.rmq.consumer.RmqConsumer;
import io.rmq.consumer.internal.DefaultRmqConsumer;
import io.rmq.container.ContainerOptions;
import io.rmq.container.ListenerContainer;
import io.rmq.core.ConsumeMode;
import io.rmq.core.RmqRedisFullException;
import io.rmq.core.TopicType;
import io.rmq.instances.InstanceSettings;
import io.rmq.producer.OutgoingMessage;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisTopology;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rmq.internal.RmqInternals.redis;
import static io.rmq.internal.RmqInternals.redisAdmin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/**
 * A Redis over {@code maxmemory} (policy noeviction): everything that does not grow memory still runs, so consumers,
 * coordination and operators drain it, and sends fail at once with {@link RmqRedisFullException}, storing nothing.
 * "Full" is {@code maxmemory 1} (bytes) on a master: every write that would grow memory is refused there, restored
 * after each test.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class RedisFullTest extends EngineTestSupport {

    private static final Instant PAST = Instant.now().minusSeconds(60);

    /** node id (standalone: "") -> { maxmemory, maxmemory-policy } before the test made it full. */
    private final Map<String, String[]> saved = new LinkedHashMap<>();

    RedisFullTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void everyScriptThatDoesNotGrowMemoryRunsOverMaxmemory() throws Exception {
        rmq.defineTopic("full", TopicType.FIXED_TIME, 1);
        rmq.defineTopic("ord", TopicType.FIXED_TIME, 2); // no consume mode yet: the ORDERLY container sets it, full
        for (int i = 0; i < 8; i++) {
            rmq.producer().send(OutgoingMessage.fixedTime("full", "m" + i, PAST));
        }
        rmq.producer().send(OutgoingMessage.fixedTime("full", "payload", PAST).withId("id-1").withHeader("h", "v"));
        for (int i = 0; i < 6; i++) {
            rmq.producer().send(OutgoingMessage.fixedTime("ord", "o" + i, PAST.plusMillis(i)).withGroup("g" + i % 2));
        }
        fillEveryMaster();

        DefaultRmqConsumer consumer = (DefaultRmqConsumer) rmq.consumer("full", FAST);
        List<Delivery> taken = consumer.poll().deliveries(); // pop.lua
        assertThat(taken).hasSize(9);
        assertThat(consumer.extend(taken.get(0))).isTrue(); // extend.lua
        assertThat(consumer.ack(taken.get(0))).isTrue(); // ack.lua
        consumer.nack(taken.get(1), "retry me"); // nack.lua: retried
        consumer.deadLetter(taken.get(2), "poison"); // nack.lua: dead
        assertThat(consumer.release(List.of(taken.get(3)))).isEqualTo(1); // release.lua
        assertThat(rmq.admin().cancel(MessageRef.body("full", taken.get(4).bodyAsString())).inFlight())
                .isTrue(); // cancel.lua: marked
        consumer.nack(taken.get(4), "cancelled while in flight"); // dropped
        assertThat(consumer.ackAll(taken.subList(5, 9))).isEqualTo(4);

        RmqConsumer shortLease = rmq.consumer("full", FAST.withLease(Duration.ofMillis(100)));
        await().atMost(10, TimeUnit.SECONDS).until(() -> !shortLease.poll().deliveries().isEmpty());
        await().atMost(10, TimeUnit.SECONDS).until(() -> shortLease.sweep()[0] > 0); // sweep.lua: lease expired

        assertThat(rmq.admin().reschedule(MessageRef.body("full", taken.get(3).bodyAsString()), PAST))
                .isNotNull(); // reschedule.lua
        assertThat(rmq.admin().requeueAllDead("full")).isEqualTo(1); // dead_requeue.lua
        PollResult again = consumer.poll();
        for (Delivery d : again.deliveries()) {
            consumer.deadLetter(d, "dead again");
        }
        assertThat(rmq.admin().purgeDead("full")).isPositive(); // dead_delete.lua
        assertThat(rmq.admin().purge("full")).isGreaterThanOrEqualTo(0); // purge.lua

        assertThat(redis(rmq).ratePermits("full", 100.0, 10, 1, 0).join()[0]).isEqualTo(1); // rate.lua
        redisAdmin(rmq).history().flush(List.of("full"), List.of(new long[] {1, 1, 0, 0}), null).join(); // history
        java.util.concurrent.CompletableFuture<List<String>> shared = new java.util.concurrent.CompletableFuture<>();
        redis(rmq).roster().join("full", "share-1", 10_000, (live, error) -> {
            if (error != null) {
                shared.completeExceptionally(error);
            }
            else {
                shared.complete(live);
            }
        });
        assertThat(shared.get(10, TimeUnit.SECONDS)).contains("share-1"); // consumers_beat.lua
        redis(rmq).roster().leave("share-1");

        rmq.instances().start(new InstanceSettings("full-app", Duration.ofMillis(200))); // instance_beat.lua
        await().atMost(10, TimeUnit.SECONDS).until(() -> rmq.instances().list().stream()
                .anyMatch(i -> i.id().equals(rmq.instances().id())));

        // ORDERLY: define_topic (mode), members, own (claim), orderly_next, own (release), orderly_end
        Set<String> ordered = ConcurrentHashMap.newKeySet();
        ListenerContainer orderly = rmq.container("ord", FAST, String.class,
                (String body, Delivery d) -> ordered.add(body),
                ContainerOptions.of("full-ord", 2).withMode(ConsumeMode.ORDERLY));
        orderly.start();
        try {
            await().atMost(30, TimeUnit.SECONDS).until(() -> ordered.size() == 6);
        }
        finally {
            orderly.stop();
        }
        assertThat(rmq.admin().endOrdering("ord")).isGreaterThanOrEqualTo(0);

        assertThat(catchThrowableOfType(RmqRedisFullException.class,
                () -> rmq.producer().sendFixedTime("full", "new", PAST))).isNotNull();
    }

    @Test
    void aSendOverMaxmemoryFailsAtOnceSayingRedisIsFullAndStoresNothing() {
        rmq.defineTopic("sends", TopicType.FIXED_TIME, 4);
        rmq.defineTopic("merge", TopicType.RANGE_MERGE, 4);
        rmq.producer().sendFixedTime("sends", "before", PAST);
        fillEveryMaster();
        long started = System.nanoTime();

        RmqRedisFullException single = catchThrowableOfType(RmqRedisFullException.class,
                () -> rmq.producer().sendFixedTime("sends", "lone", PAST));
        assertThat(single.getMessage()).startsWith("Redis is full: sending to topic 'sends' failed at once, the"
                + " message was NOT stored.").contains("of maxmemory 1B (maxmemory-policy noeviction)");
        assertThat(single.maxMemory()).isEqualTo("1B");
        assertThat(single.policy()).isEqualTo("noeviction");
        assertThat(single.usedMemory()).endsWith("M");
        assertThat(single.storedIndexes()).isEmpty();

        assertThat(catchThrowableOfType(RmqRedisFullException.class, () -> rmq.producer().send(
                OutgoingMessage.fixedTime("sends", "with id", PAST).withId("x-1").withHeader("h", "v"))))
                .hasMessageContaining("the message was NOT stored"); // send.lua
        assertThat(catchThrowableOfType(RmqRedisFullException.class,
                () -> rmq.producer().sendRangeMerge("merge", "merging", Duration.ofSeconds(1)))).isNotNull();
        Throwable async = catchThrowableOfType(CompletionException.class, () -> rmq.producer()
                .sendAsync(OutgoingMessage.fixedTime("sends", "async", PAST)).join());
        assertThat(async.getCause()).isInstanceOf(RmqRedisFullException.class);

        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            batch.add(OutgoingMessage.fixedTime("sends", "b" + i, PAST));
            batch.add(OutgoingMessage.fixedTime("sends", "e" + i, PAST).withId("e" + i)); // envelopes: send.lua
        }
        RmqRedisFullException batchFull = catchThrowableOfType(RmqRedisFullException.class,
                () -> rmq.producer().sendBatch(batch));
        assertThat(batchFull.getMessage()).contains("a batch of 100 messages failed at once, none of its 100"
                + " messages was stored");
        assertThat(batchFull.storedIndexes()).isEmpty();
        List<OutgoingMessage> ids = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            ids.add(OutgoingMessage.fixedTime("sends", "i" + i, PAST).withId("i" + i)); // standalone: MULTI, HSET, ZADD
        }
        RmqRedisFullException idsFull = catchThrowableOfType(RmqRedisFullException.class,
                () -> rmq.producer().sendBatch(ids));
        assertThat(idsFull.getMessage()).contains("a batch of 50 messages failed at once, none of its 50 messages"
                + " was stored");
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started)).as("failed at once").isLessThan(20);

        restoreEveryMaster();
        assertThat(rmq.admin().stats("sends").waiting()).as("only the message sent before").isEqualTo(1);
        assertThat(rmq.admin().stats("merge").waiting()).isZero();
        assertThat(rmq.producer().sendFixedTime("sends", "after", PAST).merged()).isFalse();
    }

    @Test
    void aContainerDrainsAFullRedisHandlingEachMessageOnce() {
        rmq.defineTopic("drain", TopicType.FIXED_TIME, 8);
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            batch.add(OutgoingMessage.fixedTime("drain", "d" + i, PAST.plusMillis(i)));
        }
        rmq.producer().sendBatch(batch);
        fillEveryMaster();
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
        ListenerContainer container = rmq.container("drain", FAST, String.class,
                (String body, Delivery d) -> handled.computeIfAbsent(body, b -> new AtomicInteger()).incrementAndGet(),
                ContainerOptions.of("drainer", 4));
        container.start();
        try {
            await().atMost(60, TimeUnit.SECONDS).until(() -> handled.size() == 300
                    && rmq.admin().stats("drain").inFlight() == 0);
        }
        finally {
            container.stop();
        }
        assertThat(handled.values()).allMatch(count -> count.get() == 1);
        assertThat(rmq.admin().stats("drain").waiting()).isZero();
        assertThat(catchThrowableOfType(RmqRedisFullException.class,
                () -> rmq.producer().sendFixedTime("drain", "still full", PAST))).isNotNull();
        restoreEveryMaster();
        assertThat(rmq.producer().sendFixedTime("drain", "room again", PAST).merged()).isFalse();
    }

    @Test
    void aBatchRefusedPartWaySaysWhichOfItsMessagesWereStored() {
        rmq.defineTopic("part", TopicType.FIXED_TIME, 16);
        DefaultRmqConsumer consumer = (DefaultRmqConsumer) rmq.consumer("part", FAST);
        // standalone: the one server is full; a cluster: only the master that serves slot 0 of the topic
        String fullNode = consumer.nodeOf(0);
        fill(node -> fullNode == null || fullNode.equals(node));
        List<OutgoingMessage> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            batch.add(OutgoingMessage.fixedTime("part", "p" + i, PAST));
        }
        RmqRedisFullException full = catchThrowableOfType(RmqRedisFullException.class,
                () -> rmq.producer().sendBatch(batch));
        restoreEveryMaster();

        Set<Integer> stored = new HashSet<>(full.storedIndexes());
        for (int i = 0; i < batch.size(); i++) {
            assertThat(rmq.admin().contains(MessageRef.body("part", "p" + i)))
                    .as("message %d: %s", i, full.getMessage())
                    .isEqualTo(stored.contains(i));
        }
        if (topology == RedisTopology.STANDALONE) {
            assertThat(stored).isEmpty();
            assertThat(full.getMessage()).contains("none of its 200 messages was stored");
        }
        else {
            assertThat(stored).as("the other masters' slots took theirs").isNotEmpty().hasSizeLessThan(200);
            assertThat(full.getMessage()).contains(stored.size() + " of its 200 messages were stored (positions ")
                    .contains("the other " + (200 - stored.size()) + " were NOT stored");
            assertThat(full.node()).isNotEqualTo("standalone");
        }
    }

    @Test
    void startUpWarnsOfEachMasterWhosePolicyCanEvictRmqKeysOrThatIsFull() {
        int masters = topology == RedisTopology.STANDALONE ? 1 : 3;
        configure(node -> true, "0", "allkeys-lru");
        try (LogCapture log = LogCapture.of("io.rmq.redis.internal.RedisFull").expecting("maxmemory-policy")) {
            newEngine();
            assertThat(log.warnings()).hasSize(masters).allMatch(line -> line.contains("has maxmemory-policy"
                    + " allkeys-lru: when it reaches maxmemory it may evict any key, RMQ's included: waiting, in-flight"
                    + " and dead messages would be lost") && line.contains("RMQ needs maxmemory-policy noeviction"));
        }
        configure(node -> true, "0", "volatile-ttl");
        try (LogCapture log = LogCapture.of("io.rmq.redis.internal.RedisFull").expecting("maxmemory-policy")) {
            newEngine();
            assertThat(log.warnings()).hasSize(masters).allMatch(line -> line.contains("maxmemory-policy volatile-ttl:"
                    + " when it reaches maxmemory it may evict the keys RMQ gives a TTL: lease sequences"));
        }
        configure(node -> true, "0", "noeviction");
        try (LogCapture log = LogCapture.of("io.rmq.redis.internal.RedisFull").expecting("maxmemory-policy")) {
            newEngine();
            assertThat(log.warnings()).isEmpty();
        }
        fillEveryMaster();
        try (LogCapture log = LogCapture.of("io.rmq.redis.internal.RedisFull").expecting("is full")) {
            newEngine();
            assertThat(log.warnings()).hasSize(masters).allMatch(line -> line.contains(" of 1B, maxmemory-policy"
                    + " noeviction): sends to its slots fail with RmqRedisFullException"));
        }
    }

    private void fillEveryMaster() {
        fill(node -> true);
    }

    /** maxmemory 1 (bytes), policy noeviction, on the masters {@code which} accepts (by node id; standalone null). */
    private void fill(java.util.function.Predicate<String> which) {
        configure(which, "1", "noeviction");
    }

    /** Sets maxmemory and its policy on the masters {@code which} accepts; the first values are restored after. */
    private void configure(java.util.function.Predicate<String> which, String maxmemory, String policy) {
        forEachMaster((node, commands) -> {
            if (which.test(node)) {
                saved.putIfAbsent(node == null ? "" : node, new String[] {
                        commands.configGet("maxmemory").get("maxmemory"),
                        commands.configGet("maxmemory-policy").get("maxmemory-policy")});
                commands.configSet("maxmemory-policy", policy);
                commands.configSet("maxmemory", maxmemory);
            }
        });
    }

    @AfterEach
    void restoreEveryMaster() {
        forEachMaster((node, commands) -> {
            String[] before = saved.remove(node == null ? "" : node);
            if (before != null) {
                commands.configSet("maxmemory", before[0]);
                commands.configSet("maxmemory-policy", before[1]);
            }
        });
    }

    private void forEachMaster(java.util.function.BiConsumer<String, RedisClusterCommands<String, String>> action) {
        if (client instanceof RedisClusterClient cluster) {
            try (var connection = cluster.connect()) {
                for (RedisClusterNode node : cluster.getPartitions()) {
                    if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                        action.accept(node.getNodeId(), connection.getConnection(node.getNodeId()).sync());
                    }
                }
            }
        }
        else {
            try (var connection = ((RedisClient) client).connect()) {
                action.accept(null, connection.sync());
            }
        }
    }
}
