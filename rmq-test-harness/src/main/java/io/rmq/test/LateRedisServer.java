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
        LateRedisServer server = launch(port, Files.createTempDirectory("rmq-late-redis-" + port + "-"), List.of());
        server.awaitUp(server::answersPing);
        return server;
    }

    /** Starts {@code redis-server} on {@code port}, its data and log in {@code dir}, with {@code extraArgs}. */
    private static LateRedisServer launch(int port, Path dir, List<String> extraArgs) throws IOException {
        List<String> command = new java.util.ArrayList<>(List.of(TestRedisServers.redisServerExecutable().toString(),
                "--port", Integer.toString(port), "--bind", RedisServerProcess.HOST, "--save", "", "--appendonly", "no",
                "--protected-mode", "no", "--dir", dir.toString()));
        command.addAll(extraArgs);
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        return new LateRedisServer(process, dir, port);
    }

    /** Waits (up to 10 s) until {@code up}; closes this server and fails when it does not come, or exits. */
    private void awaitUp(java.util.function.BooleanSupplier up) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!up.getAsBoolean()) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                close();
                throw new IOException("redis-server did not come up on port " + port + "; see " + dir);
            }
            Thread.sleep(20);
        }
    }

    /**
     * Starts {@code redis-server} on {@code port} with a saved data set of {@code keys} keys that it loads slowly
     * ({@code key-load-delay}: {@code microsPerKey} µs a key; {@code loading-process-events-interval-bytes} at its
     * minimum, so that it answers {@code -LOADING} meanwhile instead of not at all): a Redis restarted with a large
     * data set, as met by applications that start with it. Returns once it answers, while it is still loading.
     */
    public static LateRedisServer startLoading(int port, int keys, int microsPerKey)
            throws IOException, InterruptedException {
        LateRedisServer filler = startOn(port);
        Path dir = Files.createTempDirectory("rmq-loading-redis-" + port + "-");
        try (Socket socket = new Socket(RedisServerProcess.HOST, port)) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            StringBuilder commands = new StringBuilder();
            for (int i = 0; i < keys; i++) {
                commands.append("SET filler:").append(i).append(" x\r\n");
            }
            commands.append("SAVE\r\n");
            out.write(commands.toString().getBytes(StandardCharsets.US_ASCII));
            out.flush();
            for (int i = 0; i <= keys; i++) {
                String line = readLine(in);
                if (!line.equals("+OK")) {
                    throw new IOException("filling Redis on port " + port + " failed: " + line);
                }
            }
        }
        Files.move(filler.dir.resolve("dump.rdb"), dir.resolve("dump.rdb"));
        filler.close();
        LateRedisServer server = launch(port, dir, List.of("--key-load-delay", Integer.toString(microsPerKey),
                "--loading-process-events-interval-bytes", "1024"));
        server.awaitUp(server::answers);
        return server;
    }

    /**
     * Ends the loading now: the rest of the data set loads without its delay ({@code key-load-delay} set to 0, a
     * command Redis takes while loading), so a test that has seen what it waited for need not sit out the rest.
     */
    public void finishLoading() throws IOException {
        try (Socket socket = new Socket(RedisServerProcess.HOST, port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write("CONFIG SET key-load-delay 0\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String reply = readLine(socket.getInputStream());
            if (!reply.equals("+OK")) {
                throw new IOException("ending the loading of Redis on port " + port + " failed: " + reply);
            }
        }
    }

    /** Whether it has loaded its data set (answers PING with PONG, not LOADING). */
    public boolean loaded() {
        return answersPing();
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }

    public int port() {
        return port;
    }

    /** Whether it answers PING at all, with PONG or an error such as LOADING. */
    private boolean answers() {
        String reply = pingReply();
        return reply != null && (reply.charAt(0) == '+' || reply.charAt(0) == '-');
    }

    private boolean answersPing() {
        return "+PONG".equals(pingReply());
    }

    /** The first up to five bytes of its reply to PING; null when it cannot be reached or says nothing. */
    private String pingReply() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(RedisServerProcess.HOST, port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            byte[] reply = socket.getInputStream().readNBytes(5);
            return reply.length == 0 ? null : new String(reply, StandardCharsets.US_ASCII);
        }
        catch (IOException ex) {
            return null;
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
