package io.rmq.test;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.rmq.test.TcpProxy.Direction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link TcpProxy} in front of a real Redis, spoken to over plain sockets (inline commands) to see every byte. */
class TcpProxyTest {

    private final RedisEndpoint redis = TestRedisServers.standalone();
    private final String key = "tcp-proxy-test:" + UUID.randomUUID();
    private final List<Socket> sockets = new ArrayList<>();
    private TcpProxy proxy;

    @BeforeEach
    void startProxy() throws IOException {
        proxy = new TcpProxy(redis.host(), redis.port());
    }

    @AfterEach
    void close() throws IOException {
        proxy.close();
        for (Socket socket : sockets) {
            socket.close();
        }
        try (Socket direct = connect(redis.port())) {
            send(direct, "DEL " + key);
            readLine(direct, 5000);
        }
    }

    @Test
    void forwardsRequestsAndRepliesBothWays() throws IOException {
        Socket socket = connect(proxy.port());
        send(socket, "PING");
        assertThat(readLine(socket, 5000)).isEqualTo("+PONG");
    }

    @Test
    void aBlackholedConnectionNeverAnswersNeverClosesAndStaysDeadAfterTheHeal() throws IOException {
        Socket old = connect(proxy.port());
        send(old, "PING");
        assertThat(readLine(old, 5000)).isEqualTo("+PONG");

        proxy.blackhole(Direction.BOTH);
        send(old, "SET " + key + " swallowed");
        assertThat(readLine(old, 1000)).as("no reply, no end of stream, no reset").isEqualTo(TIMED_OUT);
        assertThat(directGet()).as("the request never reached Redis").isEqualTo("$-1");

        Socket duringTheBlackhole = connect(proxy.port());
        send(duringTheBlackhole, "PING");
        assertThat(readLine(duringTheBlackhole, 1000)).isEqualTo(TIMED_OUT);

        proxy.heal();
        send(old, "PING");
        assertThat(readLine(old, 1000)).as("a blackholed connection stays dead").isEqualTo(TIMED_OUT);
        send(duringTheBlackhole, "PING");
        assertThat(readLine(duringTheBlackhole, 1000)).isEqualTo(TIMED_OUT);
        Socket fresh = connect(proxy.port());
        send(fresh, "PING");
        assertThat(readLine(fresh, 5000)).as("a connection made after the heal works").isEqualTo("+PONG");
        assertThat(proxy.deadConnections()).isEqualTo(2);
        assertThat(proxy.blackholes()).isEqualTo(1);
    }

    @Test
    void aDownstreamBlackholeDeliversRequestsButSwallowsTheReplies() throws IOException {
        Socket socket = connect(proxy.port());
        proxy.blackhole(Direction.DOWNSTREAM);
        send(socket, "SET " + key + " delivered");
        assertThat(readLine(socket, 1000)).isEqualTo(TIMED_OUT);
        assertThat(directGet()).isEqualTo("delivered");
    }

    @Test
    void anUpstreamBlackholeSwallowsTheRequests() throws IOException {
        Socket socket = connect(proxy.port());
        proxy.blackhole(Direction.UPSTREAM);
        send(socket, "SET " + key + " swallowed");
        assertThat(readLine(socket, 1000)).isEqualTo(TIMED_OUT);
        assertThat(directGet()).isEqualTo("$-1");
    }

    @Test
    void latencyWithJitterDelaysEveryChunkWithoutAddingUpAndKeepsTheOrder() throws Exception {
        Socket socket = connect(proxy.port());
        proxy.latency(Duration.ofMillis(200), Duration.ofMillis(50));
        int commands = 20;
        long started = System.nanoTime();
        for (int i = 0; i < commands; i++) {
            // one chunk each, with random delays of their own: order must hold anyway
            send(socket, "INCR " + key);
            Thread.sleep(10);
        }
        List<String> replies = new ArrayList<>();
        for (int i = 0; i < commands; i++) {
            replies.add(readLine(socket, 10_000));
        }
        long elapsedMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
        List<String> expected = new ArrayList<>();
        for (int i = 1; i <= commands; i++) {
            expected.add(":" + i);
        }
        assertThat(replies).isEqualTo(expected);
        // each way at least 150 ms; one after the other (no pipelining through the delay) would take 20 x 300 ms
        assertThat(elapsedMillis).isBetween(300L, 4000L);

        proxy.heal();
        started = System.nanoTime();
        send(socket, "PING");
        assertThat(readLine(socket, 5000)).isEqualTo("+PONG");
        assertThat(Duration.ofNanos(System.nanoTime() - started).toMillis()).isLessThan(150);
    }

    @Test
    void aStallHoldsTheBytesWithTheConnectionOpenAndThenDeliversThem() throws IOException {
        Socket socket = connect(proxy.port());
        proxy.stall(1500);
        send(socket, "PING");
        assertThat(readLine(socket, 500)).isEqualTo(TIMED_OUT);
        assertThat(readLine(socket, 5000)).isEqualTo("+PONG");
    }

    @Test
    void resetClosesEveryConnectionAndNewOnesWork() throws IOException {
        Socket socket = connect(proxy.port());
        send(socket, "PING");
        assertThat(readLine(socket, 5000)).isEqualTo("+PONG");
        proxy.resetAll();
        assertThat(readLine(socket, 5000)).isEqualTo(CLOSED);
        Socket fresh = connect(proxy.port());
        send(fresh, "PING");
        assertThat(readLine(fresh, 5000)).isEqualTo("+PONG");
        assertThat(proxy.resets()).isEqualTo(1);
        assertThat(proxy.accepted()).isEqualTo(2);
    }

    private static final String TIMED_OUT = "<timed out>";
    private static final String CLOSED = "<closed>";

    private Socket connect(int port) throws IOException {
        Socket socket = new Socket(redis.host(), port);
        sockets.add(socket);
        return socket;
    }

    private String directGet() throws IOException {
        try (Socket direct = connect(redis.port())) {
            send(direct, "GET " + key);
            String line = readLine(direct, 5000);
            return line.startsWith("$") && !line.equals("$-1") ? readLine(direct, 5000) : line;
        }
    }

    private static void send(Socket socket, String command) throws IOException {
        socket.getOutputStream().write((command + "\r\n").getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
    }

    /** One reply line without its CRLF, {@link #TIMED_OUT} when none came within {@code millis}, or {@link #CLOSED}. */
    private static String readLine(Socket socket, int millis) throws IOException {
        socket.setSoTimeout(millis);
        InputStream in = socket.getInputStream();
        StringBuilder line = new StringBuilder();
        try {
            int b;
            while ((b = in.read()) >= 0) {
                if (b == '\n') {
                    return line.substring(0, line.length() - 1);
                }
                line.append((char) b);
            }
            return CLOSED;
        }
        catch (SocketTimeoutException ex) {
            assertThat(line).as("a reply cut in the middle").isEmpty();
            return TIMED_OUT;
        }
        catch (IOException ex) {
            return CLOSED;
        }
    }
}
