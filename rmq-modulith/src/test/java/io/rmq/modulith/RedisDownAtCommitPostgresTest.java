package io.rmq.modulith;

import io.rmq.modulith.ShopApp.Database;

/** {@link RedisDownAtCommitTests} with the registry on PostgreSQL (TestPostgres; skipped without it unless RMQ_REQUIRE_POSTGRES=1). */
class RedisDownAtCommitPostgresTest extends RedisDownAtCommitTests {

    @Override
    Database database() {
        return Database.POSTGRES;
    }
}
