package io.rmq.benchmarks.peers.dyno;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.netflix.dyno.queues.DynoQueue;
import com.netflix.dyno.queues.Message;
import com.netflix.dyno.queues.redis.RedisQueues;
import com.netflix.dyno.queues.shard.SingleShardSupplier;
import com.netflix.servo.DefaultMonitorRegistry;
import com.netflix.servo.monitor.Monitor;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.commands.JedisCommands;

/**
 * Benchmark peer for Netflix dyno-queues (see rmq-benchmarks/PROTOCOL.md).
 *
 * <pre>
 * java -jar dyno-peer.jar &lt;workload&gt; --host H --port P [--messages N] [--concurrency C] [--seconds S]
 *                         [--warmup-seconds W] [--chunk K] [--pop-count K] [--pop-wait-ms W]
 * </pre>
 *
 * Queue: the production recipe {@code RedisQueues} / {@code RedisDynoQueue} (v1, no pipelining) over one plain Redis.
 * It takes Jedis {@link JedisCommands} for its "quorum" and "non-quorum" connections; against plain Redis both are the
 * same {@link JedisPool}, wrapped so that every call borrows a connection (what Netflix Conductor's standalone-Redis
 * mode does with its {@code JedisStandalone}). One shard ("a"). Layout per queue: a hash with the message JSON, a
 * sorted set scored by due time (the queue shard), a sorted set of unacked ids.
 * <p>
 * Options beyond the protocol: {@code --chunk} messages per {@code push(List)} (default 1000), {@code --pop-count}
 * / {@code --pop-wait-ms}: each consumer thread loops {@code pop(count, wait, MILLISECONDS)} + {@code ack(id)}
 * (defaults 10 and 100). {@code --warmup-seconds W} (default 0): a JIT warm-up on separate keys before the measured
 * phase, see {@link #warmUp}.
 */
public final class DynoPeer {

    static final String KEY_PREFIX = "bench-dyno";
    static final String QUEUE = "queue";
    /** The warm-up queue ({@code QUEUE + "-warmup"}: its own shard, unack and message keys), deleted afterwards. */
    static final String WARMUP_QUEUE = QUEUE + "-warmup";
    /** Messages per bulk and per one-at-a-time phase of a W1 warm-up round (PROTOCOL.md). */
    static final int WARMUP_ROUND = 1_000;
    /** The workloads with a warm-up ({@code fill} and {@code idle} never have one). */
    static final List<String> WARMED_UP = List.of("produce-batch", "produce-single", "consume", "produce-consume", "delay");
    static final int UNACK_TIMEOUT_MS = 60_000;
    static final int UNACK_HANDLER_INTERVAL_MS = 60_000;

    private static final String FILLER =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

    private final String workload;
    private final String host;
    private final int port;
    private final Integer messagesArg;
    private final int concurrency;
    private final Integer secondsArg;
    private final int chunk;
    private final int popCount;
    private final int popWaitMs;
    private final int warmupSeconds;

    private JedisPool pool;
    private RedisQueues queues;
    private volatile boolean stopping;

