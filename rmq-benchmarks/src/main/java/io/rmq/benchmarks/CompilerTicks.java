package io.rmq.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The CPU the JIT compiler threads of some processes used over a measured phase, from {@code /proc/<pid>/task/*}
 * (Linux): what a consumer JVM spends compiling after GO is paid once per process, so the scaling table shows it beside
 * the processes' whole CPU instead of letting it read as CPU per message. HotSpot starts and ends compiler threads as
 * its queue grows and shrinks, so a start and an end snapshot would miss a thread that came and went in between:
 * {@link #sample} is called every few hundred ms during the phase, and a thread that ends between two samples loses
 * at most that interval. Threads: the orchestrator's measuring thread only.
 */
final class CompilerTicks {

    /** A thread's ticks when first seen in the phase (0 for one started after it began) and when last seen. */
    private record Seen(long first, long last) {
    }

    private final List<Long> pids;
    private final Map<String, Seen> compilerThreads = new HashMap<>();
    private boolean readable = true;

    /** Starts the phase: every compiler thread alive now counts from its ticks now. */
    CompilerTicks(List<Long> pids) {
        this.pids = List.copyOf(pids);
        read(true);
    }

    /** Takes in the compiler threads' ticks now (threads new since the last sample count from 0). */
    void sample() {
        read(false);
    }

    /** Clock ticks the compiler threads used since the start, as of the last sample; -1 where /proc was unreadable. */
    long ticks() {
        if (!readable) {
            return -1;
        }
        return compilerThreads.values().stream().mapToLong(s -> s.last() - s.first()).sum();
    }

    /** utime + stime, in clock ticks, of a {@code /proc/<pid>/stat} or {@code /proc/<pid>/task/<tid>/stat} line. */
    static long ticks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15: utime, stime
    }

    private void read(boolean atStart) {
        for (long pid : pids) {
            Path tasks = Path.of("/proc", Long.toString(pid), "task");
            try (Stream<Path> threads = Files.list(tasks)) {
                for (Path task : threads.toList()) {
                    readThread(pid, task, atStart);
                }
            }
            catch (IOException | RuntimeException ex) {
                if (atStart) {
                    readable = false; // no /proc: not Linux, or the process is gone before GO
                }
            }
        }
    }

    private void readThread(long pid, Path task, boolean atStart) {
        String stat;
        try {
            stat = Files.readString(task.resolve("stat"));
        }
        catch (IOException ex) {
            return; // the thread ended meanwhile
        }
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        String name = stat.substring(open + 1, close); // truncated to 15 characters: "C2 CompilerThre"
        if (!name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre")) {
            return;
        }
        long ticks = ticks(stat);
        String key = pid + "/" + task.getFileName();
        Seen seen = compilerThreads.get(key);
        compilerThreads.put(key, seen == null ? new Seen(atStart ? ticks : 0, ticks) : new Seen(seen.first(), ticks));
    }
}
