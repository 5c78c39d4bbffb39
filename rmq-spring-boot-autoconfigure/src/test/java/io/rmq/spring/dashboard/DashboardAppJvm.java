package io.rmq.spring.dashboard;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.rmq.spring.operations.OpsTestApplication;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link OpsTestApplication} with its dashboard in a JVM of its own (another application instance on the same Redis),
 * for browser tests of a fleet: started with this JVM's class path (Surefire's manifest-only jar carries it) and the
 * given properties as command-line arguments, on a free port it logs; its output in a file. The test thread owns it.
 */
final class DashboardAppJvm implements AutoCloseable {

    /** Printed by {@link Main} once the application serves (its log level may hide the web server's line). */
    private static final Pattern PORT = Pattern.compile("^RMQ-DASHBOARD-PORT=(\\d+)$");

    private final Process process;
    private final Path log;
    private int port;

    private DashboardAppJvm(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts the application with these properties (Redis, key prefix, dashboard, topics) and waits for its port. */
    static DashboardAppJvm start(Path dir, Map<String, String> properties, Duration timeout)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path log = dir.resolve("instance.log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "--server.port=0"));
        properties.forEach((name, value) -> command.add("--" + name + "=" + value));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("SPRING_"));
        DashboardAppJvm jvm = new DashboardAppJvm(builder.start(), log);
        jvm.port = jvm.awaitPort(timeout);
        return jvm;
    }

    /** The dashboard's page of this instance. */
    String url(String pathAndFragment) {
        return "http://localhost:" + port + pathAndFragment;
    }

    long pid() {
        return process.pid();
    }

    private int awaitPort(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (String line : lines()) {
                Matcher m = PORT.matcher(line);
                if (m.find()) {
                    return Integer.parseInt(m.group(1));
                }
            }
            if (!process.isAlive()) {
                throw new AssertionError("The instance exited (" + process.exitValue() + ") before serving:\n"
                        + tail());
            }
            Thread.sleep(200);
        }
        throw new AssertionError("The instance did not serve within " + timeout + ":\n" + tail());
    }

    private List<String> lines() throws IOException {
        return Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
    }

    String tail() throws IOException {
        List<String> lines = lines();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }

    /** Stops it as a deployment would (SIGTERM: RMQ leaves cleanly), forcibly after 30 s. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** The other JVM's entry point. */
    public static final class Main {

        private Main() {
        }

        public static void main(String[] args) {
            ConfigurableApplicationContext context = SpringApplication.run(OpsTestApplication.class, args);
            int port = ((WebServerApplicationContext) context).getWebServer().getPort();
            System.out.println("RMQ-DASHBOARD-PORT=" + port);
        }
    }
}
