package io.rmq.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.rmq.test.TestRedisServers;

/**
 * One redis-server process of the fault suite that the scenario controls: kill -9, restart on the same port with the
 * same data directory (its AOF is replayed), SIGSTOP and SIGCONT.
 */
final class RedisNode implements AutoCloseable {

    static final String HOST = "127.0.0.1";

    private final Path executable = TestRedisServers.redisServerExecutable();
    private final int port;
    private final Path dir;
    private final List<String> extraArgs;
    private Process process;

    private RedisNode(int port, Path dir, List<String> extraArgs) {
        this.port = port;
        this.dir = dir;
        this.extraArgs = extraArgs;
    }

    /** Starts a server on a free port; {@code extraArgs} e.g. {@code --appendonly yes --appendfsync always}. */
    static RedisNode start(Path workDir, boolean cluster, String... extraArgs) throws IOException {
        int port = TestRedisServers.freePort(cluster);
        Path dir = Files.createTempDirectory(workDir, "redis-" + port + "-");
        List<String> args = new ArrayList<>(List.of(extraArgs));
        if (cluster) {
            args.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "2000"));
        }
        RedisNode node = new RedisNode(port, dir, List.copyOf(args));
        node.launch();
        return node;
    }

    int port() {
        return port;
    }

    String hostPort() {
        return HOST + ":" + port;
    }

    RedisURI uri() {
        return RedisURI.create(HOST, port);
    }

    long pid() {
        return process.pid();
    }

    private void launch() throws IOException {
        List<String> command = new ArrayList<>(List.of(executable.toString(), "--port", Integer.toString(port),
                "--bind", HOST, "--save", "", "--daemonize", "no", "--protected-mode", "no", "--dir",
                dir.toString()));
        command.addAll(extraArgs);
        process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile())).start();
        awaitPing(20_000);
    }

    /** Waits until the server answers PING (it may be loading its AOF). */
    void awaitPing(long timeoutMillis) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        RuntimeException last = null;
        while (System.currentTimeMillis() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("redis-server on " + port + " exited: " + log());
            }
            RedisClient client = RedisClient.create(uri());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                if ("PONG".equals(connection.sync().ping())) {
                    return;
                }
            }
            catch (RuntimeException ex) {
                last = ex;
            }
            finally {
                shutdown(client);
            }
            Signals.sleep(50);
        }
        throw new IOException("redis-server on " + port + " did not answer PING: " + last + "; " + log());
    }

    /** kill -9: no shutdown, no final AOF rewrite; what was not yet fsynced is lost (appendfsync decides). */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Starts the server again on the same port and directory. */
    void restart() throws IOException {
        launch();
    }

    void freeze() throws IOException, InterruptedException {
        Signals.send(process.pid(), "STOP");
    }

    void thaw() throws IOException, InterruptedException {
        Signals.send(process.pid(), "CONT");
    }

    String log() {
        return Signals.tail(dir.resolve("redis.log"), 20);
    }

    @Override
    public void close() {
        Signals.destroy(process);
    }

    /**
     * Shuts a short-lived test client down, waiting at most 10 s: RedisClient.shutdown waits on a future without a
     * bound, and that future never completed once, which hung a .ci/run for good (the client's threads are daemons;
     * one left behind costs nothing).
     */
    static void shutdown(io.lettuce.core.RedisClient client) {
        try {
            client.shutdownAsync(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex) {
            System.out.println("[faults] a Redis client did not shut down within 10 s: " + ex);
        }
    }
}
