package io.rmq.modulith;

import io.rmq.modulith.ShopApp.Database;
import io.rmq.test.RedisTopology;

/** {@link OutboxIntegrationTests} with the registry on PostgreSQL (TestPostgres; skipped without it unless RMQ_REQUIRE_POSTGRES=1), on a standalone Redis. */
class OutboxPostgresTest extends OutboxIntegrationTests {

    @Override
    Database database() {
        return Database.POSTGRES;
    }

    @Override
    RedisTopology topology() {
        return RedisTopology.STANDALONE;
    }
}
