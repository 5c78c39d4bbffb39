package io.rmq.test;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One {@code redis-server} child process on a free loopback port, with its own temporary working directory.
 * The same code launches a {@code redis-server} found on the PATH and the binary extracted from the embedded-redis jar.
 */
final class RedisServerProcess {

    static final String HOST = "127.0.0.1";

    /** Redis Cluster listens on port + 10000 for its bus (Redis 6.2 cannot choose another offset). */
    private static final int CLUSTER_BUS_OFFSET = 10000;
    private static final int MAX_PORT_ATTEMPTS = 8;
    private static final long START_TIMEOUT_MS = 20_000;
    private static final Pattern PROCESS_ID = Pattern.compile("(?m)^process_id:(\\d+)");
    private static final Pattern VERSION = Pattern.compile("(?m)^redis_version:(\\S+)");

    private final Path executable;
    private final RedisEndpoint endpoint;
    private final Process process;
    private final Path dir;
    private final String version;

    private RedisServerProcess(Path executable, RedisEndpoint endpoint, Process process, Path dir, String version) {
        this.executable = executable;
        this.endpoint = endpoint;
        this.process = process;
        this.dir = dir;
        this.version = version;
    }

    long pid() {
        return process.pid();
    }

    RedisEndpoint endpoint() {
        return endpoint;
    }

    String version() {
        return version;
    }

    Path executable() {
        return executable;
    }

    /**
     * Starts {@code executable} on a free loopback port and waits until it answers PING (and is really the process we
     * started, not a neighbour that grabbed the port first). Retries on another port when the port turns out taken.
     *
     * @param workRoot    parent of the server's temporary working directory
     * @param clusterNode start with {@code --cluster-enabled yes}; the port is chosen so that port + 10000 is free too
     */
    static RedisServerProcess start(Path executable, Path workRoot, boolean clusterNode) throws IOException {
        return start(executable, workRoot, clusterNode, List.of());
    }

    /** As {@link #start(Path, Path, boolean)}, with extra arguments (they override the defaults above). */
    static RedisServerProcess start(Path executable, Path workRoot, boolean clusterNode, List<String> extraArgs)
            throws IOException {
        List<String> portClashes = new ArrayList<>();
        for (int attempt = 1; attempt <= MAX_PORT_ATTEMPTS; attempt++) {
            int port = freePort(clusterNode);
            Path dir = Files.createTempDirectory(workRoot, (clusterNode ? "cluster-" : "standalone-") + port + "-");
            Path log = dir.resolve("redis.log");
            List<String> command = new ArrayList<>(List.of(
                    executable.toString(),
                    "--port", Integer.toString(port),
                    "--bind", HOST,
                    "--save", "",
                    "--appendonly", "no",
                    "--daemonize", "no",
                    "--protected-mode", "no",
                    "--dir", dir.toString()));
            if (clusterNode) {
                command.addAll(List.of(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes-" + port + ".conf",
                        "--cluster-node-timeout", "5000"));
            }
            command.addAll(extraArgs);
            Process process;
            try {
                process = new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
            } catch (IOException e) {
                deleteRecursively(dir);
                throw new IOException("cannot execute " + executable + ": " + e.getMessage(), e);
            }
            Readiness readiness = awaitReady(process, port);
            if (readiness.ready()) {
                return new RedisServerProcess(executable, new RedisEndpoint(HOST, port), process, dir, readiness.version());
            }
            destroy(process);
            String output = tail(log);
            deleteRecursively(dir);
            if (readiness.foreign() || output.toLowerCase(Locale.ROOT).contains("in use")) {
                portClashes.add(port + (readiness.foreign() ? " (answered by another process)" : " (in use)"));
                continue;
            }
            throw new IOException(executable + " did not come up on " + HOST + ":" + port + " ("
                    + readiness.problem() + "); its output: " + (output.isBlank() ? "<none>" : output));
        }
        throw new IOException("no usable port after " + MAX_PORT_ATTEMPTS + " attempts, tried " + portClashes);
    }

    /** Stops the process (SIGTERM, then SIGKILL) and deletes its working directory. Idempotent. */
    void stop() {
        destroy(process);
        deleteRecursively(dir);
    }

    /** kill -9 (a crash: no shutdown, no reply to anyone), waiting until the process is gone. */
    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Kill without waiting long; for the JVM shutdown hook. */
    void stopQuietly() {
        try {
            stop();
        } catch (RuntimeException ignored) {
            // best effort
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    // ---------------------------------------------------------------------------------------------------------------

    private record Readiness(boolean ready, boolean foreign, String problem, String version) {
        static Readiness ok(String version) {
            return new Readiness(true, false, null, version);
        }

        static Readiness failed(boolean foreign, String problem) {
            return new Readiness(false, foreign, problem, null);
        }
    }

    private static Readiness awaitReady(Process process, int port) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                return Readiness.failed(false, "exited with code " + process.exitValue());
            }
            String info = pingAndInfo(port);
            if (info != null) {
                Matcher pid = PROCESS_ID.matcher(info);
                Matcher version = VERSION.matcher(info);
                String v = version.find() ? version.group(1) : "?";
                if (!pid.find()) {
                    return Readiness.ok(v); // INFO without process_id: cannot tell, trust the port
                }
                long answeringPid = Long.parseLong(pid.group(1));
                if (answeringPid == process.pid()
                        || process.descendants().anyMatch(child -> child.pid() == answeringPid)) {
                    return Readiness.ok(v);
                }
                return Readiness.failed(true, "port answered by pid " + answeringPid);
            }
            sleep(15);
        }
        return Readiness.failed(false, "no PING answer within " + START_TIMEOUT_MS + " ms");
    }

    /** PING then INFO server over a raw RESP connection; {@code null} when not (yet) answering PONG. */
    private static String pingAndInfo(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), 250);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            out.write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            if (!"+PONG".equals(readLine(in))) {
                return null; // e.g. -LOADING
            }
            out.write("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String header = readLine(in);
            if (!header.startsWith("$")) {
                return "";
            }
            int length = Integer.parseInt(header.substring(1));
            byte[] body = in.readNBytes(Math.max(length, 0));
            return new String(body, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int previous = -1;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException();
            }
            if (previous == '\r' && b == '\n') {
                byte[] bytes = line.toByteArray();
                return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
            }
            line.write(b);
            previous = b;
        }
    }

    /**
     * A port that is free on the loopback address right now (ServerSocket(0)); for cluster nodes also port + 10000.
     * Someone may still take it before redis binds it: {@link #start} retries then.
     */
    static int freePort(boolean withClusterBus) throws IOException {
        for (int i = 0; i < 200; i++) {
            int port;
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(HOST, 0));
                port = socket.getLocalPort();
            }
            if (!withClusterBus) {
                return port;
            }
            if (port + CLUSTER_BUS_OFFSET <= 65535 && isFree(port + CLUSTER_BUS_OFFSET)) {
                return port;
            }
        }
        throw new IOException("found no free loopback port" + (withClusterBus ? " with a free cluster bus port (+10000)" : ""));
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(HOST, port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void destroy(Process process) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 8), lines.size())).strip();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    static void deleteRecursively(Path path) {
        if (path == null || !Files.exists(path)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort
                }
            });
        } catch (IOException | RuntimeException ignored) {
            // best effort
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server", e);
        }
    }

    @Override
    public String toString() {
        return "redis-server " + version + " pid " + process.pid() + " at " + endpoint;
    }
}
