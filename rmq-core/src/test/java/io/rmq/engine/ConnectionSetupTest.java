package io.rmq.engine;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.rmq.Rmq;
import io.rmq.core.RmqException;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What RMQ checks and sets up when it connects: ACL permissions, and failover detection on a cluster client. */
@ParameterizedClass
@EnumSource(RedisTopology.class)
class ConnectionSetupTest extends EngineTestSupport {

    ConnectionSetupTest(RedisTopology topology) {
        super(topology);
    }

    @Test
    void aClusterClientWithoutTopologyRefreshGetsOneSoAFailoverIsFollowed() {
        Assumptions.assumeTrue(topology == RedisTopology.CLUSTER, "cluster clients only");
        ClusterTopologyRefreshOptions refresh = ((ClusterClientOptions) client.getOptions()).getTopologyRefreshOptions();
        assertThat(refresh.isPeriodicRefreshEnabled()).isTrue();
        assertThat(refresh.getRefreshPeriod()).isLessThanOrEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(refresh.getAdaptiveRefreshTriggers())
                .contains(ClusterTopologyRefreshOptions.RefreshTrigger.PERSISTENT_RECONNECTS);
    }

    @Test
    void aClusterClientsOwnRefreshSettingsAreKept() {
        Assumptions.assumeTrue(topology == RedisTopology.CLUSTER, "cluster clients only");
        RedisClusterClient own = (RedisClusterClient) topology.newClient();
        try {
            ClusterTopologyRefreshOptions chosen = ClusterTopologyRefreshOptions.builder()
                    .enablePeriodicRefresh(java.time.Duration.ofSeconds(42)).enableAllAdaptiveRefreshTriggers()
                    .build();
            own.setOptions(ClusterClientOptions.builder().topologyRefreshOptions(chosen).build());
            try (Rmq engine = Rmq.create(own, Rmq.Options.DEFAULT.withKeyPrefix(prefix))) {
                assertThat(((ClusterClientOptions) own.getOptions()).getTopologyRefreshOptions().getRefreshPeriod())
                        .isEqualTo(java.time.Duration.ofSeconds(42));
                assertThat(engine.topics()).isNotNull();
            }
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
                assertThatThrownBy(() -> Rmq.create(limited, Rmq.Options.DEFAULT.withKeyPrefix(prefix)))
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
