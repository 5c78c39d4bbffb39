package io.rmq.test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A real PostgreSQL comes up on a free loopback port, takes databases, and is gone after stop (skipped without it). */
class TestPostgresTest {

    @Test
    void startsOnALoopbackPortTakesDatabasesAndStopsByItsPid() throws Exception {
        TestPostgres postgres = TestPostgres.shared();
        try {
            assertThat(accepts(postgres.port())).isTrue();
            assertThat(postgres.newDatabase("harness")).startsWith("jdbc:postgresql://127.0.0.1:" + postgres.port()
                    + "/harness_");
        }
        finally {
            TestPostgres.stopShared();
        }
        assertThat(accepts(postgres.port())).as("nothing listens after stop").isFalse();
    }

    private static boolean accepts(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), (int) Duration.ofSeconds(2).toMillis());
            return true;
        }
        catch (IOException ex) {
            return false;
        }
    }
}
