package io.rmq.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AclCategory;
import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.rmq.Rmq;
import io.rmq.RmqOptions;
import io.rmq.consumer.Delivery;
import io.rmq.consumer.RmqConsumer;
import io.rmq.core.TopicType;
import io.rmq.test.RedisEndpoint;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestRedisServers;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An ack that Redis refuses for a moment (a cluster refuses every command while it fails a master over) is sent
 * again within the lease: giving up let the lease run out and the message come a second time. The refusal is made
 * with an ACL change on RMQ's own user, on the standalone test server.
 */
class AckRetryTest extends EngineTestSupport {

    AckRetryTest() {
        super(RedisTopology.STANDALONE);
    }

    @Test
    void anAckRefusedForAMomentIsSentAgainAndSettlesTheDelivery() throws Exception {
        String user = "ack-retry-" + prefix;
        RedisEndpoint endpoint = TestRedisServers.standalone();
        try (StatefulRedisConnection<String, String> adminConnection = ((RedisClient) client).connect()) {
            RedisCommands<String, String> admin = adminConnection.sync();
            admin.aclSetuser(user, AclSetuserArgs.Builder.on().addPassword("pw").allKeys().allChannels().allCommands());
            RedisClient userClient = RedisClient.create(RedisURI.builder().withHost(endpoint.host())
                    .withPort(endpoint.port()).withAuthentication(user, "pw").build());
            Rmq engine = Rmq.create(userClient, RmqOptions.DEFAULT.withKeyPrefix(prefix));
            try {
                engine.defineTopic("acks", TopicType.RANGE_MERGE, 1);
                rmq.producer().sendRangeMerge("acks", "a", Duration.ofMillis(1));
                Thread.sleep(20);
                RmqConsumer consumer = engine.consumer("acks", FAST); // lease 5 s: acks are retried for 2.5 s
                List<Delivery> got = consumer.poll().deliveries();
                assertThat(got).hasSize(1);

                admin.aclSetuser(user, AclSetuserArgs.Builder.removeCategory(AclCategory.SCRIPTING));
                CompletableFuture<Boolean> acked = consumer.ackAsync(got.get(0));
                Thread.sleep(400); // the ack, and its first retries, are refused (NOPERM)
                assertThat(acked).as("still trying while refused").isNotDone();
                admin.aclSetuser(user, AclSetuserArgs.Builder.allCommands());

                assertThat(acked.get(5, TimeUnit.SECONDS)).as("acked once Redis takes it again").isTrue();
                assertThat(rmq.admin().stats("acks").inFlight()).isZero();
                assertThat(rmq.admin().stats("acks").waiting()).isZero();
            }
            finally {
                engine.close();
                userClient.shutdown();
                admin.aclDeluser(user);
            }
        }
    }
}
