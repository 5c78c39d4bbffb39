package io.rmq.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.ConsumerSettings;
import io.rmq.core.BackoffPolicy;
import io.rmq.core.RetryPolicy;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import io.rmq.test.RedisServersExtension;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the engine tests: each concrete class runs once against a standalone Redis and once against a 3-master
 * Redis Cluster (annotate it with {@code @ParameterizedClass @EnumSource(RedisTopology.class)}). Every test gets its
 * own key prefix, so tests never see each other's keys and need no FLUSHALL.
 */
@ExtendWith(RedisServersExtension.class)
abstract class EngineTestSupport {

    /** Fast settings for tests: short lease, small backoff. */
    static final ConsumerSettings FAST = new ConsumerSettings(50, Duration.ofSeconds(5),
            new RetryPolicy(3, BackoffPolicy.fixed(Duration.ofMillis(50))));

    final RedisTopology topology;
    /** RMQ's own client, as the Spring Boot starter builds it by default; {@link #client} is its Lettuce client. */
    RmqRedisClient rmqClient;
    AbstractRedisClient client;
    Rmq rmq;
    String prefix;

    EngineTestSupport(RedisTopology topology) {
        this.topology = topology;
    }

    @BeforeEach
    void openEngine() {
        rmqClient = switch (topology) {
            case STANDALONE -> RmqRedisClient.standalone(topology.uris().get(0), null, TestRedisServers.resources(),
                    RedisClientSettings.DEFAULT);
            case CLUSTER -> RmqRedisClient.cluster(topology.uris(), null, TestRedisServers.resources(),
                    RedisClientSettings.DEFAULT);
        };
        client = rmqClient.client();
        prefix = "t-" + UUID.randomUUID().toString().substring(0, 8);
        rmq = Rmq.create(client, RmqOptions.DEFAULT.withKeyPrefix(prefix));
    }

    /** One Redis command on a connection of its own (cluster or standalone), as a tool or an operator would send it. */
    <R> R raw(java.util.function.Function<io.lettuce.core.cluster.api.sync.RedisClusterCommands<byte[], byte[]>, R>
            command) {
        if (client instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
            try (var connection = cluster.connect(io.lettuce.core.codec.ByteArrayCodec.INSTANCE)) {
                return command.apply(connection.sync());
            }
        }
        try (var connection = ((io.lettuce.core.RedisClient) client)
                .connect(io.lettuce.core.codec.ByteArrayCodec.INSTANCE)) {
            return command.apply(connection.sync());
        }
    }

    /** Redis's clock now (TIME; on a cluster, of whichever node the connection asks: the test servers share a host). */
    java.time.Instant redisNow() {
        List<byte[]> time = raw(c -> c.time());
        long seconds = Long.parseLong(new String(time.get(0), java.nio.charset.StandardCharsets.US_ASCII));
        long micros = Long.parseLong(new String(time.get(1), java.nio.charset.StandardCharsets.US_ASCII));
        return java.time.Instant.ofEpochSecond(seconds, micros * 1000);
    }

    private final List<Rmq> engines = new ArrayList<>();

    /** Another engine (another "process") on the same Redis and key prefix, with the topics defined so far. */
    Rmq newEngine() {
        return newEngine(java.util.function.UnaryOperator.identity());
    }

    /** {@link #newEngine()} with options of its own ({@code more} of the test's key prefix). */
    Rmq newEngine(java.util.function.UnaryOperator<RmqOptions> more) {
        Rmq engine = Rmq.create(client, more.apply(RmqOptions.DEFAULT.withKeyPrefix(prefix)));
        engines.add(engine);
        if (rmq != null) {
            rmq.topics().all().values().forEach(engine::defineTopic);
        }
        return engine;
    }

    @AfterEach
    void closeEngine() {
        engines.forEach(Rmq::close);
        if (rmq != null) {
            rmq.close();
        }
        if (rmqClient != null) {
            rmqClient.close();
        }
    }

    /** Calls per command, summed over every master, from INFO commandstats. */
    Map<String, Long> commandCalls() {
        List<String> infos = new ArrayList<>();
        if (client instanceof io.lettuce.core.cluster.RedisClusterClient cluster) {
            try (StatefulRedisClusterConnection<String, String> connection = cluster.connect()) {
                for (RedisClusterNode node : cluster.getPartitions()) {
                    if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                        infos.add(connection.getConnection(node.getNodeId()).sync().info("commandstats"));
                    }
                }
            }
        }
        else {
            try (StatefulRedisConnection<String, String> connection = ((io.lettuce.core.RedisClient) client).connect()) {
                infos.add(connection.sync().info("commandstats"));
            }
        }
        Map<String, Long> calls = new TreeMap<>();
        for (String info : infos) {
            for (String line : info.split("\r?\n")) {
                if (line.startsWith("cmdstat_")) {
                    String command = line.substring(8, line.indexOf(':'));
                    String value = line.substring(line.indexOf("calls=") + 6);
                    calls.merge(command, Long.parseLong(value.substring(0, value.indexOf(','))), Long::sum);
                }
            }
        }
        return calls;
    }
}
