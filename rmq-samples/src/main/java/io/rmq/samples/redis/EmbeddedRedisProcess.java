package io.rmq.samples.redis;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisServer;

/**
 * One {@code redis-server} process, the binary bundled in {@code com.github.codemonstur:embedded-redis}, started and
 * stopped only by its owner. The library's own {@code RedisServer.start()} is not used because it registers a JVM
 * shutdown hook that stops the server at once, in parallel with Spring's context close, so that listeners still
 * releasing their slots find Redis gone. For the same reason the process is started in a session of its own
 * ({@code setsid}, where there is one): a Ctrl-C in a terminal signals the whole foreground process group, and Redis
 * would otherwise shut down on that SIGINT before the application has stopped its listeners.
 */
final class EmbeddedRedisProcess {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedRedisProcess.class);
    private static final String READY = "Ready to accept connections";
    private static final long START_TIMEOUT_SECONDS = 20;
    private static final long STOP_TIMEOUT_SECONDS = 10;

    private final Process process;
    private final int port;

    private EmbeddedRedisProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts a server bound to {@code host}:{@code port}, without snapshots, and returns once it accepts connections. */
    static EmbeddedRedisProcess start(String host, int port) throws IOException {
        List<String> command = new ArrayList<>();
        File setsid = onPath("setsid");
        if (setsid != null) {
            command.add(setsid.getAbsolutePath());
        }
        command.addAll(RedisServer.newRedisServer().bind(host).port(port)
                .setting("save \"\"")           // no snapshots on disk
                .setting("appendonly no")
                .buildCommandArgs());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<Void> ready = new CompletableFuture<>();
        StringBuilder output = new StringBuilder();
        Thread reader = new Thread(() -> drain(process, ready, output), "embedded-redis-" + port);
        reader.setDaemon(true);
        reader.start();
        try {
            ready.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return new EmbeddedRedisProcess(process, port);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("Interrupted while the embedded Redis on port " + port + " started", ex);
        }
        catch (ExecutionException | TimeoutException ex) {
            process.destroyForcibly();
            String said;
            synchronized (output) {
                said = output.toString().strip();
            }
            throw new IOException("The embedded Redis on port " + port + " did not start within "
                    + START_TIMEOUT_SECONDS + " s" + (said.isEmpty() ? "" : ": " + said));
        }
    }

    /**
     * Reads the server's output until it ends, so that the pipe never fills: the ready line completes
     * {@code ready}; the output before it is kept for a failed start's message, the rest goes to the debug log.
     */
    private static void drain(Process process, CompletableFuture<Void> ready, StringBuilder output) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (!ready.isDone()) {
                    synchronized (output) {
                        output.append(line).append('\n');
                    }
                    if (line.contains(READY)) {
                        ready.complete(null);
                    }
                }
                log.debug("redis-server: {}", line);
            }
        }
        catch (IOException ex) {
            log.debug("redis-server output ended: {}", ex.toString());
        }
        ready.completeExceptionally(new IOException("redis-server exited"));
    }

    int port() {
        return port;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM (Redis shuts down at once, nothing to save), then waits for the process; forcibly after a while. */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            log.warn("The embedded Redis on port {} did not stop within {} s; killing it", port, STOP_TIMEOUT_SECONDS);
            process.destroyForcibly();
            process.waitFor(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }

    private static File onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            File candidate = new File(dir, name);
            if (candidate.isFile() && candidate.canExecute()) {
                return candidate;
            }
        }
        return null;
    }
}
