package io.rmq.benchmarks.peers.redisson;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.redisson.Redisson;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Benchmark peer for Redisson (see rmq-benchmarks/PROTOCOL.md).
 *
 * <pre>
 * java -jar redisson-peer.jar &lt;workload&gt; --host H --port P [--messages N] [--concurrency C] [--seconds S]
 *                             [--warmup-seconds W] [--chunk K]
 * </pre>
 *
 * Queue: {@code RBlockingQueue<String>} with {@link StringCodec} (bodies are the JSON strings, stored verbatim as one
 * Redis list). Delayed delivery: {@code RDelayedQueue} in front of that same blocking queue (Redisson keeps the delayed
 * entries in a sorted set and moves due ones to the list with a client-side transfer task).
 * {@code --chunk K} (not part of the protocol) splits {@code addAll} into calls of K messages; default: one call.
 * {@code --warmup-seconds W} (default 0): a JIT warm-up on separate keys before the measured phase, see {@link #warmUp}.
 * {@code --cluster h:p,h:p,..}: a Redis Cluster (every master named) instead of the server at {@code --host}/{@code
 * --port}; the queue, one list, lives on the master of its key's hash slot; Redis CPU is summed over the nodes named.
 */
public final class RedissonPeer {

    /** Process-independent names: {@code consume} reads what {@code produce-batch} left in the previous process. */
    static final String QUEUE = "bench:redisson:queue";
    /** The warm-up queue (and, for {@code delay}, its delayed front): {@code QUEUE + "-warmup"}, deleted afterwards. */
    static final String WARMUP_QUEUE = QUEUE + "-warmup";
    /** Messages per bulk and per one-at-a-time phase of a W1 warm-up round (PROTOCOL.md). */
    static final int WARMUP_ROUND = 1_000;
    /** The workloads with a warm-up ({@code fill} and {@code idle} never have one). */
    static final List<String> WARMED_UP = List.of("produce-batch", "produce-waited", "produce-sync", "produce-single", "consume", "produce-consume", "delay");

    private static final String FILLER =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

    private final String workload;
    private final String host;
    private final int port;
    private final Integer messagesArg;
    private final int concurrency;
    private final Integer secondsArg;
    private final int chunk;
    private final int warmupSeconds;
    /** {@code --cluster}: the cluster's nodes as host:port; empty for the standalone server. */
    private final List<String> cluster;

    private RedissonClient redisson;
    private volatile boolean stopping;

    private RedissonPeer(String[] args) {
        if (args.length < 1) {
            throw new IllegalArgumentException(
                    "usage: <workload> --host H --port P [--messages N] [--concurrency C] [--seconds S] [--warmup-seconds W] [--chunk K]");
        }
        workload = args[0];
        String h = "127.0.0.1";
        int p = 6379;
        Integer n = null;
        int c = 8;
        Integer s = null;
        int k = 0;
        int w = 0;
        String nodes = "";
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value for " + a);
            }
            String v = args[++i];
            switch (a) {
                case "--host" -> h = v;
                case "--port" -> p = Integer.parseInt(v);
                case "--messages" -> n = Integer.parseInt(v);
                case "--concurrency" -> c = Integer.parseInt(v);
                case "--seconds" -> s = Integer.parseInt(v);
                case "--chunk", "--batch", "--threads" -> k = Integer.parseInt(v);
                case "--warmup-seconds" -> w = Integer.parseInt(v);
                case "--cluster" -> nodes = v;
                default -> log("ignoring unknown option " + a + " " + v);
            }
        }
        host = h;
        port = p;
        messagesArg = n;
        concurrency = Math.max(1, c);
        secondsArg = s;
        chunk = k;
        warmupSeconds = Math.max(0, w);
        cluster = nodes.isEmpty() ? List.of() : List.of(nodes.split(","));
    }

    public static void main(String[] args) {
        int rc = 0;
        RedissonPeer peer = null;
        try {
            peer = new RedissonPeer(args);
            peer.run();
        } catch (Throwable t) {
            System.err.println("redisson-peer: failed: " + t);
            t.printStackTrace();
            rc = 1;
        } finally {
            if (peer != null) {
                peer.shutdown();
            }
        }
        System.out.flush();
        System.exit(rc);
    }

    private void run() throws Exception {
        Config config = new Config();
        if (cluster.isEmpty()) {
            config.useSingleServer().setAddress("redis://" + host + ":" + port);
        } else {
            config.useClusterServers().addNodeAddress(cluster.stream().map(n -> "redis://" + n).toArray(String[]::new));
        }
        redisson = Redisson.create(config);
        if (warmupSeconds > 0 && WARMED_UP.contains(workload)) {
            warmUp(); // before the measured queue is touched and before any measured clock starts
        }
        RBlockingQueue<String> queue = redisson.getBlockingQueue(QUEUE, StringCodec.INSTANCE);
        switch (workload) {
            case "produce-batch" -> produceBatch(queue);
            case "produce-single" -> produceSingle(queue);
            case "produce-waited" -> produceWaited(queue);
            case "produce-sync" -> produceSync(queue);
            case "consume" -> consume(queue);
            case "produce-consume" -> produceConsume(queue);
            case "fill" -> fill(queue);
            case "delay" -> delay(queue);
            case "idle" -> idle(queue);
            default -> throw new IllegalArgumentException("unknown workload " + workload);
        }
    }

    // ---------------------------------------------------------------------------------------------------- workloads

    private void produceBatch(RBlockingQueue<String> queue) {
        int n = messages(100_000);
        List<String> bodies = bodies(n);
        measuring();
        long t0 = System.nanoTime();
        addAll(queue, bodies);
        long t1 = System.nanoTime();
        log("produce-batch: " + n + " messages in " + ms(t1 - t0) + " ms (" + (chunk > 0 ? "chunks of " + chunk : "one addAll") + ")");
        result("{\"rate\":" + rate(n, t1 - t0) + ",\"count\":" + n + "}");
    }

    /**
     * {@code produce-waited --batch N}: {@code addAll} of N messages (one RPUSH each), each waited for before the next
     * (the bodies are built beforehand, outside the clock, as in {@code produce-batch}). Besides the rate it reports
     * Redis CPU and this process's CPU per message (PROTOCOL.md).
     */
    private void produceWaited(RBlockingQueue<String> queue) throws Exception {
        int n = messages(200_000);
        int batch = chunk > 0 ? chunk : 1_000;
        List<String> bodies = bodies(n);
        measured("produce-waited", n, "addAll calls of " + batch, () -> {
            for (int from = 0; from < n; from += batch) {
                queue.addAll(bodies.subList(from, Math.min(n, from + batch)));
            }
        });
    }

    /** A phase that must not throw checked exceptions out of the measuring frame. */
    private interface Phase {
        void run() throws Exception;
    }

    /**
     * Runs {@code phase} (sending {@code n} messages) between two readings and reports the rate, Redis CPU per message
     * ({@code INFO cpu}) and this process's CPU per message.
     */
    private void measured(String workload, int n, String how, Phase phase) throws Exception {
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        double redisBefore = redisCpuSeconds();
        long cpuBefore = os.getProcessCpuTime();
        measuring();
        long t0 = System.nanoTime();
        phase.run();
        long t1 = System.nanoTime();
        long cpu = os.getProcessCpuTime() - cpuBefore;
        double redis = redisCpuSeconds() - redisBefore;
        log(workload + ": " + n + " messages in " + how + ", " + ms(t1 - t0) + " ms");
        result(String.format(Locale.ROOT, "{\"rate\":%s,\"count\":%d,\"redisUsPerMsg\":%.3f,\"clientUsPerMsg\":%.3f}",
                rate(n, t1 - t0), n, redis * 1e6 / n, cpu / 1e3 / n));
    }

    /**
     * {@code produce-sync --threads T}: T threads, each sending one message at a time with the synchronous
     * {@code add} (one RPUSH, waited for) until N are sent between them; rate and Redis/process CPU per message.
     */
    private void produceSync(RBlockingQueue<String> queue) throws Exception {
        int n = messages(30_000);
        int threads = chunk > 0 ? chunk : 1;
        List<String> bodies = bodies(n);
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        measured("produce-sync", n, threads + " thread(s) sending one at a time", () -> {
            List<Thread> senders = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread sender = new Thread(() -> {
                    for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                        queue.add(bodies.get(i));
                    }
                }, "sync-sender-" + t);
                sender.start();
                senders.add(sender);
            }
            for (Thread sender : senders) {
                sender.join();
            }
        });
    }

    /**
     * used_cpu_sys + used_cpu_user of INFO cpu, read over a plain socket (not through the client measured); on a
     * cluster summed over its nodes.
     */
    private double redisCpuSeconds() throws java.io.IOException {
        if (cluster.isEmpty()) {
            return redisCpuSeconds(host, port);
        }
        double seconds = 0;
        for (String node : cluster) {
            int colon = node.lastIndexOf(':');
            seconds += redisCpuSeconds(node.substring(0, colon), Integer.parseInt(node.substring(colon + 1)));
        }
        return seconds;
    }

    private static double redisCpuSeconds(String host, int port) throws java.io.IOException {
        try (java.net.Socket socket = new java.net.Socket(host, port)) {
            socket.getOutputStream().write("INFO cpu\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            java.io.BufferedReader in = new java.io.BufferedReader(
                    new java.io.InputStreamReader(socket.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII));
            int length = Integer.parseInt(in.readLine().substring(1));
            char[] text = new char[length];
            for (int read = 0; read < length; ) {
                read += in.read(text, read, length - read);
            }
            double seconds = 0;
            for (String line : new String(text).split("\r?\n")) {
                if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                    seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
                }
            }
            return seconds;
        }
    }

    private void produceSingle(RBlockingQueue<String> queue) {
        int n = messages(100_000);
        List<String> bodies = bodies(n);
        measuring();
        long t0 = System.nanoTime();
        offerEach(queue, bodies);
        long t1 = System.nanoTime();
        log("produce-single: " + n + " offerAsync acknowledged in " + ms(t1 - t0) + " ms");
        result("{\"rate\":" + rate(n, t1 - t0) + ",\"count\":" + n + "}");
    }

    private void consume(RBlockingQueue<String> queue) throws InterruptedException {
        int n = messages(100_000);
        int seconds = seconds(120);
        Consumers consumers = new Consumers(queue, n, null);
        measuring();
        long t0 = System.nanoTime();
        consumers.start();
        boolean all = consumers.done.await(seconds, TimeUnit.SECONDS);
        int handled = Math.min(n, consumers.handled.get());
        long end = all ? consumers.lastHandledNanos.get() : System.nanoTime();
        log("consume: " + handled + "/" + n + " handled in " + ms(end - t0) + " ms by " + concurrency + " threads"
                + (all ? "" : " (timed out)"));
        result("{\"rate\":" + rate(handled, end - t0) + ",\"count\":" + handled + "}");
    }

    private void produceConsume(RBlockingQueue<String> queue) throws InterruptedException {
        int n = messages(100_000);
        int seconds = seconds(120);
        List<String> bodies = bodies(n);
        Consumers consumers = new Consumers(queue, n, null);
        consumers.start();
        consumers.started.await();
        Thread.sleep(200); // let every consumer sit in its blocking poll before the clock starts
        measuring();
        long t0 = System.nanoTime();
        offerEach(queue, bodies);
        long sent = System.nanoTime();
        boolean all = consumers.done.await(seconds, TimeUnit.SECONDS);
        int handled = Math.min(n, consumers.handled.get());
        long end = all ? consumers.lastHandledNanos.get() : System.nanoTime();
        log("produce-consume: sent " + n + " in " + ms(sent - t0) + " ms, " + handled + " handled after " + ms(end - t0)
                + " ms" + (all ? "" : " (timed out)"));
        result("{\"rate\":" + rate(handled, end - t0) + ",\"count\":" + handled + "}");
    }

    private void fill(RBlockingQueue<String> queue) {
        int n = messages(100_000);
        addAll(queue, bodies(n));
        log("fill: " + n + " messages queued, LLEN " + queue.size());
        result("{\"count\":" + n + "}");
    }

    private void delay(RBlockingQueue<String> queue) throws InterruptedException {
        int n = messages(10_000);
        int seconds = seconds(10);
        RDelayedQueue<String> delayed = redisson.getDelayedQueue(queue);
        try {
            long[] lateness = new long[n];
            Consumers consumers = new Consumers(queue, n, lateness);
            consumers.start();
            consumers.started.await();
            Thread.sleep(200);
            long spanMs = seconds * 1000L;
            measuring();
            long startMs = System.currentTimeMillis() + 1000; // PROTOCOL.md: due times start 1 s ahead
            long t0 = System.nanoTime();
            int late = offerDelayed(delayed, 0, n, startMs, spanMs);
            log("delay: " + n + " delayed offers acknowledged " + ms(System.nanoTime() - t0) + " ms after the first, due over "
                    + seconds + " s" + (late > 0 ? " (" + late + " were sent after their planned due time; lateness still counts from the planned due time)" : ""));
            boolean all = consumers.done.await(2L * seconds + 30, TimeUnit.SECONDS);
            int handled = Math.min(n, consumers.handled.get());
            long[] sorted = Arrays.copyOf(lateness, handled);
            Arrays.sort(sorted);
            log("delay: " + handled + "/" + n + " handled" + (all ? "" : " (timed out)")
                    + (handled > 0 ? ", min lateness " + sorted[0] + " ms" : ""));
            result("{\"p50\":" + nearestRank(sorted, 50) + ",\"p99\":" + nearestRank(sorted, 99) + ",\"max\":"
                    + (handled > 0 ? sorted[handled - 1] : 0) + ",\"count\":" + handled + "}");
        } finally {
            stopping = true;
            delayed.destroy();
        }
    }

    private void idle(RBlockingQueue<String> queue) throws InterruptedException {
        int seconds = seconds(12);
        // the delayed front exists too (its transfer task runs), as it would for a queue that takes delayed messages
        RDelayedQueue<String> delayed = redisson.getDelayedQueue(queue);
        try {
            Consumers consumers = new Consumers(queue, Integer.MAX_VALUE, null);
            consumers.useTake = true;
            consumers.start();
            consumers.started.await();
            Thread.sleep(200);
            System.out.println("READY");
            System.out.flush();
            Thread.sleep(seconds * 1000L);
            result("{\"count\":" + consumers.handled.get() + "}");
        } finally {
            stopping = true;
            delayed.destroy();
        }
    }

    // ---------------------------------------------------------------------------------------------------- warm-up

    /**
     * JIT warm-up ({@code --warmup-seconds}, PROTOCOL.md): for W seconds, runs the measured workload's own code paths
     * (the same {@link Consumers}, {@code addAll}, {@code offerAsync}, delayed {@code offerAsync}) against
     * {@link #WARMUP_QUEUE}, so that the measured phase runs compiled code instead of the interpreter. Nothing of it
     * is measured; afterwards its consumers are stopped and joined and every warm-up key is deleted.
     */
    private void warmUp() throws InterruptedException {
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.SECONDS.toNanos(warmupSeconds);
        RBlockingQueue<String> queue = redisson.getBlockingQueue(WARMUP_QUEUE, StringCodec.INSTANCE);
        RDelayedQueue<String> delayed = workload.equals("delay") ? redisson.getDelayedQueue(queue) : null;
        // delay: the lateness path runs too (new long[0]: computed, not kept)
        Consumers consumers = new Consumers(queue, Integer.MAX_VALUE, delayed != null ? new long[0] : null);
        int sent = 0;
        try {
            consumers.start();
            consumers.started.await();
            while (before(deadline)) {
                if (delayed != null) {
                    // a round of 1,000 delayed messages due over the next second, then wait for them
                    offerDelayed(delayed, sent, 1_000, System.currentTimeMillis(), 1_000);
                    sent += 1_000;
                    long until = deadline + TimeUnit.SECONDS.toNanos(2);
                    while (consumers.handled.get() < sent && before(until)) {
                        Thread.sleep(5);
                    }
                    continue;
                }
                // as produce-batch; produce-waited: addAll calls of the measured size (--batch)
                int bulk = workload.equals("produce-waited") ? Math.max(WARMUP_ROUND, chunk) : WARMUP_ROUND;
                addAll(queue, bodies(sent, bulk));
                sent += bulk;
                for (int i = 0; i < WARMUP_ROUND && before(deadline); i += 1_000) {
                    offerEach(queue, bodies(sent, 1_000)); // as produce-single, in windows to check the deadline
                    sent += 1_000;
                }
            }
        } finally {
            consumers.stop();
            if (delayed != null) {
                delayed.destroy();
            }
            // the list and, for delay, Redisson's delayed-queue zset/list ("redisson_delay_queue*:{<name>}")
            redisson.getKeys().deleteByPattern("*" + WARMUP_QUEUE + "*");
        }
        log("warmed up: " + sent + " sent, " + consumers.handled.get() + " handled in " + ms(System.nanoTime() - t0)
                + " ms");
    }

    // ---------------------------------------------------------------------------------------------------- consumers

    /**
     * {@code concurrency} threads, each looping a blocking poll (BLPOP) on the queue; no-op handler. A target of
     * {@code Integer.MAX_VALUE} means: run until {@link #stop} (or the end of the process).
     */
    private final class Consumers {
        final RBlockingQueue<String> queue;
        final int target;
        final long[] lateness; // null: no lateness recording
        final AtomicInteger handled = new AtomicInteger();
        final AtomicLong lastHandledNanos = new AtomicLong();
        final CountDownLatch done;
        final CountDownLatch started = new CountDownLatch(concurrency);
        final List<Thread> threads = new ArrayList<>();
        boolean useTake;
        volatile boolean stopped;

        Consumers(RBlockingQueue<String> queue, int target, long[] lateness) {
            this.queue = queue;
            this.target = target;
            this.lateness = lateness;
            this.done = new CountDownLatch(target == Integer.MAX_VALUE ? 1 : target);
        }

        void start() {
            for (int t = 0; t < concurrency; t++) {
                Thread thread = new Thread(this::loop, "redisson-consumer-" + t);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
        }

        /** Ends these consumers (each notices within its 1 s poll timeout) and joins their threads. */
        void stop() throws InterruptedException {
            stopped = true;
            for (Thread thread : threads) {
                thread.join();
            }
        }

        private void loop() {
            started.countDown();
            while (!stopping && !stopped && (target == Integer.MAX_VALUE || done.getCount() > 0)) {
                String msg;
                try {
                    msg = useTake ? queue.take() : queue.poll(1, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    if (!stopping) {
                        log("consumer error: " + e);
                    }
                    return;
                }
                if (msg == null) {
                    continue;
                }
                long nowMs = System.currentTimeMillis();
                int k = handled.getAndIncrement();
                if (lateness != null) {
                    long late = nowMs - dueOf(msg);
                    if (k < lateness.length) {
                        lateness[k] = late;
                    }
                }
                lastHandledNanos.accumulateAndGet(System.nanoTime(), Math::max);
                done.countDown();
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    /** One {@code offerAsync} (RPUSH) per message, then waits for every ack. */
    private static void offerEach(RBlockingQueue<String> queue, List<String> bodies) {
        CompletableFuture<?>[] acks = new CompletableFuture<?>[bodies.size()];
        for (int i = 0; i < acks.length; i++) {
            acks[i] = queue.offerAsync(bodies.get(i)).toCompletableFuture();
        }
        CompletableFuture.allOf(acks).join();
    }

    /**
     * Sends the messages {@code from..from+n-1} through the delayed queue, due uniformly over {@code spanMs} after
     * {@code startMs} (each body carries its planned due time); waits for every ack; returns how many were sent late.
     */
    private static int offerDelayed(RDelayedQueue<String> delayed, int from, int n, long startMs, long spanMs) {
        // offerAsync (same call as offer, not waiting per message) so that sending never lags the due times
        CompletableFuture<?>[] acks = new CompletableFuture<?>[n];
        int late = 0;
        for (int i = 0; i < n; i++) {
            long planned = startMs + Math.round((i + 1) * (double) spanMs / n);
            long now = System.currentTimeMillis();
            if (planned < now) {
                late++; // the sender fell behind: it still counts from the planned due time, as for every peer
            }
            long delayMs = Math.max(0, planned - now);
            String body = body(from + i);
            String msg = body.substring(0, body.length() - 1) + ",\"due\":" + planned + "}";
            acks[i] = delayed.offerAsync(msg, delayMs, TimeUnit.MILLISECONDS).toCompletableFuture();
        }
        CompletableFuture.allOf(acks).join();
        return late;
    }

    private void addAll(RBlockingQueue<String> queue, List<String> bodies) {
        if (chunk <= 0 || chunk >= bodies.size()) {
            queue.addAll(bodies); // one RPUSH with every element
            return;
        }
        for (int from = 0; from < bodies.size(); from += chunk) {
            queue.addAll(bodies.subList(from, Math.min(bodies.size(), from + chunk)));
        }
    }

    private int messages(int dflt) {
        return messagesArg != null ? messagesArg : dflt;
    }

    private int seconds(int dflt) {
        return secondsArg != null ? secondsArg : dflt;
    }

    /** {@code {"id":i,"body":"<80 characters>"}}, each body distinct (it starts with the id). */
    static String body(int i) {
        String head = "m" + i + "-";
        return "{\"id\":" + i + ",\"body\":\"" + head + FILLER.substring(0, 80 - head.length()) + "\"}";
    }

    static List<String> bodies(int n) {
        return bodies(0, n);
    }

    /** The bodies of ids {@code from..from+n-1}. */
    static List<String> bodies(int from, int n) {
        List<String> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(body(from + i));
        }
        return list;
    }

    /** Whether {@code System.nanoTime()} is still before {@code deadlineNanos}. */
    private static boolean before(long deadlineNanos) {
        return System.nanoTime() - deadlineNanos < 0;
    }

    static long dueOf(String msg) {
        int at = msg.lastIndexOf("\"due\":");
        if (at < 0) {
            return System.currentTimeMillis();
        }
        int from = at + 6;
        int to = from;
        while (to < msg.length() && Character.isDigit(msg.charAt(to))) {
            to++;
        }
        return Long.parseLong(msg.substring(from, to));
    }

    static long nearestRank(long[] sorted, int percentile) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(percentile / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }

    private static String rate(int count, long nanos) {
        double secs = Math.max(nanos, 1) / 1e9;
        return String.format(Locale.ROOT, "%.1f", count / secs);
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** The measured phase starts (PROTOCOL.md): the orchestrator reads Redis's CPU and the machine's load from here. */
    private static void measuring() {
        System.out.println("MEASURING");
        System.out.flush();
    }

    private static void result(String json) {
        System.out.println("RESULT " + json);
        System.out.flush();
    }

    private static void log(String line) {
        System.err.println("redisson-peer: " + line);
    }

    private void shutdown() {
        stopping = true;
        if (redisson != null) {
            try {
                redisson.shutdown(0, 2, TimeUnit.SECONDS);
            } catch (RuntimeException e) {
                log("shutdown: " + e);
            }
        }
    }
}
