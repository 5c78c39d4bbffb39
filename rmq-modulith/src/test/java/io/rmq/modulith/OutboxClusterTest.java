package io.rmq.modulith;

import io.rmq.modulith.ShopApp.Database;
import io.rmq.test.RedisTopology;

/** {@link OutboxIntegrationTests} with the registry on H2 (in memory), on a 3-master Redis Cluster. */
class OutboxClusterTest extends OutboxIntegrationTests {

    @Override
    Database database() {
        return Database.H2;
    }

    @Override
    RedisTopology topology() {
        return RedisTopology.CLUSTER;
    }
}