    private DynoPeer(String[] args) {
        if (args.length < 1) {
            throw new IllegalArgumentException(
                    "usage: <workload> --host H --port P [--messages N] [--concurrency C] [--seconds S] [--warmup-seconds W]");
        }
        workload = args[0];
        String h = "127.0.0.1";
        int p = 6379;
        Integer n = null;
        int c = 8;
        Integer s = null;
        int k = 1000;
        int pc = 10;
        int pw = 100;
        int w = 0;
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
                case "--chunk" -> k = Integer.parseInt(v);
                case "--pop-count" -> pc = Integer.parseInt(v);
                case "--pop-wait-ms" -> pw = Integer.parseInt(v);
                case "--warmup-seconds" -> w = Integer.parseInt(v);
                default -> log("ignoring unknown option " + a + " " + v);
            }
        }
        host = h;
        port = p;
        messagesArg = n;
        concurrency = Math.max(1, c);
        secondsArg = s;
        chunk = Math.max(1, k);
        popCount = Math.max(1, pc);
        popWaitMs = Math.max(0, pw);
        warmupSeconds = Math.max(0, w);
    }

    public static void main(String[] args) {
        int rc = 0;
        DynoPeer peer = null;
        try {
            peer = new DynoPeer(args);
            peer.run();
        } catch (Throwable t) {
            System.err.println("dyno-peer: failed: " + t);
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
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(concurrency + 8);
        config.setMaxIdle(concurrency + 8);
        pool = new JedisPool(config, host, port, 10_000);
        JedisCommands conn = pooled(pool);
        queues = new RedisQueues(conn, conn, KEY_PREFIX, new SingleShardSupplier("a"), UNACK_TIMEOUT_MS,
                UNACK_HANDLER_INTERVAL_MS);
        if (warmupSeconds > 0 && WARMED_UP.contains(workload)) {
            warmUp(); // before the measured queue is touched and before any measured clock starts
        }
        DynoQueue queue = queues.get(QUEUE);
        switch (workload) {
            case "produce-batch" -> produceBatch(queue);
            case "produce-single" -> produceSingle(queue);
            case "consume" -> consume(queue);
            case "produce-consume" -> produceConsume(queue);
            case "fill" -> fill(queue);
            case "delay" -> delay(queue);
            case "idle" -> idle(queue);
            default -> throw new IllegalArgumentException("unknown workload " + workload);
        }
    }

    /**
     * A thread-safe {@link JedisCommands} over a {@link JedisPool}: each call borrows a connection, runs the same
     * command on it and returns it (the library needs one shared {@code JedisCommands}; a bare {@link Jedis} is a
     * single, non-thread-safe connection).
     */
    static JedisCommands pooled(JedisPool pool) {
        return (JedisCommands) Proxy.newProxyInstance(DynoPeer.class.getClassLoader(),
                new Class<?>[] {JedisCommands.class}, (proxy, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return switch (method.getName()) {
                            case "equals" -> proxy == args[0];
                            case "hashCode" -> System.identityHashCode(proxy);
                            default -> "PooledJedisCommands(" + pool + ")";
                        };
                    }
                    try (Jedis jedis = pool.getResource()) {
                        return method.invoke(jedis, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    // ---------------------------------------------------------------------------------------------------- workloads

    private void produceBatch(DynoQueue queue) {
        int n = messages(100_000);
        List<Message> msgs = messagesFor(n);
        long t0 = System.nanoTime();
        pushAll(queue, msgs);
        long t1 = System.nanoTime();
        log("produce-batch: " + n + " messages in " + ms(t1 - t0) + " ms (push(List) chunks of " + chunk + ")");
        result("{\"rate\":" + rate(n, t1 - t0) + ",\"count\":" + n + "}");
    }

    private void produceSingle(DynoQueue queue) {
        int n = messages(100_000);
        List<Message> msgs = messagesFor(n);
        long t0 = System.nanoTime();
        pushEach(queue, msgs);
        long t1 = System.nanoTime();
        log("produce-single: " + n + " synchronous push calls in " + ms(t1 - t0) + " ms");
        result("{\"rate\":" + rate(n, t1 - t0) + ",\"count\":" + n + "}");
    }

    private void consume(DynoQueue queue) throws InterruptedException {
        int n = messages(100_000);
        int seconds = seconds(120);
        Consumers consumers = new Consumers(queue, n, null);
        long t0 = System.nanoTime();
        consumers.start();
        boolean all = consumers.done.await(seconds, TimeUnit.SECONDS);
        int handled = Math.min(n, consumers.handled.get());
        long end = all ? consumers.lastHandledNanos.get() : System.nanoTime();
        log("consume: " + handled + "/" + n + " handled in " + ms(end - t0) + " ms by " + concurrency
                + " threads, pop(" + popCount + ", " + popWaitMs + " ms)" + (all ? "" : " (timed out)") + misses());
        result("{\"rate\":" + rate(handled, end - t0) + ",\"count\":" + handled + "}");
    }

    private void produceConsume(DynoQueue queue) throws InterruptedException {
        int n = messages(100_000);
        int seconds = seconds(120);
        List<Message> msgs = messagesFor(n);
        Consumers consumers = new Consumers(queue, n, null);
        consumers.start();
        consumers.started.await();
        Thread.sleep(200);
        long t0 = System.nanoTime();
        pushEach(queue, msgs);
        long sent = System.nanoTime();
        boolean all = consumers.done.await(seconds, TimeUnit.SECONDS);
        int handled = Math.min(n, consumers.handled.get());
        long end = all ? consumers.lastHandledNanos.get() : System.nanoTime();
        log("produce-consume: sent " + n + " in " + ms(sent - t0) + " ms, " + handled + " handled after " + ms(end - t0)
                + " ms" + (all ? "" : " (timed out)") + misses());
        result("{\"rate\":" + rate(handled, end - t0) + ",\"count\":" + handled + "}");
    }

    private void fill(DynoQueue queue) {
        int n = messages(100_000);
        pushAll(queue, messagesFor(n));
        log("fill: " + n + " messages queued, size " + queue.size());
        result("{\"count\":" + n + "}");
    }

    private void delay(DynoQueue queue) throws InterruptedException {
        int n = messages(10_000);
        int seconds = seconds(10);
        long[] lateness = new long[n];
        Consumers consumers = new Consumers(queue, n, lateness);
        consumers.start();
        consumers.started.await();
        Thread.sleep(200);
        long spanMs = seconds * 1000L;
        long startMs = System.currentTimeMillis() + 1000; // PROTOCOL.md: due times start 1 s ahead
        long t0 = System.nanoTime();
        int late = pushDelayed(queue, 0, n, startMs, spanMs);
        log("delay: " + n + " delayed pushes done " + ms(System.nanoTime() - t0) + " ms after the first, due over "
                + seconds + " s" + (late > 0 ? " (" + late + " were sent after their planned due time; lateness still counts from the planned due time)" : ""));
        boolean all = consumers.done.await(2L * seconds + 30, TimeUnit.SECONDS);
        int handled = Math.min(n, consumers.handled.get());
        long[] sorted = Arrays.copyOf(lateness, handled);
        Arrays.sort(sorted);
        log("delay: " + handled + "/" + n + " handled" + (all ? "" : " (timed out)")
                + (handled > 0 ? ", min lateness " + sorted[0] + " ms" : "") + misses());
        result("{\"p50\":" + nearestRank(sorted, 50) + ",\"p99\":" + nearestRank(sorted, 99) + ",\"max\":"
                + (handled > 0 ? sorted[handled - 1] : 0) + ",\"count\":" + handled + "}");
    }

    private void idle(DynoQueue queue) throws InterruptedException {
        int seconds = seconds(12);
        Consumers consumers = new Consumers(queue, Integer.MAX_VALUE, null);
        consumers.start();
        consumers.started.await();
        Thread.sleep(200);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(seconds * 1000L);
        result("{\"count\":" + consumers.handled.get() + "}");
    }

    // ---------------------------------------------------------------------------------------------------- warm-up

    /**
     * JIT warm-up ({@code --warmup-seconds}, PROTOCOL.md): for W seconds, runs the measured workload's own code paths
     * (the same {@link Consumers}, {@code push(List)} chunks, single pushes, delayed pushes) against
     * {@link #WARMUP_QUEUE}, so that the measured phase runs compiled code instead of the interpreter. Nothing of it
     * is measured; afterwards its consumers are stopped and joined, the queue is cleared and closed and every
     * warm-up key is deleted.
     */
    private void warmUp() throws InterruptedException {
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.SECONDS.toNanos(warmupSeconds);
        boolean delay = workload.equals("delay");
        DynoQueue queue = queues.get(WARMUP_QUEUE);
        // delay: the lateness path runs too (new long[0]: computed, not kept)
        Consumers consumers = new Consumers(queue, Integer.MAX_VALUE, delay ? new long[0] : null);
        int sent = 0; // also the next message id: ids must be unique per queue
        try {
            consumers.start();
            consumers.started.await();
            while (before(deadline)) {
                if (delay) {
                    // a round of 1,000 delayed messages due over the next second, then wait for them
                    pushDelayed(queue, sent, 1_000, System.currentTimeMillis(), 1_000);
                    sent += 1_000;
                    long until = deadline + TimeUnit.SECONDS.toNanos(2);
                    while (consumers.handled.get() < sent && before(until)) {
                        Thread.sleep(5);
                    }
                    continue;
                }
                List<Message> batch = messagesFor(sent, WARMUP_ROUND);
                for (int from = 0; from < batch.size() && before(deadline); from += chunk) {
                    List<Message> part = batch.subList(from, Math.min(batch.size(), from + chunk));
                    pushAll(queue, part); // as produce-batch (one push(List) per chunk), deadline checked per chunk
                    sent += part.size();
                }
                for (int i = 0; i < WARMUP_ROUND && before(deadline); i += 1_000) {
                    pushEach(queue, messagesFor(sent, 1_000)); // as produce-single, in windows to check the deadline
                    sent += 1_000;
                }
            }
        } finally {
            consumers.stop();
            try {
                queue.clear(); // its queue shard, unack set and message hash
                queue.close(); // its unack scheduler and monitor executor
            } catch (IOException e) {
                log("warm-up close: " + e);
            }
            try (Jedis jedis = pool.getResource()) {
                Set<String> left = jedis.keys(KEY_PREFIX + ".*." + WARMUP_QUEUE + "*");
                if (!left.isEmpty()) {
                    jedis.del(left.toArray(new String[0]));
                }
            }
        }
        log("warmed up: " + sent + " sent, " + consumers.handled.get() + " handled in " + ms(System.nanoTime() - t0)
                + " ms");
    }

    // ---------------------------------------------------------------------------------------------------- consumers

    /**
     * {@code concurrency} threads, each looping {@code pop(popCount, popWaitMs)} then {@code ack} per message. A target
     * of {@code Integer.MAX_VALUE} means: run until {@link #stop} (or the end of the process).
     */
    private final class Consumers {
        final DynoQueue queue;
        final int target;
        final long[] lateness; // null: no lateness recording
        final AtomicInteger handled = new AtomicInteger();
        final AtomicLong lastHandledNanos = new AtomicLong();
        final CountDownLatch done;
        final CountDownLatch started = new CountDownLatch(concurrency);
        final List<Thread> threads = new ArrayList<>();
        volatile boolean stopped;

        Consumers(DynoQueue queue, int target, long[] lateness) {
            this.queue = queue;
            this.target = target;
            this.lateness = lateness;
            this.done = new CountDownLatch(target == Integer.MAX_VALUE ? 1 : target);
        }

        void start() {
            for (int t = 0; t < concurrency; t++) {
                Thread thread = new Thread(this::loop, "dyno-consumer-" + t);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
        }

        /** Ends these consumers (each notices after its current pop and acks) and joins their threads. */
        void stop() throws InterruptedException {
            stopped = true;
            for (Thread thread : threads) {
                thread.join();
            }
        }

        private void loop() {
            started.countDown();
            while (!stopping && !stopped && (target == Integer.MAX_VALUE || done.getCount() > 0)) {
                List<Message> popped;
                try {
                    popped = queue.pop(popCount, popWaitMs, TimeUnit.MILLISECONDS);
                } catch (RuntimeException e) {
                    if (stopping) {
                        return;
                    }
                    log("consumer error: " + e);
                    sleepQuietly(100);
                    continue;
                }
                for (Message m : popped) {
                    long nowMs = System.currentTimeMillis();
                    try {
                        queue.ack(m.getId());
                    } catch (RuntimeException e) {
                        if (stopping) {
                            return;
                        }
                        log("ack error: " + e);
                    }
                    int k = handled.getAndIncrement();
                    if (lateness != null) {
                        long late = nowMs - dueOf(m.getPayload());
                        if (k < lateness.length) {
                            lateness[k] = late;
                        }
                    }
                    lastHandledNanos.accumulateAndGet(System.nanoTime(), Math::max);
                    done.countDown();
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    /** No async API: one synchronous {@code push} per message. */
    private static void pushEach(DynoQueue queue, List<Message> msgs) {
        for (Message m : msgs) {
            queue.push(Collections.singletonList(m));
        }
    }

    /**
     * Pushes the messages (ids) {@code from..from+n-1} one per call, due uniformly over {@code spanMs} after
     * {@code startMs} (each body carries its planned due time); returns how many were sent after their due time.
     */
    private static int pushDelayed(DynoQueue queue, int from, int n, long startMs, long spanMs) {
        int late = 0;
        for (int i = 0; i < n; i++) {
            long planned = startMs + Math.round((i + 1) * (double) spanMs / n);
            long now = System.currentTimeMillis();
            if (planned < now) {
                late++; // the sender fell behind: it still counts from the planned due time, as for every peer
            }
            long delayMs = Math.max(0, planned - now);
            String body = body(from + i);
            Message m = new Message(String.valueOf(from + i),
                    body.substring(0, body.length() - 1) + ",\"due\":" + planned + "}");
            m.setTimeout(delayMs, TimeUnit.MILLISECONDS); // stored in ms: score = now + timeout (+ priority/100)
            queue.push(Collections.singletonList(m));
        }
        return late;
    }

    private void pushAll(DynoQueue queue, List<Message> msgs) {
        for (int from = 0; from < msgs.size(); from += chunk) {
            queue.push(msgs.subList(from, Math.min(msgs.size(), from + chunk)));
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

    /** Message id = the index (ids must be unique per queue: they are the sorted-set members and hash fields). */
    static List<Message> messagesFor(int n) {
        return messagesFor(0, n);
    }

    /** The messages (ids) {@code from..from+n-1}. */
    static List<Message> messagesFor(int from, int n) {
        List<Message> list = new ArrayList<>(n);
        for (int i = from; i < from + n; i++) {
            list.add(new Message(String.valueOf(i), body(i)));
        }
        return list;
    }

    /** Whether {@code System.nanoTime()} is still before {@code deadlineNanos}. */
    private static boolean before(long deadlineNanos) {
        return System.nanoTime() - deadlineNanos < 0;
    }

    static long dueOf(String payload) {
        int at = payload == null ? -1 : payload.lastIndexOf("\"due\":");
        if (at < 0) {
            return System.currentTimeMillis();
        }
        int from = at + 6;
        int to = from;
        while (to < payload.length() && Character.isDigit(payload.charAt(to))) {
            to++;
        }
        return Long.parseLong(payload.substring(from, to));
    }

    static long nearestRank(long[] sorted, int percentile) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(percentile / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }

    /**
     * The library's own miss counter (pops that lost a race for a prefetched id) of the measured queue, for the log
     * (the warm-up queue registers one too; servo keeps it registered after close).
     */
    private static String misses() {
        try {
            for (Monitor<?> m : DefaultMonitorRegistry.getInstance().getRegisteredMonitors()) {
                if ("queue_miss".equals(m.getConfig().getName())
                        && QUEUE.equals(m.getConfig().getTags().getValue("queueName"))) {
                    return ", queue_miss " + m.getValue();
                }
            }
        } catch (RuntimeException e) {
            // metrics are only for the log
        }
        return "";
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String rate(int count, long nanos) {
        double secs = Math.max(nanos, 1) / 1e9;
        return String.format(Locale.ROOT, "%.1f", count / secs);
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private static void result(String json) {
        System.out.println("RESULT " + json);
        System.out.flush();
    }

    private static void log(String line) {
        System.err.println("dyno-peer: " + line);
    }

    private void shutdown() {
        stopping = true;
        if (queues != null) {
            try {
                queues.close();
            } catch (IOException | RuntimeException e) {
                log("close: " + e);
            }
        }
        if (pool != null) {
            pool.close();
        }
    }
}
