package io.rmq.modulith;

import io.rmq.modulith.ShopApp.Database;

/** {@link RedisDownAtCommitTests} with the registry on H2 (in memory). */
class RedisDownAtCommitH2Test extends RedisDownAtCommitTests {

    @Override
    Database database() {
        return Database.H2;
    }
}
