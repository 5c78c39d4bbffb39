package io.rmq.samples;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The sample application in a JVM of its own, as {@code spring-boot:run} starts it: its main class with the
 * module's class path less the test classes and test-jars (whose {@code logback-test.xml} would replace the sample's
 * logging), no {@code spring.data.redis.*} (so it starts its embedded Redis), its output in a file.
 */
final class SampleJvm implements AutoCloseable {

    /** Logged by the sample once the scenario is over and it keeps running. */
    static final String RUNNING = "Stop with Ctrl-C.";

    private final Process process;
    private final Path log;

    private SampleJvm(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /**
     * @param inOwnProcessGroup start it through {@code setsid}, so that it leads a process group of its own that a
     *                          test can signal as a terminal signals its foreground group on Ctrl-C
     */
    static SampleJvm start(Path dir, boolean inOwnProcessGroup, String... args) throws IOException {
        Path log = dir.resolve("sample.log");
        List<String> command = new ArrayList<>();
        if (inOwnProcessGroup) {
            command.add("setsid"); // a child of this JVM leads no group, so setsid runs java in place: same pid
        }
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m", "-XX:TieredStopAtLevel=1", "-cp", applicationClassPath(),
                RmqSamplesApplication.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("SPRING_"));
        return new SampleJvm(builder.start(), log);
    }

    private static String applicationClassPath() {
        List<String> kept = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String normalized = entry.replace('\\', '/');
            if (!normalized.endsWith("/test-classes") && !normalized.endsWith("/test-classes/")
                    && !normalized.endsWith("-tests.jar")) {
                kept.add(entry);
            }
        }
        return String.join(File.pathSeparator, kept);
    }

    Process process() {
        return process;
    }

    List<String> lines() throws IOException {
        return Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
    }

    /** Waits until a line contains {@code text}; fails with the log's tail if the JVM exits or the time runs out. */
    void awaitLine(String text, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (lines().stream().anyMatch(line -> line.contains(text))) {
                return;
            }
            if (!process.isAlive()) {
                throw new AssertionError("The sample exited (" + process.exitValue() + ") before logging '" + text
                        + "':\n" + tail());
            }
            Thread.sleep(200);
        }
        throw new AssertionError("The sample did not log '" + text + "' within " + timeout + ":\n" + tail());
    }

    /** The exit code, once the JVM has exited within {@code timeout}. */
    int awaitExit(Duration timeout) throws IOException, InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("The sample did not exit within " + timeout + ":\n" + tail());
        }
        return process.exitValue();
    }

    String tail() throws IOException {
        List<String> lines = lines();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }

    /** Kills what a failed test left running, its embedded Redis (a child process) included. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
