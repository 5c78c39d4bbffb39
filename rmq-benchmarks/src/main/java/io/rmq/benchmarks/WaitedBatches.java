package io.rmq.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The cost side of the {@code produce-waited} workload (PROTOCOL.md): besides the rate, what one message cost in
 * Redis CPU ({@code INFO cpu}, all of the server's threads) and in this process's CPU (every thread: caller, event
 * loop, JIT, GC; the calling thread's and Lettuce's event-loop threads' also apart, and the calling thread's
 * allocation), and Redis's {@code INFO commandstats} deltas per command (logged). CPU per message depends much less
 * on what else runs on the machine than the rate does, so it is the figure to compare on a shared machine.
 */
final class WaitedBatches {

    private WaitedBatches() {
    }

    /** Runs {@code produce} (returns its elapsed nanos) between two readings; the RESULT fields. */
    static String measure(String host, int port, int messages, LongSupplier produce) {
        RedisClient client = RedisClient.create(RedisURI.create(host, port));
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            RedisCommands<String, String> redis = connection.sync();
            com.sun.management.OperatingSystemMXBean os =
                    (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            Map<String, long[]> statsBefore = commandStats(redis.info("commandstats"));
            double redisBefore = redisCpuSeconds(redis.info("cpu"));
            java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            Map<Long, Long> ioBefore = ioThreadCpu(threads);
            long processBefore = os.getProcessCpuTime();
            com.sun.management.ThreadMXBean allocation = (com.sun.management.ThreadMXBean) threads;
            long callerBefore = threads.getCurrentThreadCpuTime();
            long allocatedBefore = allocation.getCurrentThreadAllocatedBytes();
            RmqPeer.measuring();
            long elapsed = produce.getAsLong();
            long callerNanos = threads.getCurrentThreadCpuTime() - callerBefore;
            long allocated = allocation.getCurrentThreadAllocatedBytes() - allocatedBefore;
            long processNanos = os.getProcessCpuTime() - processBefore;
            long ioNanos = 0;
            for (Map.Entry<Long, Long> after : ioThreadCpu(threads).entrySet()) {
                ioNanos += after.getValue() - ioBefore.getOrDefault(after.getKey(), 0L);
            }
            double redisSeconds = redisCpuSeconds(redis.info("cpu")) - redisBefore;
            Map<String, long[]> statsAfter = commandStats(redis.info("commandstats"));
            statsAfter.forEach((command, after) -> {
                long[] before = statsBefore.getOrDefault(command, new long[2]);
                long calls = after[0] - before[0];
                if (calls > 1) {
                    System.err.printf(Locale.ROOT, "produce-waited: %-10s %8d calls, %.3f per 1,000 msgs, %.3f us/msg%n",
                            command, calls, calls * 1000.0 / messages, (after[1] - before[1]) / (double) messages);
                }
            });
            return String.format(Locale.ROOT, "{\"rate\":%.1f,\"count\":%d,\"redisUsPerMsg\":%.3f,\"clientUsPerMsg\":%.3f,"
                    + "\"callerUsPerMsg\":%.3f,\"ioUsPerMsg\":%.3f,\"callerBytesPerMsg\":%d}",
                    messages / (elapsed / 1e9), messages, redisSeconds * 1e6 / messages, processNanos / 1e3 / messages,
                    callerNanos / 1e3 / messages, ioNanos / 1e3 / messages, allocated / messages);
        }
        finally {
            client.shutdown();
        }
    }

    /** CPU time of Lettuce's event-loop threads (reading and writing the connection), by thread id. */
    private static Map<Long, Long> ioThreadCpu(java.lang.management.ThreadMXBean threads) {
        Map<Long, Long> cpu = new LinkedHashMap<>();
        for (java.lang.management.ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("lettuce-")) {
                cpu.put(info.getThreadId(), threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return cpu;
    }

    /** used_cpu_sys + used_cpu_user of an {@code INFO cpu} reply, in seconds (one INFO call per reading). */
    static double redisCpuSeconds(String info) {
        double seconds = 0;
        for (String line : info.split("\\r?\\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return seconds;
    }

    /** {@code cmdstat_zadd:calls=3,usec=40,...} → zadd → [calls, usec]. */
    private static Map<String, long[]> commandStats(String info) {
        Map<String, long[]> stats = new LinkedHashMap<>();
        for (String line : info.split("\\r?\\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String command = line.substring(8, line.indexOf(':'));
            long calls = 0;
            long usec = 0;
            for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                String[] kv = field.split("=");
                if (kv[0].equals("calls")) {
                    calls = Long.parseLong(kv[1].trim());
                }
                else if (kv[0].equals("usec")) {
                    usec = Long.parseLong(kv[1].trim());
                }
            }
            stats.put(command, new long[] {calls, usec});
        }
        return stats;
    }
}
