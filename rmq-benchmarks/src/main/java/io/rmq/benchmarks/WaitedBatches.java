package io.rmq.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
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
 * on what else runs on the machine than the rate does, so it is the figure to compare on a shared machine. On a
 * Redis Cluster ({@code --cluster h:p,..}, every master named) Redis's figures are summed over the nodes named.
 */
final class WaitedBatches {

    private WaitedBatches() {
    }

    /** The peer's Redis nodes: those of {@code --cluster h:p,..}, else {@code --host}/{@code --port}. */
    static List<RedisURI> nodes(PeerArgs args) {
        String cluster = args.option("cluster", "");
        if (cluster.isEmpty()) {
            return List.of(RedisURI.create(args.host(), args.port()));
        }
        List<RedisURI> nodes = new ArrayList<>();
        for (String node : cluster.split(",")) {
            int colon = node.lastIndexOf(':');
            nodes.add(RedisURI.create(node.substring(0, colon), Integer.parseInt(node.substring(colon + 1))));
        }
        return nodes;
    }

    /**
     * Runs {@code produce} (returns its elapsed nanos) between two readings; the RESULT fields. Redis's readings are
     * summed over {@code nodes}.
     */
    static String measure(List<RedisURI> nodes, int messages, LongSupplier produce) {
        RedisClient client = RedisClient.create();
        List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
        try {
            List<RedisCommands<String, String>> redis = new ArrayList<>();
            for (RedisURI node : nodes) {
                StatefulRedisConnection<String, String> connection = client.connect(node);
                connections.add(connection);
                redis.add(connection.sync());
            }
            com.sun.management.OperatingSystemMXBean os =
                    (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            Map<String, long[]> statsBefore = commandStats(redis);
            double[] redisBefore = redisCpuSeconds(redis);
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
            double[] redisAfter = redisCpuSeconds(redis);
            double redisSeconds = 0;
            double busiest = 0;
            for (int i = 0; i < redisAfter.length; i++) {
                redisSeconds += redisAfter[i] - redisBefore[i];
                busiest = Math.max(busiest, redisAfter[i] - redisBefore[i]);
            }
            Map<String, long[]> statsAfter = commandStats(redis);
            statsAfter.forEach((command, after) -> {
                long[] before = statsBefore.getOrDefault(command, new long[2]);
                long calls = after[0] - before[0];
                if (calls > 1) {
                    System.err.printf(Locale.ROOT, "produce-waited: %-10s %8d calls, %.3f per 1,000 msgs, %.3f us/msg%n",
                            command, calls, calls * 1000.0 / messages, (after[1] - before[1]) / (double) messages);
                }
            });
            // busiestRedisUsPerMsg: the master that worked most (of a cluster; standalone: the one server)
            return String.format(Locale.ROOT, "{\"rate\":%.1f,\"count\":%d,\"redisUsPerMsg\":%.3f,\"clientUsPerMsg\":%.3f,"
                    + "\"callerUsPerMsg\":%.3f,\"ioUsPerMsg\":%.3f,\"callerBytesPerMsg\":%d,\"busiestRedisUsPerMsg\":%.3f}",
                    messages / (elapsed / 1e9), messages, redisSeconds * 1e6 / messages, processNanos / 1e3 / messages,
                    callerNanos / 1e3 / messages, ioNanos / 1e3 / messages, allocated / messages,
                    busiest * 1e6 / messages);
        }
        finally {
            connections.forEach(StatefulRedisConnection::close);
            client.shutdown();
        }
    }

    private static double[] redisCpuSeconds(List<RedisCommands<String, String>> redis) {
        double[] seconds = new double[redis.size()];
        for (int i = 0; i < seconds.length; i++) {
            seconds[i] = redisCpuSeconds(redis.get(i).info("cpu"));
        }
        return seconds;
    }

    /** {@link #commandStats(String)} summed over the nodes. */
    private static Map<String, long[]> commandStats(List<RedisCommands<String, String>> redis) {
        Map<String, long[]> sum = new LinkedHashMap<>();
        for (RedisCommands<String, String> node : redis) {
            commandStats(node.info("commandstats")).forEach((command, stats) -> {
                long[] total = sum.computeIfAbsent(command, c -> new long[2]);
                total[0] += stats[0];
                total[1] += stats[1];
            });
        }
        return sum;
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
