package io.rmq.engine;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.core.RmqException;
import io.rmq.test.LogCapture;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What RMQ checks and sets up when it connects: ACL permissions; the options of its own client; a caller's own client
 * left as it is.
 */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ConnectionSetupTest extends EngineTestSupport {

    ConnectionSetupTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void rmqsOwnClientFollowsAFailoverRejectsCallsForADownNodeAndReconnectsQuickly() {
        ClientOptions options = client.getOptions();
        assertThat(options.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
        assertThat(options.getTimeoutOptions().isTimeoutCommands()).isTrue();
        assertThat(options.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofSeconds(5));
        if (topology == RedisTopology.CLUSTER) {
            ClusterTopologyRefreshOptions refresh = ((ClusterClientOptions) options).getTopologyRefreshOptions();
            assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
            assertThat(refresh.getRefreshPeriod()).isLessThanOrEqualTo(Duration.ofSeconds(5));
            assertThat(refresh.getAdaptiveRefreshTriggers())
                    .contains(ClusterTopologyRefreshOptions.RefreshTrigger.PERSISTENT_RECONNECTS);
            assertThat(refresh.getAdaptiveRefreshTimeout()).isLessThanOrEqualTo(Duration.ofSeconds(1));
            assertThat(((ClusterClientOptions) options).getNodeFilter())
                    .isNotSameAs(ClusterClientOptions.DEFAULT_NODE_FILTER);
        }
        // the reconnect delay belongs to the client resources: RMQ's own view of the shared ones
        assertThat(client.getResources().reconnectDelay().createDelay(20)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void aClusterClientOfTheCallersOwnWithoutRefreshIsLeftAsConfiguredAndRmqSaysOnceThatItWillNotFollowAFailover() {
        Assumptions.assumeTrue(topology == RedisTopology.CLUSTER, "cluster clients only");
        RedisClusterClient own = (RedisClusterClient) topology.newClient();
        try (LogCapture log = LogCapture.rmq()) {
            own.setOptions(ClusterClientOptions.builder().topologyRefreshOptions(ClusterTopologyRefreshOptions
                    .builder().disableAllAdaptiveRefreshTriggers().build()).build());
            ClusterClientOptions before = (ClusterClientOptions) own.getOptions();
            try (Rmq first = Rmq.create(own, RmqOptions.DEFAULT.withKeyPrefix(prefix));
                    Rmq second = Rmq.create(own, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
                assertThat(own.getOptions()).isSameAs(before);
                assertThat(((ClusterClientOptions) own.getOptions()).getTopologyRefreshOptions()
                        .isPeriodicRefreshEnabled()).isFalse();
                assertThat(first.topics()).isNotNull();
                assertThat(second.topics()).isNotNull();
            }
            assertThat(log.messages()).filteredOn(m -> m.contains("without topology refresh")).hasSize(1);
        }
        finally {
            own.shutdown();
        }
    }

    @Test
    void aClusterClientsOwnRefreshSettingsAreKeptWithoutAWarning() {
        Assumptions.assumeTrue(topology == RedisTopology.CLUSTER, "cluster clients only");
        RedisClusterClient own = (RedisClusterClient) topology.newClient();
        try (LogCapture log = LogCapture.rmq()) {
            ClusterTopologyRefreshOptions chosen = ClusterTopologyRefreshOptions.builder()
                    .enablePeriodicRefresh(Duration.ofSeconds(42)).enableAllAdaptiveRefreshTriggers()
                    .build();
            own.setOptions(ClusterClientOptions.builder().topologyRefreshOptions(chosen).build());
            try (Rmq engine = Rmq.create(own, RmqOptions.DEFAULT.withKeyPrefix(prefix))) {
                assertThat(((ClusterClientOptions) own.getOptions()).getTopologyRefreshOptions().getRefreshPeriod())
                        .isEqualTo(Duration.ofSeconds(42));
                assertThat(engine.topics()).isNotNull();
            }
            assertThat(log.messages()).noneMatch(m -> m.contains("without topology refresh"));
        }
        finally {
            own.shutdown();
        }
    }

    @Test
    void aRedisUserWithoutTimeFailsAtStartUpNamingTheRulesToGrant() {
        Assumptions.assumeTrue(topology == RedisTopology.STANDALONE, "one server to add a user to");
        RedisEndpoint endpoint = TestRedisServers.standalone();
        String user = "rmq-no-time-" + prefix;
        RedisClient admin = (RedisClient) topology.newClient();
        try (StatefulRedisConnection<String, String> connection = admin.connect()) {
            connection.sync().aclSetuser(user, io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw")
                    .keyPattern("*").channelPattern("*").addCommand(io.lettuce.core.protocol.CommandType.PING)
                    .addCategory(io.lettuce.core.AclCategory.READ).addCategory(io.lettuce.core.AclCategory.WRITE).addCategory(io.lettuce.core.AclCategory.SCRIPTING)
                    .addCategory(io.lettuce.core.AclCategory.PUBSUB).removeCommand(io.lettuce.core.protocol.CommandType.TIME));
            RedisClient limited = RedisClient.create(RedisURI.builder().withHost(endpoint.host())
                    .withPort(endpoint.port()).withAuthentication(user, "pw").build());
            try {
                assertThatThrownBy(() -> Rmq.create(limited, RmqOptions.DEFAULT.withKeyPrefix(prefix)))
                        .isInstanceOf(RmqException.class)
                        .hasMessageContaining("+@read +@write +@scripting +@pubsub +time");
            }
            finally {
                limited.shutdown();
                connection.sync().aclDeluser(user);
            }
        }
        finally {
            admin.shutdown();
        }
    }
}
