package io.rmq.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A consumer JVM of the fault suite ({@link ConsumerMain}) that the scenario can kill -9, freeze and thaw. */
final class ConsumerProcess implements AutoCloseable {

    private final Process process;
    private final Path record;
    private final Path log;

    private ConsumerProcess(Process process, Path record, Path log) {
        this.process = process;
        this.record = record;
        this.log = log;
    }

    /** Starts a consumer with the given options ({@code --name value}) and waits until it consumes. */
    static ConsumerProcess start(Path workDir, String name, Map<String, String> options) throws IOException {
        Path record = workDir.resolve(name + ".records");
        Path log = workDir.resolve(name + ".log");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), ConsumerMain.class.getName(),
                "--record", record.toString()));
        options.forEach((key, value) -> {
            command.add("--" + key);
            command.add(value);
        });
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        ConsumerProcess consumer = new ConsumerProcess(process, record, log);
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains("READY")) {
                return consumer;
            }
            if (!process.isAlive()) {
                throw new IOException("consumer " + name + " exited before it was ready: " + consumer.logTail());
            }
            Signals.sleep(20);
        }
        process.destroyForcibly();
        throw new IOException("consumer " + name + " was not ready within 60 s: " + consumer.logTail());
    }

    Path record() {
        return record;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** kill -9: no shutdown of any kind; its leases expire and its messages are redelivered elsewhere. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    void freeze() throws IOException, InterruptedException {
        Signals.send(process.pid(), "STOP");
    }

    void thaw() throws IOException, InterruptedException {
        Signals.send(process.pid(), "CONT");
    }

    /** Graceful stop (STOP on stdin), waiting up to {@code seconds}. */
    boolean stop(int seconds) throws IOException, InterruptedException {
        if (!process.isAlive()) {
            return false;
        }
        OutputStream stdin = process.getOutputStream();
        stdin.write("STOP\n".getBytes(StandardCharsets.UTF_8));
        stdin.flush();
        return process.waitFor(seconds, TimeUnit.SECONDS);
    }

    /** ERROR lines the consumer logged (a watchdog report would be one). */
    List<String> errors() throws IOException {
        List<String> out = new ArrayList<>();
        if (Files.exists(log)) {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(Files.newInputStream(log),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    if (line.contains(" ERROR ")) {
                        out.add(line);
                    }
                }
            }
        }
        return out;
    }

    /** The consumer's whole log so far. */
    String log() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "";
    }

    String logTail() {
        return Signals.tail(log, 30);
    }

    @Override
    public void close() {
        Signals.destroy(process);
    }
}
