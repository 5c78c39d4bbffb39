package io.rmq.samples;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The sample, run as a user runs it (its own JVM, its embedded Redis, live traffic on), stops cleanly: on SIGTERM,
 * and on a Ctrl-C, which a terminal sends to its whole foreground process group (the JVM and, unless it left the
 * group, the embedded {@code redis-server} it started). Its listeners stop and hand back before the embedded Redis
 * stops, nothing is logged at WARN or ERROR on the way out, and it exits with its exit code (0: every story of the
 * scenario ended as expected) rather than the JVM's 128 + signal.
 */
class SampleStopsCleanlyTest {

    private static final Duration SCENARIO = Duration.ofMinutes(4);
    private static final Duration STOP = Duration.ofSeconds(60);

    // the sample's own properties (samples.*)
    private static final String[] ARGS = {"--server.port=0", "--samples.exit-when-done=false",
            "--samples.live-traffic=true"};

    @Test
    void sigtermStopsTheListenersBeforeTheEmbeddedRedisAndExitsWithZero(@TempDir Path dir) throws Exception {
        try (SampleJvm sample = SampleJvm.start(dir, false, ARGS)) {
            sample.awaitLine(SampleJvm.RUNNING, SCENARIO);
            int before = sample.lines().size();
            sample.process().destroy(); // SIGTERM
            assertStoppedCleanly(sample, before);
        }
    }

    @Test
    void ctrlCOnTheProcessGroupStopsTheListenersBeforeTheEmbeddedRedisAndExitsWithZero(@TempDir Path dir)
            throws Exception {
        assumeTrue(onPath("setsid") && onPath("kill"), "needs setsid and kill (util-linux, procps) to make and"
                + " signal a process group; the SIGTERM test runs everywhere");
        // a build started in the background by a shell without job control ("cmd &" in a script) inherits SIGINT
        // ignored, and so does every JVM it starts: no Ctrl-C could reach the sample, whatever the sample does
        assumeTrue(!sigintIgnoredHere(), "SIGINT is ignored in this process (inherited from a shell that started the"
                + " build in the background); run the build in the foreground to test Ctrl-C");
        try (SampleJvm sample = SampleJvm.start(dir, true, ARGS)) {
            sample.awaitLine(SampleJvm.RUNNING, SCENARIO);
            int before = sample.lines().size();
            long group = sample.process().pid(); // setsid made the JVM its group's leader
            Process kill = new ProcessBuilder("kill", "-INT", "--", "-" + group).redirectErrorStream(true).start();
            assertThat(kill.waitFor()).as("kill -INT -%d", group).isZero();
            assertStoppedCleanly(sample, before);
        }
    }

    private static void assertStoppedCleanly(SampleJvm sample, int linesBeforeTheSignal) throws Exception {
        int exit = sample.awaitExit(STOP);
        List<String> lines = sample.lines();
        String log = String.join("\n", lines);
        assertThat(exit).as("exit code; the log:\n%s", sample.tail()).isZero();

        List<String> shutdown = lines.subList(Math.min(linesBeforeTheSignal, lines.size()), lines.size());
        int listenersStopped = indexOf(shutdown, "RMQ stopped ");
        int redisStopped = indexOf(shutdown, "Redis: stopped the embedded Redis");
        assertThat(listenersStopped).as("RMQ's stop line after the signal:\n%s", log).isNotNegative();
        assertThat(redisStopped).as("the embedded Redis's stop line after the signal:\n%s", log).isNotNegative();
        assertThat(listenersStopped).as("the listeners stop before the embedded Redis:\n%s", log)
                .isLessThan(redisStopped);
        assertThat(shutdown.get(listenersStopped)).as("everything handed back in time")
                .contains("ORDERLY slot(s) released").contains("still running after the shutdown timeout: nothing");
        // the level is printed only when it is not INFO ("WARN: ...", "ERROR: ..."); the live traffic's order of
        // another shop, refused on purpose, is the one warning that may come while the listeners still run
        assertThat(shutdown).as("nothing at WARN or ERROR while stopping")
                .filteredOn(line -> !line.contains("does not exist in this shop"))
                .noneMatch(line -> line.contains("WARN") || line.contains("ERROR"))
                .noneMatch(line -> line.contains("could not release slot"));
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether this process ignores SIGINT (Linux: bit 2 of SigIgn in /proc/self/status); false where unknown. */
    private static boolean sigintIgnoredHere() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("SigIgn:")) {
                    return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 1)) != 0;
                }
            }
        }
        catch (java.io.IOException | RuntimeException unknown) {
            // not Linux, or unreadable: try the signal
        }
        return false;
    }

    private static boolean onPath(String name) {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                if (new File(dir, name).canExecute()) {
                    return true;
                }
            }
        }
        return false;
    }
}
