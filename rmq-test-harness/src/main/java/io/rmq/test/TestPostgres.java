package io.rmq.test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A real PostgreSQL server for tests, started once per JVM on a free loopback port in a temporary directory and
 * stopped (by the PID its postmaster wrote) when the JVM ends, or by {@link #stop()}. The binaries are Debian's
 * ({@code /usr/lib/postgresql/<version>/bin}, newest first) or {@code initdb}/{@code pg_ctl} on the PATH. PostgreSQL
 * refuses to run as root: as root, {@code initdb} and {@code pg_ctl} run as the {@code postgres} system user the
 * package creates ({@code runuser -u postgres --}), in a directory given to that user; otherwise as this user.
 * <p>
 * Without the binaries a test that asks for the server is skipped with the reason, unless
 * {@code RMQ_REQUIRE_POSTGRES=1} (set by {@code .ci/run} once it installed PostgreSQL): then it fails. Access is
 * {@code trust} on loopback for the superuser {@code postgres}; each test takes a database of its own
 * ({@link #newDatabase(String)}).
 */
public final class TestPostgres {

    /** Set to 1 where PostgreSQL is installed: a test that needs it then fails instead of skipping. */
    public static final String REQUIRE_ENV = "RMQ_REQUIRE_POSTGRES";
    public static final String USER = "postgres";

    private static final String LOG_PREFIX = "[rmq-test-postgres] ";
    private static final String SYSTEM_USER = "postgres";
    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static final Object LOCK = new Object();

    private static TestPostgres shared;                        // LOCK
    /** Why the JVM's server did not start, once it failed (LOCK). */
    private static String startFailure;
    private static boolean shutdownHookRegistered;             // LOCK

    private final Path dir;
    private final Path bin;
    private final int port;
    private final long pid;

    private TestPostgres(Path dir, Path bin, int port, long pid) {
        this.dir = dir;
        this.bin = bin;
        this.port = port;
        this.pid = pid;
    }

    /**
     * The JVM's server, started on first use; skips the calling test (or fails it, with {@code RMQ_REQUIRE_POSTGRES=1})
     * when PostgreSQL is not installed. A server that is installed but does not start fails the test with its log.
     */
    public static TestPostgres shared() {
        synchronized (LOCK) {
            if (shared == null) {
                Path bin = binaries().orElse(null);
                if (bin == null) {
                    String reason = "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb, no initdb on the"
                            + " PATH): apt-get install postgresql";
                    if ("1".equals(System.getenv(REQUIRE_ENV))) {
                        Assertions.fail(reason + " (" + REQUIRE_ENV + "=1)");
                    }
                    Assumptions.abort(reason + "; skipped");
                }
                if (startFailure != null) {
                    // failed before in this JVM: every later test fails with the same cause instead of trying again
                    return Assertions.fail(startFailure);
                }
                try {
                    shared = start(bin);
                }
                catch (IOException ex) {
                    startFailure = "PostgreSQL from " + bin + " did not start: " + ex.getMessage();
                    return Assertions.fail(startFailure, ex);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return Assertions.fail("interrupted while starting PostgreSQL", ex);
                }
                if (!shutdownHookRegistered) {
                    Runtime.getRuntime().addShutdownHook(new Thread(TestPostgres::stopShared, "rmq-test-postgres-stop"));
                    shutdownHookRegistered = true;
                }
            }
            return shared;
        }
    }

    /** Whether PostgreSQL's binaries are here (the tests that need them run rather than skip). */
    public static boolean installed() {
        return binaries().isPresent();
    }

    /** Stops the JVM's server, if one was started; the next {@link #shared()} starts a new one. */
    public static void stopShared() {
        synchronized (LOCK) {
            if (shared != null) {
                shared.stop();
                shared = null;
            }
        }
    }

    public int port() {
        return port;
    }

    /** The JDBC URL of {@code database} on this server (user {@link #USER}, no password). */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + RedisServerProcess.HOST + ":" + port + "/" + database;
    }

    /**
     * Creates an empty database whose name starts with {@code prefix} (lower case letters, digits, {@code _}) and
     * returns its JDBC URL; a database per test keeps tests apart without cleaning up.
     */
    public String newDatabase(String prefix) {
        String name = prefix.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]", "_") + "_"
                + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        try {
            // over TCP with trust: a client needs no system user, root included
            run(List.of(bin.resolve("createdb").toString(), "-h", RedisServerProcess.HOST, "-p",
                    Integer.toString(port), "-U", USER, name), dir.resolve("createdb.log"), 30);
        }
        catch (IOException ex) {
            return Assertions.fail("createdb " + name + " failed: " + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return Assertions.fail("interrupted while creating database " + name, ex);
        }
        return jdbcUrl(name);
    }

    /**
     * Fast shutdown (SIGINT to the postmaster: open sessions are ended), then the directory is deleted; SIGKILL if it
     * is still up after 15 s.
     */
    public void stop() {
        ProcessHandle.of(pid).ifPresent(postmaster -> {
            try {
                new ProcessBuilder("kill", "-INT", Long.toString(pid)).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(10, TimeUnit.SECONDS);
                postmaster.onExit().get(15, TimeUnit.SECONDS);
            }
            catch (Exception ex) {
                postmaster.destroyForcibly();
            }
        });
        deleteRecursively(dir);
        log("stopped PostgreSQL (pid " + pid + ") on port " + port);
    }

    // ------------------------------------------------------------------------------------------------- starting

    /** Debian's newest {@code /usr/lib/postgresql/<version>/bin}, else the directory of {@code initdb} on the PATH. */
    static Optional<Path> binaries() {
        File[] versions = new File("/usr/lib/postgresql").listFiles();
        if (versions != null) {
            Optional<Path> debian = Arrays.stream(versions)
                    .map(version -> version.toPath().resolve("bin"))
                    .filter(bin -> Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("pg_ctl")))
                    .max(Comparator.comparing(TestPostgres::majorVersion));
            if (debian.isPresent()) {
                return debian;
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String entry : path.split(File.pathSeparator)) {
                Path bin = Path.of(entry);
                if (Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("pg_ctl"))) {
                    return Optional.of(bin);
                }
            }
        }
        return Optional.empty();
    }

    private static int majorVersion(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString());
        }
        catch (NumberFormatException ex) {
            return 0;
        }
    }

    /**
     * Starts a server in a directory of its own; one that fails leaves nothing behind (a postmaster it forked is
     * killed, the directory deleted). A port taken between picking it and binding it is picked again.
     */
    private static TestPostgres start(Path bin) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            Path dir = Files.createTempDirectory("rmq-test-postgres-");
            try {
                return start(bin, dir);
            }
            catch (IOException | InterruptedException | RuntimeException ex) {
                killPostmaster(dir.resolve("data"));
                deleteRecursively(dir);
                if (attempt >= 3 || !String.valueOf(ex.getMessage()).contains("could not bind")) {
                    throw ex;
                }
            }
        }
    }

    /** Kills the postmaster a failed start may have left running (its pid is the first line of postmaster.pid). */
    private static void killPostmaster(Path data) {
        try {
            Path pidFile = data.resolve("postmaster.pid");
            if (Files.exists(pidFile)) {
                long pid = Long.parseLong(Files.readAllLines(pidFile, StandardCharsets.UTF_8).get(0).trim());
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        catch (IOException | RuntimeException ex) {
            log("could not stop a PostgreSQL that failed to start: " + ex);
        }
    }

    private static TestPostgres start(Path bin, Path dir) throws IOException, InterruptedException {
        boolean root = "root".equals(System.getProperty("user.name")) || isRootByUid();
        if (root) {
            giveTo(dir, SYSTEM_USER);
        }
        Path data = dir.resolve("data");
        int port = TestRedisServers.freePort(false);
        List<String> initdb = List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", USER,
                "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync");
        run(asUser(root, initdb), dir.resolve("initdb.log"), 120);
        // the socket in our directory (Debian's default, /var/run/postgresql, may not be writable); fsync off: a
        // test database need not survive a power cut, and it makes commits cheap on a busy machine
        String options = "-p " + port + " -h " + RedisServerProcess.HOST + " -k " + dir + " -c fsync=off"
                + " -c full_page_writes=off -c max_connections=100";
        List<String> pgCtl = List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l",
                dir.resolve("postgres.log").toString(), "-o", options, "-w", "-t", "60", "start");
        try {
            run(asUser(root, pgCtl), dir.resolve("pg_ctl.log"), 90);
        }
        catch (IOException ex) {
            throw new IOException(ex.getMessage() + "; server log: " + tail(dir.resolve("postgres.log")), ex);
        }
        long pid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid"), StandardCharsets.UTF_8).get(0)
                .trim());
        log("started PostgreSQL from " + bin + " on " + RedisServerProcess.HOST + ":" + port + " (pid " + pid
                + (root ? ", as system user " + SYSTEM_USER : "") + ") in " + dir);
        return new TestPostgres(dir, bin, port, pid);
    }

    private static boolean isRootByUid() {
        try {
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            return Integer.valueOf(0).equals(uid);
        }
        catch (IOException | RuntimeException ex) {
            return false;
        }
    }

    private static List<String> asUser(boolean root, List<String> command) {
        if (!root) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("runuser", "-u", SYSTEM_USER, "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    private static void giveTo(Path dir, String user) throws IOException {
        UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
        UserPrincipal owner;
        try {
            owner = users.lookupPrincipalByName(user);
        }
        catch (IOException ex) {
            throw new IOException("running as root, PostgreSQL needs the system user '" + user + "' that Debian's"
                    + " postgresql package creates; there is none", ex);
        }
        PosixFileAttributeView view = Files.getFileAttributeView(dir, PosixFileAttributeView.class);
        view.setOwner(owner);
        GroupPrincipal group = users.lookupPrincipalByGroupName(user);
        view.setGroup(group);
    }

    private static void run(List<String> command, Path log, int timeoutSeconds) throws IOException,
            InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s: "
                    + tail(log));
        }
        if (process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + process.exitValue() + ": "
                    + tail(log));
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        }
        catch (IOException ex) {
            return "(no log at " + log + ")";
        }
    }

    private static void deleteRecursively(Path path) {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                }
                catch (IOException ignored) {
                    // best effort
                }
            });
        }
        catch (IOException | RuntimeException ignored) {
            // best effort
        }
    }

    private static void log(String message) {
        System.err.println(LOG_PREFIX + message);
    }
}
