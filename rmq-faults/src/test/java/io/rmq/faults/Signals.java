package io.rmq.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What the fault suite does to its child processes (Redis servers, consumer JVMs), and reading their logs. */
final class Signals {

    private Signals() {
    }

    /** {@code kill -<signal> <pid>}: STOP freezes a process, CONT thaws it (the JDK can only send TERM and KILL). */
    static void send(long pid, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + signal + " " + pid + " failed");
        }
    }

    /** Ends a child process whatever its state (a frozen one is thawed first: it would not die while stopped). */
    static void destroy(Process process) {
        if (process != null && process.isAlive()) {
            try {
                send(process.pid(), "CONT");
            }
            catch (IOException | InterruptedException ignored) {
                // killing it anyway
            }
            process.destroyForcibly();
        }
    }

    /** The last {@code lines} lines of a log file, for failure messages. */
    static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        }
        catch (IOException ex) {
            return "(no log: " + ex + ")";
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
