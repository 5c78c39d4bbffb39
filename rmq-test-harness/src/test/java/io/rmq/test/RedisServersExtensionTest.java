package io.rmq.test;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(RedisServersExtension.class)
class RedisServersExtensionTest {

    private static List<String> taggedKeys() {
        List<String> keys = new ArrayList<>();
        for (char c = 'a'; c <= 'z'; c++) {
            keys.add("harness-test:{" + c + "}:key");
        }
        return keys;
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void writesReadsAndFlushes(RedisTopology topology) {
        AbstractRedisClient client = topology.newClient();
        try (StatefulConnection<String, String> connection = connect(client)) {
            RedisClusterCommands<String, String> commands = sync(connection);
            assertThat(commands.ping()).isEqualTo("PONG");

            List<String> keys = taggedKeys();
            for (String key : keys) {
                assertThat(commands.set(key, "v-" + key)).isEqualTo("OK");
            }
            for (String key : keys) {
                assertThat(commands.get(key)).isEqualTo("v-" + key);
            }

            if (topology == RedisTopology.CLUSTER) {
                StatefulRedisClusterConnection<String, String> cluster = (StatefulRedisClusterConnection<String, String>) connection;
                Partitions partitions = cluster.getPartitions();
                Set<String> mastersHoldingKeys = new HashSet<>();
                for (String key : keys) {
                    mastersHoldingKeys.add(partitions.getPartitionBySlot(SlotHash.getSlot(key)).getNodeId());
                }
                assertThat(mastersHoldingKeys).as("masters holding {a}..{z}").hasSize(3);
                String info = commands.clusterInfo();
                assertThat(info).contains("cluster_state:ok");
                assertThat(TestRedisServers.infoField(info, "cluster_size")).isEqualTo("3");
                assertThat(TestRedisServers.healthyMasters(commands.clusterNodes())).isEqualTo(3);
                assertThat(partitions.stream().filter(n -> n.getRole().isUpstream()).map(RedisClusterNode::getNodeId)
                        .collect(Collectors.toSet())).hasSize(3);
            }

            topology.flushAll();
            for (String key : keys) {
                assertThat(commands.exists(key)).as("after flushAll: " + key).isZero();
            }
            assertThat(commands.dbsize()).isZero(); // on a cluster connection: summed over all masters
        } finally {
            client.shutdown();
        }
    }

    @ParameterizedTest
    @EnumSource(RedisTopology.class)
    void springPropertiesPointAtTheServers(RedisTopology topology) {
        Map<String, String> props = topology.springProperties();
        if (topology == RedisTopology.STANDALONE) {
            RedisEndpoint endpoint = TestRedisServers.standalone();
            assertThat(props).containsEntry("spring.data.redis.host", endpoint.host())
                    .containsEntry("spring.data.redis.port", Integer.toString(endpoint.port()));
            assertThat(endpoint.uri()).isEqualTo("redis://" + endpoint.host() + ":" + endpoint.port());
        } else {
            List<RedisEndpoint> nodes = TestRedisServers.clusterNodes();
            assertThat(nodes).hasSize(3);
            assertThat(props.get("spring.data.redis.cluster.nodes").split(",")).hasSize(3)
                    .containsExactlyElementsOf(nodes.stream().map(n -> n.host() + ":" + n.port()).toList());
        }
    }

    @Test
    void newClientIsCheapAndSharesResources() {
        for (int i = 0; i < 20; i++) {
            RedisClient client = (RedisClient) RedisTopology.STANDALONE.newClient();
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                assertThat(connection.sync().ping()).isEqualTo("PONG");
            } finally {
                client.shutdown(); // must leave the shared ClientResources usable
            }
        }
        RedisClusterClient cluster = (RedisClusterClient) RedisTopology.CLUSTER.newClient();
        try (StatefulRedisClusterConnection<String, String> connection = cluster.connect()) {
            assertThat(connection.sync().ping()).isEqualTo("PONG");
        } finally {
            cluster.shutdown();
        }
        assertThat(TestRedisServers.resources().eventExecutorGroup().isShuttingDown()).isFalse();
    }

    @Test
    void slotRangesMatchRedisCli() {
        int[] first = TestRedisServers.slotRange(0, 3);
        int[] second = TestRedisServers.slotRange(1, 3);
        int[] third = TestRedisServers.slotRange(2, 3);
        assertThat(new int[] {first[0], first[first.length - 1]}).containsExactly(0, 5460);
        assertThat(new int[] {second[0], second[second.length - 1]}).containsExactly(5461, 10922);
        assertThat(new int[] {third[0], third[third.length - 1]}).containsExactly(10923, 16383);
    }

    private static StatefulConnection<String, String> connect(AbstractRedisClient client) {
        if (client instanceof RedisClusterClient cluster) {
            return cluster.connect();
        }
        return ((RedisClient) client).connect();
    }

    private static RedisClusterCommands<String, String> sync(StatefulConnection<String, String> connection) {
        if (connection instanceof StatefulRedisClusterConnection<String, String> cluster) {
            return cluster.sync();
        }
        return ((StatefulRedisConnection<String, String>) connection).sync();
    }
}
