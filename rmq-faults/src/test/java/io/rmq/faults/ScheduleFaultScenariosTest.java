package io.rmq.faults;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.rmq.faults.schedule.ScheduleFaultApp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Periodic messages ({@code @RmqScheduled}, docs/scheduling.md) across separate JVMs and their faults, on one
 * standalone Redis. Three application JVMs ({@link ScheduleFaultApp}) run the same schedules; each run of a firing
 * prints {@code RUN} when it starts and {@code FIRED} when it ends, flushed to its log before it goes on (so a kill -9
 * loses none of them). One continuous run, in three parts:
 * <ol>
 * <li><b>Three instances</b>: the 1 s schedule {@code tick} fires at least 20 times while all three run; each firing
 * time from the first seen to the last runs exactly once (no duplicate, no gap).</li>
 * <li><b>Faults</b>: the instance in the middle of a {@code tick} run (each lasts
 * {@value ScheduleFaultApp#TICK_RUN_MILLIS} ms) is frozen with SIGSTOP for 3 s, then another one, also in the middle
 * of a run, is killed with kill -9; the two left go on for 5 s. The rule asserted is the documented at-most-once one:
 * no firing runs twice; the frozen run finishes after SIGCONT and no one else runs that firing; the killed run's
 * firing is lost (it started, never finished, and no other instance ran it); no other firing is missing, except
 * at most one per fault that the faulted instance may have taken from the queue and not yet claimed (then dropped as
 * taken after a later one).</li>
 * <li><b>All down across two firings</b>: the two left are stopped (SIGTERM, then kill -9) and a new instance starts.
 * Its start is held before its schedules start until 1.3 s after a firing time the test chooses, at least two
 * firings of the 4 s schedules {@code late-once} (fire-once) and {@code late-skip} (skip), threshold 1 s, after the
 * last one run: fire-once must run exactly that firing, late, and none before it; skip none of them; both then go on
 * with their next firings.</li>
 * </ol>
 * Figures go to {@code rmq-faults/target/schedule-results.md}.
 */
class ScheduleFaultScenariosTest extends FaultSuite {

    private static final long TICK = 1000;
    private static final long LATE_RATE = 4000;
    private static final long LATE_THRESHOLD = 1000;
    /** How long after the chosen firing the restarted instance registers: past the threshold, well before the next. */
    private static final long OPEN_AFTER = 1300;
    private static final long FREEZE_MILLIS = 3000;
    /** How far before a fault a firing the faulted instance took from the queue (and never claimed) may fall. */
    private static final long TAKEN_BEFORE_FAULT = 3000;

    /** Kept when the scenario fails: the instances' logs are the evidence. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path work;

    /** One {@code RUN} or {@code FIRED} line of an instance; {@code at}: when the run started, or ended. */
    record Event(boolean fired, String schedule, long firing, long at, long pid) {

        static Optional<Event> parse(String line) {
            String[] parts = line.split(" ");
            if (parts.length != 5 || !(parts[0].equals("RUN") || parts[0].equals("FIRED"))) {
                return Optional.empty();
            }
            return Optional.of(new Event(parts[0].equals("FIRED"), parts[1], Long.parseLong(parts[2]),
                    Long.parseLong(parts[3]), Long.parseLong(parts[4])));
        }

        @Override
        public String toString() {
            return (fired ? "FIRED " : "RUN ") + schedule + " " + Instant.ofEpochMilli(firing) + " (+"
                    + (at - firing) + " ms) pid " + pid;
        }
    }

    /** A fault done to an instance, and when. */
    record Fault(String what, long pid, long at) {
    }

    @Test
    void threeInstancesRunEachFiringOnceThroughAFreezeAKillAndAFullStop() throws Exception {
        long began = System.currentTimeMillis();
        String prefix = "sched-" + UUID.randomUUID().toString().substring(0, 8);
        System.out.println("[faults] schedules in 3 JVMs: work directory " + work);
        List<Instance> instances = new ArrayList<>();
        List<Fault> faults = new ArrayList<>();
        long allUp;
        long faultsFrom;
        Event frozenRun;
        long thawedAt;
        Event killedRun;
        long stopAt;
        long latestMissed;
        long lastBeforeDown;
        try (RedisNode redis = RedisNode.start(work, false)) {
            List<String> common = List.of("--spring.data.redis.host=" + RedisNode.HOST,
                    "--spring.data.redis.port=" + redis.port(), "--rmq.key-prefix=" + prefix);
            try {
                for (String name : List.of("a", "b", "c")) {
                    instances.add(Instance.launch(work, name, common, false));
                }
                for (Instance instance : instances) {
                    instance.awaitLine("READY");
                }
                allUp = System.currentTimeMillis();

                // 1. three instances, at least 20 firings
                awaitEvents(instances, events -> events.stream().filter(e -> !e.fired() && e.schedule().equals("tick")
                        && e.firing() > allUp).count() >= 20, Duration.ofSeconds(60), "20 firings of tick");

                // 2. a freeze, then a kill, each in the middle of a run
                faultsFrom = System.currentTimeMillis();
                frozenRun = awaitRunStarting(instances, faultsFrom, -1);
                Instance frozen = byPid(instances, frozenRun.pid());
                faults.add(new Fault("SIGSTOP " + FREEZE_MILLIS + " ms", frozen.pid(), System.currentTimeMillis()));
                frozen.freeze();
                Signals.sleep(FREEZE_MILLIS);
                // read before SIGCONT: the frozen run may end before kill returns
                thawedAt = System.currentTimeMillis();
                frozen.thaw();
                killedRun = awaitRunStarting(instances, System.currentTimeMillis(), frozen.pid());
                Instance killed = byPid(instances, killedRun.pid());
                faults.add(new Fault("kill -9", killed.pid(), System.currentTimeMillis()));
                killed.kill();
                long killedAt = faults.get(1).at();
                awaitEvents(instances, events -> events.stream().anyMatch(e -> e.schedule().equals("tick")
                        && e.firing() > killedAt + 5 * TICK), Duration.ofSeconds(30), "5 s of tick after the kill");

                // 3. every instance down across two firings of the 4 s schedules, then one starts again
                stopAt = System.currentTimeMillis();
                List<Instance> left = instances.stream().filter(Instance::isAlive).toList();
                assertThat(left).as("the instances left").hasSize(2);
                faults.add(new Fault("SIGTERM", left.get(0).pid(), System.currentTimeMillis()));
                assertThat(left.get(0).terminate()).as("a graceful stop on SIGTERM").isTrue();
                faults.add(new Fault("kill -9", left.get(1).pid(), System.currentTimeMillis()));
                left.get(1).kill();
                lastBeforeDown = events(instances).stream().filter(e -> e.schedule().startsWith("late-"))
                        .mapToLong(Event::firing).max().orElseThrow();
                Instance restarted = Instance.launch(work, "d", common, true);
                instances.add(restarted);
                restarted.awaitLine("GATE");
                // the scenario (not an assertion): the registration 1.3 s after a firing time at least two firings
                // after the last one run, the first such time that leaves those 1.3 s to wait
                long now = System.currentTimeMillis();
                latestMissed = Math.max(lastBeforeDown + 2 * LATE_RATE,
                        Math.floorDiv(now - OPEN_AFTER + LATE_RATE - 1, LATE_RATE) * LATE_RATE);
                Signals.sleep(Math.max(0, latestMissed + OPEN_AFTER - System.currentTimeMillis()));
                restarted.write("GO");
                restarted.awaitLine("READY");
                long missed = latestMissed;
                awaitEvents(instances, events -> events.stream().anyMatch(e -> e.fired()
                        && e.schedule().equals("late-once") && e.firing() == missed + LATE_RATE)
                        && events.stream().anyMatch(e -> e.fired() && e.schedule().equals("late-skip")
                        && e.firing() > missed), Duration.ofSeconds(30), "the 4 s schedules after the restart");
                faults.add(new Fault("SIGTERM", restarted.pid(), System.currentTimeMillis()));
                assertThat(restarted.terminate()).as("a graceful stop on SIGTERM").isTrue();
            }
            finally {
                instances.forEach(Instance::close);
            }
        }
        List<Event> events = events(instances);
        Set<Long> killedPids = faults.stream().filter(f -> f.what().equals("kill -9")).map(Fault::pid)
                .collect(Collectors.toSet());

        // nothing ran twice, whatever happened
        Map<String, List<Event>> runsByFiring = events.stream().filter(e -> !e.fired())
                .collect(Collectors.groupingBy(e -> e.schedule() + "@" + e.firing()));
        assertThat(runsByFiring.values()).as("each firing runs at most once").allSatisfy(runs ->
                assertThat(runs).hasSize(1));
        // every run that started ended, except on an instance killed in the middle of it
        List<Event> unfinished = events.stream().filter(e -> !e.fired() && events.stream().noneMatch(f -> f.fired()
                && f.schedule().equals(e.schedule()) && f.firing() == e.firing() && f.pid() == e.pid())).toList();
        assertThat(unfinished).as("runs that never ended").allSatisfy(e -> assertThat(killedPids).contains(e.pid()));

        // 1. three instances: every firing from the first to the last before the faults, once
        TreeSet<Long> ticks = firings(events, "tick", Long.MIN_VALUE, faultsFrom);
        assertThat(ticks.tailSet(allUp, false)).as("firings while all three ran").hasSizeGreaterThanOrEqualTo(20);
        assertThat(gaps(ticks)).as("firings missing before the faults").isEmpty();
        long runners = events.stream().filter(e -> !e.fired() && e.schedule().equals("tick")
                && e.firing() <= faultsFrom).map(Event::pid).distinct().count();

        // 2. the freeze and the kill: the frozen run finished after SIGCONT, the killed one's firing is lost
        assertThat(runsByFiring.get("tick@" + frozenRun.firing())).as("the frozen firing's runs")
                .containsExactly(frozenRun);
        long frozenEnd = events.stream().filter(e -> e.fired() && e.schedule().equals("tick")
                && e.firing() == frozenRun.firing() && e.pid() == frozenRun.pid()).findFirst().map(Event::at)
                .orElseThrow(() -> new AssertionError("the frozen run never finished: " + frozenRun));
        assertThat(frozenEnd).as("the frozen run finished after SIGCONT").isGreaterThanOrEqualTo(thawedAt);
        assertThat(unfinished).as("the run killed in its middle never finished").contains(killedRun);
        assertThat(runsByFiring.get("tick@" + killedRun.firing())).as("and no other instance ran that firing")
                .containsExactly(killedRun);
        // up to the firings just before the full stop (a later one may be in the hands of an instance being stopped)
        TreeSet<Long> throughFaults = firings(events, "tick", Long.MIN_VALUE, stopAt - TAKEN_BEFORE_FAULT);
        List<Long> missing = gaps(throughFaults);
        for (Fault fault : faults.subList(0, 2)) {
            assertThat(missing.stream().filter(g -> g > fault.at() - TAKEN_BEFORE_FAULT && g <= fault.at()).count())
                    .as("firings missing at %s of %s", fault.what(), fault.pid()).isLessThanOrEqualTo(1);
        }
        assertThat(missing).as("firings missing away from the faults %s", faults).allSatisfy(g ->
                assertThat(faults.subList(0, 2)).anyMatch(f -> g > f.at() - TAKEN_BEFORE_FAULT && g <= f.at()));

        // 3. every instance down across two firings: fire-once runs the latest once, late; skip none of them
        List<Event> once = runs(events, "late-once", lastBeforeDown, latestMissed);
        assertThat(once).as("late-once's runs of the firings after %s up to %s, missed while every instance was"
                + " down", Instant.ofEpochMilli(lastBeforeDown), Instant.ofEpochMilli(latestMissed))
                .extracting(Event::firing).containsExactly(latestMissed);
        assertThat(once.get(0).at() - latestMissed).as("it ran late: past the threshold")
                .isGreaterThan(LATE_THRESHOLD);
        assertThat(runs(events, "late-skip", lastBeforeDown, latestMissed)).as("late-skip's runs of the missed"
                + " firings").isEmpty();
        for (Instance instance : instances) {
            assertThat(instance.errors()).as("ERROR lines of instance %s", instance.name()).isEmpty();
            assertThat(instance.warningsUntilReady()).as("WARN lines of instance %s's start", instance.name())
                    .isEmpty();
        }

        for (Fault fault : faults) {
            System.out.println("[faults] schedules: " + fault.what() + " of pid " + fault.pid() + " at "
                    + Instant.ofEpochMilli(fault.at()));
        }
        System.out.println("[faults] schedules: frozen in the middle of " + frozenRun + " (ended "
                + (frozenEnd - thawedAt) + " ms after SIGCONT); killed in the middle of "
                + killedRun + "; runs that never ended: " + unfinished + "; tick firings missing through the faults: "
                + missing.stream().map(Instant::ofEpochMilli).toList() + "; fire-once after all down: "
                + once.get(0));
        long seconds = Math.round((System.currentTimeMillis() - began) / 1000.0);
        long lost = unfinished.stream().filter(e -> e.schedule().equals("tick")).count();
        result("| 3 JVMs, standalone | " + ticks.tailSet(allUp, false).size() + " | " + runners + " | "
                + throughFaults.size() + " | " + missing.size() + " | " + lost + " | 0 | "
                + Instant.ofEpochMilli(latestMissed) + " ran +" + (once.get(0).at() - latestMissed) + " ms | 0 | "
                + seconds + " s |");
    }

    private static Instance byPid(List<Instance> instances, long pid) {
        return instances.stream().filter(i -> i.pid() == pid).findFirst().orElseThrow();
    }

    /** The firing times of a schedule that started a run, in {@code (after, upTo]}. */
    private static TreeSet<Long> firings(List<Event> events, String schedule, long after, long upTo) {
        return events.stream().filter(e -> !e.fired() && e.schedule().equals(schedule) && e.firing() > after
                && e.firing() <= upTo).map(Event::firing).collect(Collectors.toCollection(TreeSet::new));
    }

    /** The runs of a schedule's firings in {@code (after, upTo]}. */
    private static List<Event> runs(List<Event> events, String schedule, long after, long upTo) {
        return events.stream().filter(e -> !e.fired() && e.schedule().equals(schedule) && e.firing() > after
                && e.firing() <= upTo).sorted(Comparator.comparingLong(Event::firing)).toList();
    }

    /** The 1 s firing times missing between the first and the last of {@code firings}. */
    private static List<Long> gaps(TreeSet<Long> firings) {
        List<Long> gaps = new ArrayList<>();
        if (firings.isEmpty()) {
            return gaps;
        }
        for (long t = firings.first(); t <= firings.last(); t += TICK) {
            if (!firings.contains(t)) {
                gaps.add(t);
            }
        }
        return gaps;
    }

    private static List<Event> events(List<Instance> instances) throws IOException {
        List<Event> events = new ArrayList<>();
        for (Instance instance : instances) {
            events.addAll(instance.events());
        }
        return events;
    }

    private static void awaitEvents(List<Instance> instances, Predicate<List<Event>> condition, Duration atMost,
            String what) throws IOException {
        long deadline = System.currentTimeMillis() + atMost.toMillis();
        while (!condition.test(events(instances))) {
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError("no " + what + " within " + atMost.toSeconds() + " s: "
                        + events(instances).stream().filter(e -> !e.fired())
                        .sorted(Comparator.comparingLong(Event::firing)).toList());
            }
            Signals.sleep(50);
        }
    }

    /**
     * The first run of {@code tick} that starts after {@code from} on a live instance other than {@code notPid}, seen
     * while it still runs (polled every 10 ms; a run lasts {@value ScheduleFaultApp#TICK_RUN_MILLIS} ms).
     */
    private static Event awaitRunStarting(List<Instance> instances, long from, long notPid) throws IOException {
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            for (Instance instance : instances) {
                if (instance.pid() == notPid || !instance.isAlive()) {
                    continue;
                }
                Optional<Event> run = instance.events().stream().filter(e -> !e.fired()
                        && e.schedule().equals("tick") && e.at() >= from).findFirst();
                if (run.isPresent()) {
                    return run.get();
                }
            }
            Signals.sleep(10);
        }
        throw new AssertionError("no run of tick started within 20 s");
    }

    private static void result(String row) throws IOException {
        Path results = Path.of(System.getProperty("rmq.faults.results", "target/reliability-results.md"))
                .toAbsolutePath().resolveSibling("schedule-results.md");
        Files.createDirectories(results.getParent());
        if (!Files.exists(results)) {
            Files.writeString(results, "| run | tick firings, 3 up | instances that ran them | tick firings through"
                    + " the faults | missing besides the killed run | killed mid-run (lost) | duplicates |"
                    + " fire-once after all down | skip after all down | time |\n| --- | ---: | ---: | ---: | ---: |"
                    + " ---: | ---: | --- | ---: | ---: |\n");
        }
        Files.writeString(results, row + "\n", StandardOpenOption.APPEND);
        System.out.println("[faults] " + row);
    }

    /** A {@link ScheduleFaultApp} JVM; its output goes to {@code <name>.log} in the work directory. */
    private static final class Instance implements AutoCloseable {

        private final String name;
        private final Process process;
        private final Path log;

        private Instance(String name, Process process, Path log) {
            this.name = name;
            this.process = process;
            this.log = log;
        }

        static Instance launch(Path workDir, String name, List<String> common, boolean gate) throws IOException {
            Path log = workDir.resolve(name + ".log");
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), ScheduleFaultApp.class.getName()));
            command.addAll(common);
            command.add("--faults.schedule.gate=" + gate);
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            return new Instance(name, process, log);
        }

        String name() {
            return name;
        }

        long pid() {
            return process.pid();
        }

        boolean isAlive() {
            return process.isAlive();
        }

        /** Waits (up to 90 s: a Spring Boot start on a busy machine) until a line is exactly {@code line}. */
        void awaitLine(String line) throws IOException {
            long deadline = System.currentTimeMillis() + 90_000;
            while (!Files.exists(log) || !completeLines().contains(line)) {
                if (!process.isAlive()) {
                    throw new IOException("instance " + name + " exited early: " + Signals.tail(log, 40));
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IOException("no '" + line + "' from instance " + name + " within 90 s: "
                            + Signals.tail(log, 40));
                }
                Signals.sleep(20);
            }
        }

        List<Event> events() throws IOException {
            if (!Files.exists(log)) {
                return List.of();
            }
            return completeLines().stream().map(Event::parse).flatMap(Optional::stream).toList();
        }

        List<String> errors() throws IOException {
            return completeLines().stream().filter(line -> line.contains(" ERROR ")).toList();
        }

        /** WARN and ERROR lines logged before {@code READY}: a start without faults has none. */
        List<String> warningsUntilReady() throws IOException {
            List<String> lines = completeLines();
            int ready = lines.indexOf("READY");
            return lines.subList(0, ready < 0 ? lines.size() : ready).stream()
                    .filter(line -> line.contains(" WARN ") || line.contains(" ERROR ")).toList();
        }

        /** The log's lines, without a last one still being written. */
        private List<String> completeLines() throws IOException {
            String text = Files.readString(log);
            return text.substring(0, text.lastIndexOf('\n') + 1).lines().toList();
        }

        void write(String line) throws IOException {
            OutputStream stdin = process.getOutputStream();
            stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        void freeze() throws IOException, InterruptedException {
            Signals.send(process.pid(), "STOP");
        }

        void thaw() throws IOException, InterruptedException {
            Signals.send(process.pid(), "CONT");
        }

        /** kill -9: no shutdown of any kind. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }

        /** SIGTERM: Spring Boot's shutdown hook closes the context; waits up to 30 s. */
        boolean terminate() throws InterruptedException {
            process.destroy();
            return process.waitFor(30, TimeUnit.SECONDS);
        }

        @Override
        public void close() {
            Signals.destroy(process);
        }
    }
}
