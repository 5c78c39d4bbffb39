package io.rmq.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} started on a port chosen beforehand, for tests of what happens while nothing listens there
 * yet: reserve a port with {@link #freePort()}, point RMQ at it, then {@link #startOn(int)}. Stopped (this process
 * only) on close.
 */
public final class LateRedisServer implements AutoCloseable {

    private final Process process;
    private final Path dir;
    private final int port;

    private LateRedisServer(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /** A loopback port where nothing listens now. */
    public static int freePort() throws IOException {
        return TestRedisServers.freePort(false);
    }

    /** Starts {@code redis-server} on {@code port} and waits (up to 10 s) until it answers PING. */
    public static LateRedisServer startOn(int port) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("rmq-late-redis-" + port + "-");
        Process process = new ProcessBuilder(List.of(TestRedisServers.redisServerExecutable().toString(),
                "--port", Integer.toString(port), "--bind", RedisServerProcess.HOST, "--save", "", "--appendonly", "no",
                "--protected-mode", "no", "--dir", dir.toString()))
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        LateRedisServer server = new LateRedisServer(process, dir, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!server.answersPing()) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                server.close();
                throw new IOException("redis-server did not come up on port " + port + "; see " + dir);
            }
            Thread.sleep(20);
        }
        return server;
    }

    public int port() {
        return port;
    }

    private boolean answersPing() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(RedisServerProcess.HOST, port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = new byte[5];
            return in.readNBytes(reply, 0, 5) == 5 && new String(reply, StandardCharsets.US_ASCII).equals("+PONG");
        }
        catch (IOException ex) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
        RedisServerProcess.deleteRecursively(dir);
    }
}
